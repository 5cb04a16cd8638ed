"""Where a hand sets a block down on the simulated tower as it really stands: the slot's place
(the tower's one geometry, planning/game/geometry.py), shifted clear of the blocks already in the
layer, on the layer below's real height. Shared by the simulated person, the game benchmark's fast
hands, the scenes of tests and benchmarks and the setting up of a resumed game's tower; it reads
ground truth."""

from __future__ import annotations

import numpy as np

from hardware.sim.ground_truth import GroundTruth

NEIGHBOUR_GAP = 0.001       # left between a placed block and its neighbour (m)
RELEASE_ABOVE = 0.0015      # a hand lets a block go this far above where it rests (m)


def across_dir(truth: GroundTruth, layer: int) -> np.ndarray:
    """World direction across `layer`: the tower's y for odd layers, its x for even ones."""
    return truth.world_direction([0.0, 1.0, 0.0] if layer % 2 == 1 else [1.0, 0.0, 0.0])


def slot_world(truth: GroundTruth, layer: int, slot: int) -> tuple[np.ndarray, float]:
    """Centre (world, m) of a slot's block at rest, and the yaw (world) of its axis."""
    cell = truth.world.cell
    along_x = layer % 2 == 1
    return (truth.to_world(truth.geometry.slot_centre(layer, slot)),
            cell.tower.yaw + (0.0 if along_x else np.pi / 2))


def placement_centre(truth: GroundTruth, layer: int, slot: int, block: int,
                     gap: float = NEIGHBOUR_GAP) -> np.ndarray:
    """Where `block` rests in (`layer`, `slot`): on the layer below as it really is, beside the
    blocks already in the layer with `gap` between them, else on the slot's centre."""
    world = truth.world
    specs = {b.index: b for b in world.blocks}
    centre, _ = slot_world(truth, layer, slot)
    width = specs[block].width
    direction = across_dir(truth, layer)
    base = truth.to_world(np.zeros(3))
    across = float((centre - base) @ direction)
    for other in range(3):
        neighbour = truth.block_at(layer, other) if other != slot else None
        if neighbour is None:
            continue
        at = float((world.data.xpos[world.block_body[neighbour]] - base) @ direction)
        apart = (width + specs[neighbour].width) / 2 + gap
        across = max(across, at + apart) if other < slot else min(across, at - apart)
    below = [world.data.xpos[world.block_body[b]][2]
             for s in range(3) if (b := truth.block_at(layer - 1, s)) is not None]
    height = world.cell.blocks.height.mean
    z = (max(below) if below else (layer - 1.5) * height) + height
    return centre + direction * (across - float((centre - base) @ direction)) + \
        np.array([0.0, 0.0, z - centre[2]])
