"""A game's result depends only on its seed, its policy and the code, not on where it ran: the
same real games (fast mode, the product's turn procedure, the robot's policy and the oracle)
played in this process, in local processes and on a Ray instance started here (127.0.0.1, 2
CPUs) give identical records, figures and comparisons; only the costs (wall times) and the
engine's name differ."""

import pytest

from controller.bench.engines import InProcess, LocalProcesses, RayCluster
from controller.bench.game import GameRecord, measure
from hardware.cells import DEFAULT_CELL

pytestmark = pytest.mark.slow

SEEDS = [1, 2]


def _without_costs(figures: dict) -> dict:
    figures = {k: v for k, v in figures.items() if k not in ("wall_s", "engine")}
    for row in figures["policies"].values():
        row["games_detail"] = [GameRecord.from_dict(g).outcome() for g in row["games_detail"]]
    return figures


POLICIES = ("ours", "oracle")


def test_here_local_processes_and_ray_play_the_same_games(tmp_path):
    def sweep(engine):
        return measure(str(DEFAULT_CELL), SEEDS, max_turns=1, policies=POLICIES, engine=engine)
    here, local = sweep(InProcess()), sweep(LocalProcesses(2))
    cluster = RayCluster("local", cpus=2)
    try:
        on_ray = sweep(cluster)
    finally:
        cluster.close()
    assert local["engine"] == "2 local processes" and on_ray["engine"].startswith("Ray at 127.0.0.1")
    assert not here["lost"] and not local["lost"] and not on_ray["lost"]
    for policy in POLICIES:
        games = local["policies"][policy]["games_detail"]
        assert [g["seed"] for g in games] == SEEDS and all(len(g["turns"]) == 1 for g in games)
        assert all(g["wall_s"] > 0 and g["turns"][0]["wall_s"] > 0 for g in games)
    assert [c["policies"] for c in local["comparisons"]] == [list(POLICIES)]
    assert _without_costs(here) == _without_costs(local) == _without_costs(on_ray)
