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

from planning.game.cell.model import Cell
from planning.kinematics import HeldBlock
from planning.motion.contact_geometry import PUSH_THROUGH
from planning.motion.planner import MotionPlanner
from planning.motion.plans import PlanError
from planning.game.tower import SLOTS
from planning.workers import Workers


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
    that many processes, each with a planner of its own for the cell (plans are deterministic:
    the same answers); `planner` is for one process only."""
    if planner is not None and jobs > 1:
        raise ValueError("a planner of one's own plans in this process only: give jobs=1")
    tall = max(layers.stop - 1, cell.blocks.layers) + 1
    build = (lambda: planner) if planner is not None else MotionPlanner
    with Workers(build, () if planner is not None else (cell,), jobs) as planners:
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


def _attempt(plan) -> str | None:
    try:
        plan()
        return None
    except PlanError as exc:
        return str(exc)


def _grip_key(held: HeldBlock) -> tuple:
    return tuple(round(v, 3) for v in held.direction)
