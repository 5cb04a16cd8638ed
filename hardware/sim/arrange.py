"""Setting the simulated tower up as a game left it: a restarted simulator starts from a fresh
tower, while a match resumed from its log goes on from the tower the log last accepted. A person
at a real table would find the tower still standing there; here the blocks are put where the game
had them.

Which block goes where follows from the fresh tower: the block that started in an emptied slot is
the one that was taken from it, so it is the one that goes on top. In what order the taken blocks
were stacked is not in an occupancy map; they go on top bottom-first in the order of the slots
they came from.
"""

from __future__ import annotations

import mujoco

from hardware.sim.ground_truth import GroundTruth
from hardware.sim.placing import across_dir, slot_world
from hardware.sim.scenes import set_block
from hardware.sim.world import SavedState, SimWorld
from planning.game.tower import TowerState

# The blocks of the layers set up on top lie this far apart, more than the tower's usual gap
# (their neighbours are set at the same time, and may be the widest of the set), and are let go
# this far above where they rest, to settle (m).
SET_UP_GAP = 0.001
SET_UP_DROP = 0.0005


class ArrangeError(ValueError):
    """The tower asked for cannot be made from this set of blocks."""


def arrange_tower(world: SimWorld, fresh: SavedState, tower: TowerState) -> list[tuple[int, int]]:
    """Rebuild the fresh tower, then move the blocks of every slot `tower` has emptied onto the
    slots it has filled above the starting tower. Returns the (block, layer) of each block moved.
    The blocks are let go just above where they rest: the physics settles them."""
    start_layers = world.cell.blocks.layers
    removed = [b for b in sorted(world.blocks, key=lambda b: (b.layer, b.slot))
               if not tower.has_block(b.layer, b.slot)]
    added = [(layer, slot) for layer, slot in tower.blocks() if layer > start_layers]
    if len(removed) != len(added):
        raise ArrangeError(f"the tower holds {tower.block_count} blocks and the set "
                           f"{len(world.blocks)}: {len(removed)} slots of the starting tower are "
                           f"empty and {len(added)} filled above it")
    world.rebuild_tower(fresh)
    truth = GroundTruth(world)
    moved = []
    by_slot: dict[tuple[int, int], int] = {(b.layer, b.slot): b.index for b in world.blocks
                                           if tower.has_block(b.layer, b.slot)}
    for spec, (layer, slot) in zip(removed, added):
        below = [by_slot[(layer - 1, s)] for s in range(3) if (layer - 1, s) in by_slot]
        if not below:
            raise ArrangeError(f"layer {layer} slot {slot} would rest on nothing")
        top = max(_top_z(world, b) for b in below)
        centre, yaw = slot_world(truth, layer, slot)
        centre += across_dir(truth, layer) * (slot - 1) * (SET_UP_GAP - truth.geometry.side_gap)
        centre[2] = top + spec.height / 2 + SET_UP_DROP
        set_block(world, spec.index, centre, yaw)
        by_slot[(layer, slot)] = spec.index
        moved.append((spec.index, layer))
    mujoco.mj_forward(world.model, world.data)
    return moved


def _top_z(world: SimWorld, block: int) -> float:
    return float(world.data.xpos[world.block_body[block]][2]) + world.block_spec(block).height / 2
