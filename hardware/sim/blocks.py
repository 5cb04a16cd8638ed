"""The simulated block set and how it is stacked: every block's size, mass and friction drawn (seeded)
from the measured spreads of the cell file, and a starting tower built with small placement errors.

Which blocks end up loose is not decided here: it follows from the drawn thicknesses when the
physics settles the tower.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planning.game.cell.model import BlockSet, Spread
from planning.game.tower import layer_axis

# Placement errors of a person stacking a tower in a sleeve (m, rad).
PLACEMENT_ALONG_STD = 0.0003   # along the block's length
PLACEMENT_YAW_STD = 0.001


@dataclass(frozen=True)
class BlockSpec:
    """One physical block: its identity, drawn properties and starting pose in the tower frame."""

    index: int                    # 0..count-1; also the block's marker identity
    length: float                 # m
    width: float
    height: float
    mass: float                   # kg
    friction: float
    layer: int                    # starting layer (1-based) and slot
    slot: int
    position: tuple[float, float, float]   # centre, tower frame, m
    yaw: float                    # rad, about the tower's z; 0 = along the tower x axis


def _draw(rng: np.random.Generator, spread: Spread, size: int) -> np.ndarray:
    """Normal draws from a measured spread, kept inside the range seen on the real set."""
    return np.clip(rng.normal(spread.mean, spread.std, size), spread.low, spread.high)


def draw_tower(blocks: BlockSet, seed: int) -> list[BlockSpec]:
    """A starting tower of complete layers for this seed: the same seed, the same blocks."""
    rng = np.random.default_rng(seed)
    n = blocks.count
    lengths = _draw(rng, blocks.length, n)
    widths = _draw(rng, blocks.width, n)
    heights = _draw(rng, blocks.height, n)
    masses = _draw(rng, blocks.mass, n)
    frictions = _draw(rng, blocks.friction, n)
    # Blocks go into the tower in a shuffled order, as a person would pick them from the box.
    order = rng.permutation(n)
    specs = []
    z = 0.0
    for layer in range(1, blocks.layers + 1):
        ids = order[(layer - 1) * 3: layer * 3]
        w = widths[ids]
        # side by side with 0.8 to 1.2 of the typical gap: no two blocks start interpenetrating
        gaps = blocks.side_gap * (0.8 + 0.4 * rng.uniform(0.0, 1.0, 2))
        across = [-(w[0] / 2 + w[1] / 2 + gaps[0]), 0.0, w[1] / 2 + w[2] / 2 + gaps[1]]
        base_yaw = 0.0 if layer_axis(layer) == "x" else np.pi / 2
        for slot, i in enumerate(ids):
            along = rng.normal(0.0, PLACEMENT_ALONG_STD)
            yaw = base_yaw + rng.normal(0.0, PLACEMENT_YAW_STD)
            if layer_axis(layer) == "x":
                x, y = along, across[slot]
            else:
                x, y = across[slot], along
            specs.append(BlockSpec(int(i), float(lengths[i]), float(widths[i]), float(heights[i]),
                                   float(masses[i]), float(frictions[i]), layer, slot,
                                   (float(x), float(y), float(z + heights[i] / 2)), float(yaw)))
        # The next layer rests on the thickest block of this one; thinner ones settle under it.
        z += float(heights[ids].max())
    return specs
