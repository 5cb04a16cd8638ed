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


@dataclass(frozen=True)
class FaceTable:
    """Many slot faces as arrays, row i one face (a fit looks at every face of the tower several
    times per frame: one table, not a list of objects)."""
    layer: np.ndarray         # (N,) int
    slot: np.ndarray          # (N,) int
    end: np.ndarray           # (N,) +1 or -1
    centre: np.ndarray        # (N, 3)
    axis: np.ndarray          # (N, 3)
    across: np.ndarray        # (N, 3)
    corners: np.ndarray       # (N, 4, 3)

    def __len__(self) -> int:
        return len(self.layer)

    @property
    def outward(self) -> np.ndarray:
        """(N, 3) each face's outward normal."""
        return self.axis * self.end[:, None]

    @property
    def keys(self) -> np.ndarray:
        """(N,) one integer per (layer, slot, end)."""
        return face_key(self.layer, self.slot, self.end)

    def take(self, index) -> FaceTable:
        return FaceTable(*(getattr(self, f)[index] for f in _TABLE_FIELDS))

    def visible_from(self, eye: np.ndarray) -> FaceTable:
        """The faces whose outside a viewer at `eye` (tower frame) looks at."""
        return self.take(np.einsum("ij,ij->i", eye - self.centre, self.outward) > 0)

    def face(self, i: int) -> SlotFace:
        return SlotFace(int(self.layer[i]), int(self.slot[i]), int(self.end[i]), self.centre[i],
                        self.axis[i], self.across[i], self.corners[i])

    def faces(self) -> list[SlotFace]:
        return [self.face(i) for i in range(len(self))]


_TABLE_FIELDS = ("layer", "slot", "end", "centre", "axis", "across", "corners")


def face_key(layer, slot, end):
    """One integer per (layer, slot, end) (arrays or numbers)."""
    return (np.asarray(layer) * 3 + slot) * 2 + (np.asarray(end) < 0)


def table_row(layer, slot, end):
    """The row of (layer, slot, end) (arrays or numbers) in a table of every face of layers 1 and
    up, `TowerModel.face_table(range(1, n), pitch)`."""
    return face_key(layer, slot, end) - face_key(1, 0, 1)


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
        return self.face_table([layer], pitch, slots=[slot], ends=[end]).face(0)

    def face_table(self, layers, pitch: float, slots=SLOTS, ends=(1, -1)) -> FaceTable:
        """Every (layer, slot, end) face of `layers`, in that order (layer, then slot, then end)."""
        layer, slot, end = (a.ravel() for a in np.meshgrid(np.asarray(layers, int), np.asarray(slots, int),
                                                           np.asarray(ends, int), indexing="ij"))
        odd = layer % 2
        axis = self._axis_of[odd]
        across = self._across_of[odd]
        centre = axis * (end * self.length / 2)[:, None] + across * self.geometry.slot_offset(slot)[:, None]
        centre[:, 2] = self.geometry.layer_z(layer, pitch)
        corners = centre[:, None, :] + self._corner_offsets[odd, (end < 0).astype(int)]
        return FaceTable(layer, slot, end, centre, axis, across, corners)

    def _frames(self) -> None:
        """Axes and marker-corner offsets of every kind of face (even/odd layer, end), once."""
        self._axis_of = np.array([self.axis(2), self.axis(1)])
        self._across_of = np.array([self.across(2), self.across(1)])
        offsets = corner_offsets(self.marker_side)
        self._corner_offsets = np.zeros((2, 2, 4, 3))
        for odd in (0, 1):
            for k, end in enumerate((1, -1)):
                right, up = face_axes(self._axis_of[odd], end, UP)
                self._corner_offsets[odd, k] = np.outer(offsets[:, 0], right) + np.outer(offsets[:, 1], up)
