"""Where the tower and its blocks are in the world, from the cell's nominal geometry.

Tower frame: origin at the centre of the tower's footprint on the table, z up, x along the blocks of
odd layers. Slots are numbered 0, 1, 2 along the layer's across axis, slot 0 at its negative end
(y for odd layers, x for even layers). Every block has two end faces, named by the sign of the tower
axis they face: +1 or -1. The *front* end of a layer faces the arm's base; the robot pushes from the
back end and pulls the block out at the front, where the cameras see it come out.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from spatialmath import SE3

from planning.cell.model import Cell
from planning.tower import across_index, layer_axis


@dataclass(frozen=True)
class TowerGeometry:
    pose: SE3                 # tower frame in the world
    block_length: float       # m, nominal
    block_width: float
    block_height: float
    arm_base: np.ndarray      # world xy of the arm's base, to tell front from back
    pitch: float = 0.0        # layer spacing; 0 means the nominal block height

    @classmethod
    def from_cell(cls, cell: Cell) -> TowerGeometry:
        x, y = cell.tower.position
        pose = SE3(x, y, 0.0) * SE3.Rz(cell.tower.yaw)
        b = cell.blocks
        return cls(pose, b.length.mean, b.width.mean, b.height.mean,
                   np.array(cell.arm.base_position[:2], float))

    def measured(self, x: float, y: float, yaw: float, pitch: float) -> TowerGeometry:
        """The same tower where the cameras see it: position and yaw on the table, layer spacing."""
        return TowerGeometry(SE3(x, y, 0.0) * SE3.Rz(yaw), self.block_length, self.block_width,
                             self.block_height, self.arm_base, pitch)

    @property
    def layer_pitch(self) -> float:
        return self.pitch or self.block_height

    # --- layers and blocks --------------------------------------------------------------------

    def layer_z(self, layer: int) -> float:
        """Height of the centre of `layer`'s blocks above the table."""
        return (layer - 1) * self.layer_pitch + self.block_height / 2

    def height(self, layers: int) -> float:
        """Height of a tower of `layers` layers."""
        return (layers - 1) * self.layer_pitch + self.block_height if layers > 0 else 0.0

    def block_pose(self, layer: int, slot: int) -> SE3:
        """Nominal pose of the block at (layer, slot): origin at its centre, x along its length."""
        across = (slot - 1) * self.block_width
        if layer_axis(layer) == "x":
            local = SE3(0.0, across, self.layer_z(layer))
        else:
            local = SE3(across, 0.0, self.layer_z(layer)) * SE3.Rz(np.pi / 2)
        return self.pose * local

    def axis(self, layer: int) -> np.ndarray:
        """World unit vector along the blocks of `layer` (toward their +1 end)."""
        return self.block_pose(layer, 1).R[:, 0]

    def across(self, layer: int) -> np.ndarray:
        """World unit vector across `layer`, from slot 0 toward slot 2."""
        step = self.block_pose(layer, 2).t - self.block_pose(layer, 0).t
        return step / np.linalg.norm(step)

    def front_end(self, layer: int) -> int:
        """The end (+1 or -1) of `layer`'s blocks that faces the arm's base."""
        to_base = self.arm_base - self.pose.t[:2]
        return 1 if float(self.axis(layer)[:2] @ to_base) > 0 else -1

    def end_face_centre(self, layer: int, slot: int, end: int, protrusion: float = 0.0,
                        shift: float = 0.0, rise: float = 0.0) -> np.ndarray:
        """World centre of a block's end face; `protrusion` moves the block along its axis toward
        that end (a block pushed from the other end), `shift` across the layer toward slot 2,
        `rise` up from the layer's nominal height."""
        pose = self.block_pose(layer, slot)
        return (pose.t + pose.R[:, 0] * end * (self.block_length / 2.0 + protrusion)
                + self.across(layer) * shift + np.array([0.0, 0.0, rise]))

    def seen_offset(self, layer: int, slot: int, position: np.ndarray) -> tuple[float, float]:
        """(shift, rise) of a block seen with its centre at tower-frame `position` (m) from where
        its slot would put it: across the layer toward slot 2, and up."""
        k = across_index(layer)
        return (float(position[k]) - (slot - 1) * self.block_width,
                float(position[2]) - self.layer_z(layer))

    # --- keep-out -----------------------------------------------------------------------------

    def box(self, layers: float, margin: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """Tower-frame corners (low, high) of the tower of `layers` layers, grown by `margin` on the
        sides and top (not below the table)."""
        half = self.block_length / 2.0 + margin
        return (np.array([-half, -half, 0.0]),
                np.array([half, half, self.height(layers) + margin]))

    def to_tower(self, points: np.ndarray) -> np.ndarray:
        """World points (N, 3) in the tower frame."""
        inv = self.pose.inv()
        return (inv.R @ np.atleast_2d(points).T).T + inv.t
