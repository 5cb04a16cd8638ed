"""Where the benchmark's games run (controller/bench/engines.py): local processes and a Ray
instance started here give every game back, play a game whose worker died once more, and report
a game that failed as lost while the others go on. The games have no physics
(tests/controller/fake_games.py); the identity of real games across engines is
tests/controller/test_bench_ray.py's."""

import sys

import pytest

from controller.bench import engines
from controller.bench.engines import (EngineError, InProcess, LocalProcesses, Lost, RayCluster,
                                      code_fingerprint)
from tests.controller import fake_games


@pytest.fixture(scope="module")
def ray_cluster():
    cluster = RayCluster("local", cpus=2)
    yield cluster
    cluster.close()


@pytest.fixture(params=["local", "ray"])
def engine(request):
    """An engine whose games run in other processes (a game there may kill its worker)."""
    if request.param == "ray":
        return request.getfixturevalue("ray_cluster")
    return LocalProcesses(2)


@pytest.fixture(params=["here", "local", "ray"])
def any_engine(request):
    if request.param == "here":
        return InProcess()
    if request.param == "ray":
        return request.getfixturevalue("ray_cluster")
    return LocalProcesses(2)


def test_every_game_comes_back_once(any_engine, tmp_path):
    work = [(str(tmp_path), seed, "ours") for seed in range(5)]
    games = list(any_engine.run(fake_games.quick, work))
    assert sorted(g.seed for g in games) == list(range(5))
    assert all(fake_games.attempts(tmp_path, seed) == 1 for seed in range(5))


def test_a_game_whose_worker_died_is_played_once_more(engine, tmp_path):
    work = [(str(tmp_path), seed, "ours") for seed in range(3)]
    games = list(engine.run(fake_games.crash_first, work))
    assert sorted(g.seed for g in games) == [0, 1, 2]
    assert all(fake_games.attempts(tmp_path, seed) == 2 for seed in range(3))


def test_a_worker_that_dies_twice_loses_its_game_and_the_others_go_on(engine, tmp_path):
    outcomes = list(engine.run(fake_games.crash_always, [(str(tmp_path), 1, "ours")]))
    outcomes += list(engine.run(fake_games.quick, [(str(tmp_path), 2, "ours")]))
    lost, game = outcomes
    assert isinstance(lost, Lost) and lost.job == (str(tmp_path), 1, "ours")
    assert "2 times" in lost.reason and fake_games.attempts(tmp_path, 1) == 2
    assert game.seed == 2


def test_a_game_that_raises_is_lost_at_once_with_its_error(any_engine, tmp_path):
    work = [(str(tmp_path), 1, "ours"), (str(tmp_path), 2, "ours")]
    outcomes = list(any_engine.run(fake_games.raises, work[:1])) + list(
        any_engine.run(fake_games.quick, work[1:]))
    lost, game = outcomes
    assert isinstance(lost, Lost)
    assert "ValueError: no block would come out" in lost.reason and "fake_games.py" in lost.reason
    assert fake_games.attempts(tmp_path, 1) == 1          # its own error: not played again
    assert game.seed == 2


def test_a_local_ray_instance_serves_this_machine_only(ray_cluster):
    assert ray_cluster.address.startswith("127.0.0.1:")
    assert ray_cluster.cpus == 2 and "Ray at 127.0.0.1" in ray_cluster.description


def test_a_node_that_cannot_import_the_game_stops_the_run(ray_cluster, tmp_path):
    # a module the workers cannot import stands for a node without the project installed
    sys.path.insert(0, str(tmp_path))
    try:
        (tmp_path / "only_here.py").write_text("def play(job):\n    return None\n")
        import only_here
        (tmp_path / "only_here.py").unlink()
        with pytest.raises(EngineError, match="install this commit"):
            list(ray_cluster.run(only_here.play, [("job",)]))
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("only_here", None)


def test_stopping_the_reading_ends_the_local_workers(tmp_path):
    engine = LocalProcesses(2)
    run = engine.run(fake_games.quick, [(str(tmp_path), seed, "ours") for seed in range(6)])
    next(run)
    run.close()                  # the caller stopped (Ctrl-C unwinds the same way)
    import multiprocessing
    assert not [p for p in multiprocessing.active_children() if p.is_alive()]


def test_in_process_games_run_here_in_order(tmp_path):
    games = list(InProcess().run(fake_games.quick, [(str(tmp_path), s, "x") for s in (3, 1)]))
    assert [g.seed for g in games] == [3, 1]


def test_every_game_runs_with_one_thread_of_linear_algebra(any_engine, tmp_path):
    (game,) = any_engine.run(fake_games.blas_threads, [(str(tmp_path), 1, "ours")])
    assert game.ended_by == "blas threads 1"


def test_a_game_played_by_other_code_stops_the_run(tmp_path, monkeypatch):
    # as if the source changed on disk while the sweep ran: the worker's fingerprint differs
    monkeypatch.setattr(engines, "attempt", lambda play, job: ("not-this-code", "done", play(job)))
    with pytest.raises(EngineError, match="other code"):
        list(engines.InProcess().run(fake_games.quick, [(str(tmp_path), 1, "ours")]))
    answer = ("other", "done", fake_games.quick((str(tmp_path), 2, "ours")))
    with pytest.raises(EngineError, match="fingerprint other, here mine"):
        engines.outcome(("job",), answer, "mine")


def test_the_code_fingerprint_is_steady():
    assert code_fingerprint() == code_fingerprint() and len(code_fingerprint()) == 16
