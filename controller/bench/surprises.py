"""Surprises benchmark: each kind of surprise (hardware/sim/surprises.py) met by the product's turn
in the whole pipeline (`sim serve`, the serial link, the camera streams), on seeds of its own.

A trial is one solo turn on a fresh cell (two for a surprise at the set-down beside a block: the
first turn starts the top layer); the bench asks the cell for the surprise as the turn
reaches the phase it belongs to (the turn's `on_phase`, the hook the console uses), through the
cell's test-only action: the controller meets it through its cameras and its wrist. Each trial
ends one of these ways:

- handled: the turn went on and ended legal, the tower standing;
- conceded: the turn ended, the tower standing, with a move the rules call illegal (in a match the
  referee would name it);
- fell: the tower fell (counted, never hidden);
- stopped: the turn stopped on an error, a surprise it did not get over.

A surprise whose moment never came (a nudge for a turn that never reached for a pushed-out block)
is told apart: its trial says nothing of the kind.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable

from controller.cell_http import cell_json

OUTCOMES = ("handled", "conceded", "fell", "stopped")
# The suite's towers: seeds no tuning used (the game suite tunes on 1-10).
FIRST_SEED = 301


@dataclass
class Trial:
    kind: str
    seed: int
    outcome: str                 # one of OUTCOMES
    met: bool                    # the surprise happened in the turn
    what: str = ""               # what the cell did
    recoveries: list = field(default_factory=list)   # what the turn got over, in its words
    error: str | None = None
    turn_s: float = 0.0          # world time of the turn
    wall_s: float = 0.0


@dataclass
class SurpriseFigures:
    trials: list[Trial] = field(default_factory=list)
    trials_file: dict | None = None   # where trials were kept: its path, how many were taken
    # from it, and its lines of other code or cells (unused: those trials were run again)

    def table(self) -> list[dict]:
        """Per kind: trials, how many met their surprise, and how those ended."""
        rows = []
        for kind in dict.fromkeys(t.kind for t in self.trials):
            mine = [t for t in self.trials if t.kind == kind]
            met = [t for t in mine if t.met]
            row = {"surprise": kind, "trials": len(mine), "met": len(met)}
            row.update({outcome: sum(t.outcome == outcome for t in met) for outcome in OUTCOMES})
            rows.append(row)
        return rows

    def to_json(self) -> dict:
        return {"table": self.table(), "trials": [asdict(t) for t in self.trials],
                "trials_file": self.trials_file}


def classify(result) -> str:
    """How a one-turn solo game (controller/solo.py SoloResult) ended, as an OUTCOMES word."""
    if result.fell:
        return "fell"
    if result.error is not None or not result.turns:
        return "stopped"
    return "handled" if result.turns[-1].legal else "conceded"


def run_trial(cell_path: str, kind: str, seed: int) -> Trial:
    """One turn of the product on a fresh simulated cell of tower `seed`, with surprise `kind`
    asked for at its phase."""
    from controller.cell_link import CellLink, SimulatedCell
    from controller.commands.cell_cmd import load
    from controller.commands.play_cmd import SIM_STALL_S
    from controller.solo import play_solo
    from hardware.sim.surprises import PHASE, TURN

    started = time.monotonic()
    cell = load(cell_path)
    with SimulatedCell(seed, cell_path) as sim:
        asked = []

        def on_phase(name: str, report) -> None:
            if not asked and name == PHASE[kind] and report.number == TURN[kind]:
                asked.append(cell_json(sim.base_url + "/surprise", {"kind": kind}))

        with CellLink(cell, sim.serial, sim.camera_urls, stall_s=SIM_STALL_S) as link:
            result = play_solo(link, TURN[kind], on_phase=on_phase)
        events = cell_json(sim.base_url + "/surprises.json")["events"]
    done = [e for e in events if e["done_t"] is not None]
    last = result.turns[-1] if result.turns else None
    return Trial(kind, seed, classify(result), bool(done),
                 "; ".join(e["what"] for e in events if e["what"]),
                 [f"{r['kind']}: {r['detail']}" for r in last.recoveries] if last else [],
                 result.error, round(last.duration_s, 1) if last else 0.0,
                 round(time.monotonic() - started, 1))


def measure(cell_path: str, kinds: list[str], trials: int, first_seed: int = FIRST_SEED,
            progress: Callable[[int, int], None] | None = None,
            trials_path: str | None = None) -> SurpriseFigures:
    """`trials` turns for each kind, trial i on tower `first_seed + i` (the same towers for every
    kind), one at a time: each needs the machine to itself to keep real time. `trials_path`: a
    file that keeps each finished trial (controller/bench/sweep.py KeptFile); the trials it holds,
    run by this code on this cell, are not run again."""
    from controller.bench.sweep import KeptFile, settings
    kept = KeptFile(trials_path, settings("surprises", cell_path, None), lambda d: Trial(**d),
                    lambda t: (t.kind, t.seed), "trial") if trials_path else None
    figures = SurpriseFigures()
    taken = 0
    total = len(kinds) * trials
    for i in range(trials):
        for kind in kinds:
            trial = kept.kept.get((kind, first_seed + i)) if kept else None
            if trial is not None:
                taken += 1
            else:
                trial = run_trial(cell_path, kind, first_seed + i)
                if kept:
                    kept.add(trial)
            figures.trials.append(trial)
            if progress is not None:
                progress(len(figures.trials), total)
    if kept:
        figures.trials_file = {"path": str(kept.path), "lines_unused": kept.other,
                               "trials_taken": taken}
    return figures
