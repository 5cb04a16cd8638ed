"""Where a hand sets a block down on the simulated tower as it really stands: the slot's place,
shifted clear of the blocks already in the layer, on the layer below's real height. Shared by the
simulated person and the game benchmark's fast hands; it reads ground truth."""

from __future__ import annotations

import numpy as np

from hardware.sim.ground_truth import GroundTruth

NEIGHBOUR_GAP = 0.001       # left between a placed block and its neighbour (m)


def across_dir(truth: GroundTruth, layer: int) -> np.ndarray:
    """World direction across `layer`: the tower's y for odd layers, its x for even ones."""
    return truth.world_direction([0.0, 1.0, 0.0] if layer % 2 == 1 else [1.0, 0.0, 0.0])


def slot_world(truth: GroundTruth, layer: int, slot: int) -> tuple[np.ndarray, float]:
    """Centre (world, m) of a slot's block at rest, and the yaw (world) of its axis."""
    cell = truth.world.cell
    height, width = cell.blocks.height.mean, cell.blocks.width.mean
    along_x = layer % 2 == 1
    across = (slot - 1) * width
    z = (layer - 0.5) * height
    local = [0.0, across, z] if along_x else [across, 0.0, z]
    return truth.to_world(local), cell.tower.yaw + (0.0 if along_x else np.pi / 2)


def placement_centre(truth: GroundTruth, layer: int, slot: int, block: int) -> np.ndarray:
    """Where `block` rests in (`layer`, `slot`): on the layer below as it really is, beside the
    blocks already in the layer with NEIGHBOUR_GAP between them, else on the slot's centre."""
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
        gap = (width + specs[neighbour].width) / 2 + NEIGHBOUR_GAP
        across = max(across, at + gap) if other < slot else min(across, at - gap)
    below = [world.data.xpos[world.block_body[b]][2]
             for s in range(3) if (b := truth.block_at(layer - 1, s)) is not None]
    height = world.cell.blocks.height.mean
    z = (max(below) if below else (layer - 1.5) * height) + height
    return centre + direction * (across - float((centre - base) @ direction)) + \
        np.array([0.0, 0.0, z - centre[2]])
