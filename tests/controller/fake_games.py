"""Games with no physics for the engines' tests (controller/bench/engines.py): module functions,
so a worker process or a Ray worker can import them. A job is (folder, seed, policy): the folder
keeps a line per attempt, so a test can tell how often a game was played."""

from __future__ import annotations

import os
from pathlib import Path

from controller.bench.game import GameRecord, TurnRecord


def attempts(folder: str | Path, seed: int) -> int:
    path = Path(folder) / f"seed-{seed}"
    return len(path.read_text().splitlines()) if path.exists() else 0


def _attempt(job: tuple) -> int:
    folder, seed, _ = job
    with (Path(folder) / f"seed-{seed}").open("a") as out:
        out.write(f"{os.getpid()}\n")
    return attempts(folder, seed)


def quick(job: tuple) -> GameRecord:
    _attempt(job)
    return _record(job)


def _record(job: tuple) -> GameRecord:
    _, seed, policy = job
    turn = TurnRecord(1, [seed % 15 + 2, 1], [18, 0], probes=seed % 3, legal=True,
                      stories="18 1/3", wall_s=0.01)
    return GameRecord(policy, seed, "fast", "18", [turn], stories="18 1/3", wall_s=0.02)


def crash_first(job: tuple) -> GameRecord:
    """The worker dies in the first attempt (as a segfault or the OOM killer would end it)."""
    if _attempt(job) == 1:
        os._exit(3)
    return _record(job)


def crash_always(job: tuple) -> GameRecord:
    _attempt(job)
    os._exit(3)


def raises(job: tuple) -> GameRecord:
    _attempt(job)
    raise ValueError("no block would come out")


def blas_threads(job: tuple) -> GameRecord:
    """The threads each linear algebra library may use while the game runs, in `ended_by`
    (numpy's, and SciPy's own OpenBLAS, which a game loads late through roboticstoolbox)."""
    import scipy.linalg  # noqa: F401
    from threadpoolctl import threadpool_info
    game = quick(job)
    counts = {pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"}
    game.ended_by = "blas threads " + ",".join(str(c) for c in sorted(counts))
    return game
