"""Pure judgements a robot turn makes from what it saw and felt: which slots changed, how far
blocks stick out, whether a guard trip was a knock or a drag, where to lay a block between its
neighbours, and whether the tower after the turn shows the move and nothing else."""

from __future__ import annotations

import numpy as np

from controller.turn.hands import Look
from controller.wording import slot_name
from perception.observation import TowerObservation
from planning.game.tower import SLOTS, across_index
from planning.game.geometry import TowerGeometry

# The wrist reads single 4 ms knocks of 1-2.3 N on a 0.2-0.6 N drag while a loose block slides
# out (the block catching on the layers it slides between), some every 30 ms; a guard trip whose
# last DRAG_WINDOW_S of force had a median under DRAG_N was such a knock, and the pull goes on (at
# most PULL_RESUMES times, controller/turn/arm_hands.py). Pulls that dragged the tower ran at a
# median of 1.5-2.5 N.
DRAG_WINDOW_S = 0.04
DRAG_N = 1.2
PLACE_CLEARANCE = 0.002     # side gap left to a neighbour in the layer


def end_protrusion(obs: TowerObservation, source: tuple[int, int], end: int) -> float:
    """How far the block's `end` face sticks out of the tower (m), as perceived."""
    observed = obs.block_at(*source)
    along = observed.protrusion if observed else 0.0
    return end * along


def seen_offset(tower: TowerGeometry, obs: TowerObservation, source: tuple[int, int]) -> dict[str, float]:
    """Where the cameras saw the block from its slot's nominal centre, as the planner's
    `shift` (across the layer) and `rise` (up): blocks differ in size and placed blocks land
    off centre, and the rod has only a few millimetres to spare in a block's gap."""
    observed = obs.block_at(*source)
    if observed is None:
        return {"shift": 0.0, "rise": 0.0}
    shift, rise = tower.seen_offset(*source, np.asarray(observed.position))
    return {"shift": shift, "rise": rise}


def support_rise(tower: TowerGeometry, obs: TowerObservation, target: tuple[int, int]) -> float:
    """How far above its nominal height (m) a block set down on `target` comes to rest: as far
    as the highest block the cameras see in the layer below stands above its own (every block of
    that layer crosses under every slot of the next). Placed layers sit off the tower's fitted
    pitch by millimetres, and a set-down planned on the nominal height would take the block
    resting on a high layer for one landed on a neighbour's edge."""
    layer, _ = target
    below = [obs.block_at(layer - 1, slot) for slot in SLOTS] if layer > 1 else []
    rises = [tower.seen_offset(layer - 1, b.slot, np.asarray(b.position))[1]
             for b in below if b is not None]
    return max(rises, default=0.0)


def drag_was_a_spike(trace: list[tuple[float, float]], tripped_at: float) -> bool:
    """Whether the force before a guard trip was a short knock on a light drag, not a drag."""
    recent = [f for t, f in trace if t >= tripped_at - DRAG_WINDOW_S]
    return bool(recent) and float(np.median(recent)) < DRAG_N


def neighbours_in(obs: TowerObservation, target: tuple[int, int]) -> list[int]:
    """The slots of the target's layer where the cameras see a block, the target's own aside."""
    layer, slot = target
    return [other for other in SLOTS if other != slot and obs.block_at(layer, other) is not None]


def placement_shift(obs: TowerObservation, target: tuple[int, int], tower: TowerGeometry) -> float:
    """How far across the layer (m, toward slot 2) to lay the new block from its slot's centre so
    that it clears the blocks already in the layer where the cameras see them: blocks are not
    all the same width and a placed block rarely lands dead on its slot."""
    layer, slot = target
    k = across_index(layer)
    nominal, width = tower.slot_offset(slot), tower.block_width
    low, high = -np.inf, np.inf
    for other in neighbours_in(obs, target):
        centre = obs.block_at(layer, other).position[k]
        if other < slot:
            low = max(low, centre + width + PLACE_CLEARANCE)
        else:
            high = min(high, centre - width - PLACE_CLEARANCE)
    want = (low + high) / 2 if low > high else min(max(nominal, low), high)
    return float(want - nominal)


def away_from_neighbours(obs: TowerObservation, target: tuple[int, int],
                         tower: TowerGeometry) -> int:
    """Which way across the layer (+1 toward slot 2, -1 toward slot 0) a block set down onto a
    neighbour's edge is moved for its next try: away from its one neighbour, or, between two,
    toward the one that lies further from the target's slot; 0 with no neighbour to blame."""
    layer, slot = target
    k = across_index(layer)
    nominal = tower.slot_offset(slot)
    room = {}
    for other in neighbours_in(obs, target):
        room[1 if other > slot else -1] = abs(obs.block_at(layer, other).position[k] - nominal)
    if not room:
        return 0
    if len(room) == 1:
        return -next(iter(room))
    return max(room, key=room.get)


def outcome_problem(before, after: Look, source, target) -> str | None:
    """What the hands see after the turn that the move planned does not explain, if anything:
    the plan being legal is not enough, the tower must show it."""
    if after.occupancy.get(source, False):
        return f"{slot_name(*source)} still looks full after the block was taken"
    if not after.occupancy.get(target, False):
        return f"the placed block is not seen at {slot_name(*target)}"
    changed = after.changed(set(before.blocks()) - {source} | {target})
    if changed:
        return "other slots changed during the turn: " + ", ".join(
            f"{slot_name(*key)} (seen {'full' if after.occupancy.get(key, False) else 'empty'})"
            for key in changed)
    if after.out_of_place:
        return f"blocks out of place after the turn: {after.out_of_place}"
    return None
