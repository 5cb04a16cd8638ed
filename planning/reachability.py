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
                progress: Callable[[int, int], None] | None = None) -> list[SlotReach]:
    """Plan push, pull and place for every slot of every layer in `layers`; `progress(done,
    total)` is called as layers are checked."""
    planner = planner or MotionPlanner(cell)
    home = planner.arm.home
    tall = max(layers.stop - 1, cell.blocks.layers) + 1
    grips: dict[tuple, HeldBlock] = {}
    results = []
    total = 2 * len(layers)
    for done, layer in enumerate(layers, start=1):
        for slot in SLOTS:
            push = _attempt(lambda: planner.push(home, layer, slot, PUSH_THROUGH, tower_layers=tall))
            pull_plan = None
            try:
                pull_plan = planner.pull(home, layer, slot, PUSH_THROUGH, tower_layers=tall)
                pull = None
                grips.setdefault(_grip_key(pull_plan.held), pull_plan.held)
            except PlanError as exc:
                pull = str(exc)
            results.append([layer, slot, push, pull])
        if progress:
            progress(done, total)
    # Every grip a pull used must be placeable, since the block is placed as it was gripped.
    out = []
    for i, (layer, slot, push, pull) in enumerate(results):
        needed = layer > cell.blocks.layers
        place = None
        if needed:
            for held in grips.values() or [None]:
                place = _attempt(lambda: planner.place(home, layer, slot, held))
                if place is not None:
                    break
        out.append(SlotReach(layer, slot, push, pull, place, needed))
        if progress and slot == SLOTS[-1]:
            progress(len(layers) + i // len(SLOTS) + 1, total)
    return out


def _attempt(plan) -> str | None:
    try:
        plan()
        return None
    except PlanError as exc:
        return str(exc)


def _grip_key(held: HeldBlock) -> tuple:
    return tuple(round(v, 3) for v in held.direction)
