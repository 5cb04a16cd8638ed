"""What perception measures against: where each slot's end faces and markers are in the tower
frame, from the tower's one geometry (planning/game/geometry.py). Layers are stacked at `pitch`,
a little more than the mean block height, because each layer rests on its thickest block; the fit
measures it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perception.markers import corner_offsets, face_axes
from planning.game.markers import marker_side
from planning.game.cell.model import BlockSet
from planning.game.tower import SLOTS, layer_axis
from planning.game.geometry import TowerGeometry

UP = np.array([0.0, 0.0, 1.0])


@dataclass(frozen=True)
class SlotFace:
    layer: int
    slot: int
    end: int                  # +1 or -1 along the layer's axis
    centre: np.ndarray        # tower frame, block centred (no protrusion)
    axis: np.ndarray          # unit, along the block toward this end's outside... times end
    across: np.ndarray        # unit across the layer (slot order)
    corners: np.ndarray       # (4, 3) the marker corners, detector order


class TowerModel:
    def __init__(self, blocks: BlockSet):
        self.geometry = TowerGeometry.of_blocks(blocks)
        self.length = blocks.length.mean
        self.width = blocks.width.mean
        self.height = blocks.height.mean
        self.count = blocks.count
        self.slot_pitch = self.geometry.slot_pitch
        self.marker_side = marker_side(self.height)
        # Expected spacing of layers: each rests on the thickest of three blocks.
        self.nominal_pitch = self.height + 0.85 * blocks.height.std
        self._frames()

    def layer_centre_z(self, layer: int, pitch: float) -> float:
        return self.geometry.layer_z(layer, pitch)

    def axis(self, layer: int) -> np.ndarray:
        return np.array([1.0, 0.0, 0.0]) if layer_axis(layer) == "x" else np.array([0.0, 1.0, 0.0])

    def across(self, layer: int) -> np.ndarray:
        return np.array([0.0, 1.0, 0.0]) if layer_axis(layer) == "x" else np.array([1.0, 0.0, 0.0])

    def face(self, layer: int, slot: int, end: int, pitch: float) -> SlotFace:
        parity = layer % 2
        axis, across = self._axes[parity]
        right, up, offsets = self._corner_frame[parity, end]
        centre = axis * (end * self.length / 2) + self.geometry.slot_centre(layer, slot, pitch)
        corners = centre + offsets
        return SlotFace(layer, slot, end, centre, axis, across, corners)

    def faces(self, layers: range, pitch: float, ends=(1, -1)) -> list[SlotFace]:
        return [self.face(layer, slot, end, pitch) for layer in layers for slot in SLOTS for end in ends]

    def _frames(self) -> None:
        """Axes and marker-corner offsets of every kind of face, computed once."""
        self._axes = {parity: (self.axis(parity or 2), self.across(parity or 2)) for parity in (0, 1)}
        self._corner_frame = {}
        offsets = corner_offsets(self.marker_side)
        for parity, (axis, _) in self._axes.items():
            for end in (1, -1):
                right, up = face_axes(axis, end, UP)
                corner_xyz = np.outer(offsets[:, 0], right) + np.outer(offsets[:, 1], up)
                self._corner_frame[parity, end] = (right, up, corner_xyz)
