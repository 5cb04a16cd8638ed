"""The nominal geometry perception measures against: where each slot's end faces and markers are in
the tower frame, and how the tower frame sits in the world.

Tower frame: origin at the centre of the footprint on the table, z up, x along the blocks of odd
layers; slot 0 at the negative end of the across axis (see planning/workspace.py). Layers are
stacked at `pitch`, a little more than the mean block height, because each layer rests on its
thickest block; the fit measures it.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perception.markers import corner_offsets, face_axes
from planning.block_markers import marker_side
from planning.cell.model import BlockSet
from planning.tower import SLOTS, layer_axis

UP = np.array([0.0, 0.0, 1.0])
# Blocks side by side never touch perfectly: the typical gap between neighbours (m).
SIDE_GAP = 0.00025


@dataclass(frozen=True)
class SlotFace:
    layer: int
    slot: int
    end: int                  # +1 or -1 along the layer's axis
    centre: np.ndarray        # tower frame, block centred (no protrusion)
    axis: np.ndarray          # unit, along the block toward this end's outside... times end
    across: np.ndarray        # unit across the layer (slot order)
    corners: np.ndarray       # (4, 3) the marker corners, detector order


@dataclass(frozen=True)
class TowerPose:
    """The tower frame in the world: its origin on the table, its yaw, the measured layer spacing
    `pitch`, and its lean: the tower's axis moves by (lean_x, lean_y) per metre of height, in the
    tower's own x and y. Tower-frame coordinates are measured from that leaning axis, so a block's
    protrusion is relative to the tower at its own height."""

    x: float
    y: float
    yaw: float
    pitch: float
    lean_x: float = 0.0
    lean_y: float = 0.0

    @property
    def params(self) -> np.ndarray:
        return np.array([self.x, self.y, self.yaw, self.pitch, self.lean_x, self.lean_y])

    def rotation(self) -> np.ndarray:
        c, s = np.cos(self.yaw), np.sin(self.yaw)
        return np.array([[c, -s, 0.0], [s, c, 0.0], [0.0, 0.0, 1.0]])

    def to_world(self, points: np.ndarray) -> np.ndarray:
        p = np.array(points, float).reshape(-1, 3)
        p[:, 0] += self.lean_x * p[:, 2]
        p[:, 1] += self.lean_y * p[:, 2]
        return p @ self.rotation().T + np.array([self.x, self.y, 0.0])

    def to_tower(self, points: np.ndarray) -> np.ndarray:
        p = (np.asarray(points, float).reshape(-1, 3) - np.array([self.x, self.y, 0.0])) @ self.rotation()
        p[:, 0] -= self.lean_x * p[:, 2]
        p[:, 1] -= self.lean_y * p[:, 2]
        return p

    def vector_to_tower(self, v: np.ndarray) -> np.ndarray:
        return np.asarray(v, float) @ self.rotation()

    def vector_to_world(self, v: np.ndarray) -> np.ndarray:
        return np.asarray(v, float) @ self.rotation().T

    @property
    def tilt_deg(self) -> float:
        return float(np.degrees(np.arctan(np.hypot(self.lean_x, self.lean_y))))


class TowerModel:
    def __init__(self, blocks: BlockSet):
        self.length = blocks.length.mean
        self.width = blocks.width.mean
        self.height = blocks.height.mean
        self.count = blocks.count
        self.slot_pitch = self.width + SIDE_GAP
        self.marker_side = marker_side(self.height)
        # Expected spacing of layers: each rests on the thickest of three blocks.
        self.nominal_pitch = self.height + 0.85 * blocks.height.std
        self._frames()

    def layer_centre_z(self, layer: int, pitch: float) -> float:
        return (layer - 1) * pitch + self.height / 2

    def axis(self, layer: int) -> np.ndarray:
        return np.array([1.0, 0.0, 0.0]) if layer_axis(layer) == "x" else np.array([0.0, 1.0, 0.0])

    def across(self, layer: int) -> np.ndarray:
        return np.array([0.0, 1.0, 0.0]) if layer_axis(layer) == "x" else np.array([1.0, 0.0, 0.0])

    def face(self, layer: int, slot: int, end: int, pitch: float) -> SlotFace:
        parity = layer % 2
        axis, across = self._axes[parity]
        right, up, offsets = self._corner_frame[parity, end]
        centre = (axis * (end * self.length / 2) + across * ((slot - 1) * self.slot_pitch)
                  + UP * self.layer_centre_z(layer, pitch))
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
