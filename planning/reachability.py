"""Can the cell play every slot? For each slot of each layer: the push from the back face, the pull
from the front face, and (for layers a block can be placed on) the placement, each planned in full
from the arm's home pose: tool aligned, limits kept, no collision.

Pushes and pulls are checked against a tower as tall as the highest layer checked plus one (the
worst case: the tall tower stands over a low block); placements against a tower whose top is the
layer below.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from planning.cell.model import Cell
from planning.kinematics import HeldBlock
from planning.motion.planner import PUSH_THROUGH, MotionPlanner
from planning.motion.plans import PlanError
from planning.tower import SLOTS


@dataclass(frozen=True)
class SlotReach:
    layer: int
    slot: int
    push: str | None     # None: reachable; otherwise why not
    pull: str | None
    place: str | None
    place_needed: bool

    @property
    def ok(self) -> bool:
        return self.push is None and self.pull is None and (not self.place_needed or self.place is None)


def check_reach(cell: Cell, layers: range, planner: MotionPlanner | None = None,
                progress: Callable[[int, int], None] | None = None, jobs: int = 1) -> list[SlotReach]:
    """Plan push, pull and place for every slot of every layer in `layers`; `progress(done,
    total)` is called as layers are checked. With `jobs` > 1 the layers are shared out among
    that many processes, each with its own planner (plans are deterministic: the same answers)."""
    tall = max(layers.stop - 1, cell.blocks.layers) + 1
    with _Planners(cell, planner, jobs) as planners:
        total = 2 * len(layers)
        reaches = planners.map(_push_and_pull, [(layer, tall) for layer in layers],
                               lambda done: progress and progress(done, total))
        # Every grip a pull used must be placeable, since the block is placed as it was gripped.
        grips: dict[tuple, HeldBlock] = {}
        for _, held in reaches:
            for grip in held:
                grips.setdefault(_grip_key(grip), grip)
        needed = [layer for layer in layers if layer > cell.blocks.layers]
        placed = planners.map(_placements, [(layer, tuple(grips.values())) for layer in needed],
                              lambda done: progress and progress(len(layers) + done, total))
    places = dict(zip(needed, placed))
    out = []
    for layer, (rows, _) in zip(layers, reaches):
        for slot, push, pull in rows:
            place = places[layer][slot] if layer in places else None
            out.append(SlotReach(layer, slot, push, pull, place, layer in places))
    if progress:
        progress(total, total)
    return out


def _push_and_pull(planner: MotionPlanner, layer: int, tall: int):
    """([(slot, why not push, why not pull)], grips the pulls used) for one layer."""
    home = planner.arm.home
    rows, grips = [], []
    for slot in SLOTS:
        push = _attempt(lambda: planner.push(home, layer, slot, PUSH_THROUGH, tower_layers=tall))
        try:
            pull_plan = planner.pull(home, layer, slot, PUSH_THROUGH, tower_layers=tall)
            pull = None
            grips.append(pull_plan.held)
        except PlanError as exc:
            pull = str(exc)
        rows.append((slot, push, pull))
    return rows, grips


def _placements(planner: MotionPlanner, layer: int, grips: tuple[HeldBlock, ...]):
    """Per slot, why not a placement with every grip (None: all placeable)."""
    home = planner.arm.home
    out = []
    for slot in SLOTS:
        place = None
        for held in grips or (None,):
            place = _attempt(lambda: planner.place(home, layer, slot, held))
            if place is not None:
                break
        out.append(place)
    return out


class _Planners:
    """A planner in this process, or one in each of `jobs` worker processes."""

    def __init__(self, cell: Cell, planner: MotionPlanner | None, jobs: int):
        self.cell, self.planner, self.jobs = cell, planner, jobs
        self._pool = None

    def __enter__(self) -> _Planners:
        if self.jobs > 1:
            import multiprocessing
            from concurrent.futures import ProcessPoolExecutor
            self._pool = ProcessPoolExecutor(self.jobs, multiprocessing.get_context("spawn"),
                                             initializer=_start_worker, initargs=(self.cell,))
        else:
            self.planner = self.planner or MotionPlanner(self.cell)
        return self

    def __exit__(self, *exc) -> None:
        if self._pool is not None:
            self._pool.shutdown(cancel_futures=True)

    def map(self, job, args: list[tuple], on_done: Callable[[int], None]) -> list:
        """job(planner, *a) for each of `args`, in order."""
        if self._pool is None:
            results = []
            for a in args:
                results.append(job(self.planner, *a))
                on_done(len(results))
            return results
        from concurrent.futures import as_completed
        futures = [self._pool.submit(_in_worker, job, a) for a in args]
        for done, _ in enumerate(as_completed(futures), start=1):
            on_done(done)
        return [f.result() for f in futures]


_WORKER: dict = {}


def _start_worker(cell: Cell) -> None:
    _WORKER["planner"] = MotionPlanner(cell)


def _in_worker(job, args: tuple):
    return job(_WORKER["planner"], *args)


def _attempt(plan) -> str | None:
    try:
        plan()
        return None
    except PlanError as exc:
        return str(exc)


def _grip_key(held: HeldBlock) -> tuple:
    return tuple(round(v, 3) for v in held.direction)
