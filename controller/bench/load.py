"""Load benchmark: the product on a busy machine. The same commands a user runs (`play --solo` and
a short match, each starting its own simulated cell), once on the machine as it is and once beside
a CPU load generator (busy processes, more of them than cores). It reports whether each run
finished, its world time over its wall time (the pace: a busy machine plays slower, never stops),
and whether the solo game took the same blocks under load as without it.

The short match is one the referee ends quickly: the simulated person breaks a rule every turn
(warned the first time, the round lost on the repeat), so it runs the person's turns, the robot's,
the referee and the settling windows in three turns.
"""

from __future__ import annotations

import json
import multiprocessing
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Callable

from controller.match.log import read_events
from controller.match.report import wall_span, world_span


@dataclass
class Run:
    """One command's run."""

    command: str
    finished: bool              # exit code 0: every turn legal / the match reached a winner
    exit_code: int
    world_s: float
    wall_s: float
    pace: float                 # world seconds per wall second
    moves: list = field(default_factory=list)
    last_line: str = ""


@dataclass
class LoadFigures:
    seed: int
    turns: int
    burners: int
    cpus: int
    runs: dict = field(default_factory=dict)      # condition -> {"solo": Run, "match": Run}
    same_game: bool = False                       # the solo game took the same blocks
    loadavg_loaded: float = 0.0

    def to_json(self) -> dict:
        out = asdict(self)
        out["runs"] = {c: {k: asdict(r) for k, r in runs.items()} for c, runs in self.runs.items()}
        return out


def _burn() -> None:
    while True:
        pass


class LoadGenerator:
    """`burners` processes that keep a core busy each, for as long as the block runs."""

    def __init__(self, burners: int):
        self.burners = burners
        self._processes: list[multiprocessing.Process] = []

    def __enter__(self) -> LoadGenerator:
        context = multiprocessing.get_context("spawn")
        self._processes = [context.Process(target=_burn, name="load", daemon=True)
                           for _ in range(self.burners)]
        for process in self._processes:
            process.start()
        return self

    def __exit__(self, *exc) -> None:
        for process in self._processes:
            process.terminate()
        for process in self._processes:
            process.join(timeout=5)


def _cli(*args: str, timeout_s: float) -> subprocess.CompletedProcess:
    """The command as a user runs it; one that outlasts `timeout_s` is stopped and counts as
    not finished (exit code -1)."""
    try:
        return subprocess.run([sys.executable, "-m", "controller.cli", *args], capture_output=True,
                              text=True, timeout=timeout_s)
    except subprocess.TimeoutExpired as exc:
        return subprocess.CompletedProcess(exc.cmd, -1, "", f"timed out after {timeout_s:g} s")


def play_solo_run(cell: str, seed: int, turns: int, folder: Path, timeout_s: float) -> Run:
    report = folder / "solo.json"
    started = time.monotonic()
    out = _cli("play", "--solo", "--turns", str(turns), "--seed", str(seed), "--cell", cell,
               "--report", str(report), "--records", str(folder / "records.json"),
               timeout_s=timeout_s)
    wall = time.monotonic() - started
    last = (out.stdout.strip().splitlines() or out.stderr.strip().splitlines() or [""])[-1]
    if not report.exists():
        return Run("play --solo", False, out.returncode, 0.0, wall, 0.0, [], last)
    document = json.loads(report.read_text())
    moves = [[t["source"], t["target"]] for t in document["turns"]]
    return Run("play --solo", out.returncode == 0, out.returncode, document["world_s"],
               document["wall_s"], document["pace"], moves, last)


def play_match_run(cell: str, seed: int, folder: Path, timeout_s: float) -> Run:
    started = time.monotonic()
    out = _cli("play", "--seed", str(seed), "--cell", cell, "--person-mistake", "forbidden_layer",
               "--report-dir", str(folder / "match"), timeout_s=timeout_s)
    wall = time.monotonic() - started
    last = (out.stderr.strip().splitlines() or out.stdout.strip().splitlines() or [""])[-1]
    log = folder / "match" / "match.jsonl"
    if not log.exists():
        return Run("play (match)", False, out.returncode, 0.0, wall, 0.0, [], last)
    events = read_events(log)
    world, match_wall = world_span(events), wall_span(events)
    moves = [[e.get("player"), e.get("source") or (e.get("seen") or {}).get("source")]
             for e in events if e.get("event") == "place"]
    return Run("play (match)", out.returncode == 0, out.returncode, world, match_wall,
               world / match_wall if match_wall > 0 else 0.0, moves, last)


def measure(cell: str, seed: int = 1, turns: int = 3, burners: int = 4,
            progress: Callable[[int, int], None] | None = None,
            timeout_s: float = 3600.0) -> LoadFigures:
    import os
    figures = LoadFigures(seed, turns, burners, os.cpu_count() or 1)
    steps = [("idle", "solo"), ("idle", "match"), ("loaded", "solo"), ("loaded", "match")]
    with tempfile.TemporaryDirectory(prefix="jenga-load-") as tmp:
        for done, (condition, kind) in enumerate(steps):
            folder = Path(tmp) / condition / kind
            folder.mkdir(parents=True)
            generator = LoadGenerator(burners if condition == "loaded" else 0)
            with generator:
                if kind == "solo":
                    run = play_solo_run(cell, seed, turns, folder, timeout_s)
                else:
                    run = play_match_run(cell, seed, folder, timeout_s)
                if condition == "loaded":
                    figures.loadavg_loaded = max(figures.loadavg_loaded, os.getloadavg()[0])
            figures.runs.setdefault(condition, {})[kind] = run
            if progress:
                progress(done + 1, len(steps))
    solo = [figures.runs[c]["solo"] for c in ("idle", "loaded")]
    figures.same_game = bool(solo[0].moves) and solo[0].moves == solo[1].moves
    return figures
