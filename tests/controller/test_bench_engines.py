"""Where the benchmark's games run (controller/bench/engines.py): this process, local processes
and a Ray instance started here give every game back, play a game whose worker died once more,
and report a game that failed as lost while the others go on (games with no physics,
tests/controller/fake_games.py); and real games played on each are the same games.

One Ray instance serves the module (each start busies the machine for seconds); its processes run
at a lower priority, so that the suite's tests that time a serial link beside it keep their pace.
The tests that need it are slow: `make check` leaves them out.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from controller.bench import engines
from controller.bench.engines import (EngineError, InProcess, LocalProcesses, Lost, RayCluster,
                                      code_fingerprint)
from controller.bench.game import GameRecord, measure
from hardware.cells import DEFAULT_CELL
from tests.controller import fake_games

RAY = pytest.param("ray", marks=pytest.mark.slow)


@pytest.fixture(scope="module")
def ray_cluster():
    cluster = RayCluster("local", cpus=2)
    _lower_priority(os.getpid(), 10)
    yield cluster
    cluster.close()


def _lower_priority(parent: int, niceness: int) -> None:
    """`niceness` for every process below `parent` (Ray's, started by ray.init), so the workers
    they start later have it too. This process keeps its own."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    todo = list(children.get(parent, []))
    while todo:
        pid = todo.pop()
        try:
            os.setpriority(os.PRIO_PROCESS, pid, niceness)
        except OSError:
            pass                    # ended meanwhile
        todo += children.get(pid, [])


@pytest.fixture(params=["local", RAY])
def engine(request):
    """An engine whose games run in other processes (a game there may kill its worker)."""
    if request.param == "ray":
        return request.getfixturevalue("ray_cluster")
    return LocalProcesses(2)


@pytest.fixture(params=["here", "local", RAY])
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


@pytest.mark.slow
def test_a_local_ray_instance_serves_this_machine_only(ray_cluster):
    assert ray_cluster.address.startswith("127.0.0.1:")
    assert ray_cluster.cpus == 2 and "Ray at 127.0.0.1" in ray_cluster.description


@pytest.mark.slow
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


def test_the_fingerprint_changes_with_the_source_and_not_with_what_a_run_leaves(tmp_path):
    package = tmp_path / "pkg"
    (package / "cells").mkdir(parents=True)
    (package / "game.py").write_text("SPEED = 1\n")
    (package / "cells" / "default.toml").write_text("[cell]\n")
    before = engines.tree_digest(package, "pkg").hexdigest()
    # what runs and editors leave beside the source
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "game.cpython-311.pyc").write_bytes(b"\0")
    (package / "cells" / "default.calib").mkdir()
    (package / "cells" / "default.calib" / "left.json").write_text("{}")
    (package / ".#game.py").symlink_to("nowhere-dangling")
    (package / "notes.txt").write_text("not code")
    assert engines.tree_digest(package, "pkg").hexdigest() == before
    (package / "game.py").write_text("SPEED = 2\n")
    assert engines.tree_digest(package, "pkg").hexdigest() != before
    (package / "game.py").write_text("SPEED = 1\n")
    (package / "cells" / "default.toml").rename(package / "cells" / "other.toml")
    assert engines.tree_digest(package, "pkg").hexdigest() != before


# --- real games -----------------------------------------------------------------------------------

# two games, one a policy: the two local processes play one each
SEEDS = [1]
POLICIES = ("ours", "oracle")


def _without_costs(figures: dict) -> dict:
    figures = {k: v for k, v in figures.items() if k not in ("wall_s", "engine")}
    for row in figures["policies"].values():
        row["games_detail"] = [GameRecord.from_dict(g).outcome() for g in row["games_detail"]]
    return figures


@pytest.mark.slow
def test_here_local_processes_and_ray_play_the_same_games(ray_cluster):
    """A game's result depends only on its seed, its policy and the code, not on where it ran:
    the same real games (fast mode, the product's turn procedure, the robot's policy and the
    oracle) give identical records, figures and comparisons; only the costs (wall times) and the
    engine's name differ."""
    def sweep(engine):
        return measure(str(DEFAULT_CELL), SEEDS, max_turns=1, policies=POLICIES, engine=engine)
    here, local, on_ray = sweep(InProcess()), sweep(LocalProcesses(2)), sweep(ray_cluster)
    assert local["engine"] == "2 local processes" and on_ray["engine"].startswith("Ray at 127.0.0.1")
    assert not here["lost"] and not local["lost"] and not on_ray["lost"]
    for policy in POLICIES:
        games = local["policies"][policy]["games_detail"]
        assert [g["seed"] for g in games] == SEEDS and all(len(g["turns"]) == 1 for g in games)
        assert all(g["wall_s"] > 0 and g["turns"][0]["wall_s"] > 0 for g in games)
    assert [c["policies"] for c in local["comparisons"]] == [list(POLICIES)]
    assert _without_costs(here) == _without_costs(local) == _without_costs(on_ray)


@pytest.mark.slow
def test_the_bench_joins_a_running_cluster_by_its_address(ray_cluster, tmp_path):
    """`bench --ray HOST:PORT` from another process plays its games on the cluster, as a sweep
    on a real cluster's head would."""
    out = tmp_path / "game.json"
    # as from a new shell on the head: none of the settings this process's Ray start made
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    run = subprocess.run(["nice", "-n", "10", sys.executable, "-m", "controller.cli", "bench",
                          "--suite", "game", "--seeds", "1", "--first-seed", "3",
                          "--max-turns", "1", "--policies", "oracle", "--ray",
                          ray_cluster.address, "--json", str(out)],
                         capture_output=True, text=True, timeout=600, env=env)
    assert run.returncode == 0, run.stderr
    figures = json.loads(out.read_text())
    assert figures["engine"] == ray_cluster.description and not figures["lost"]
    assert f"Ray at {ray_cluster.address} (2 CPUs)" in run.stdout
    assert figures["policies"]["oracle"]["games_detail"][0]["seed"] == 3
