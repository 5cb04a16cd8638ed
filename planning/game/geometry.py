"""The tower's geometry, in metres, defined once: where every slot's block sits, in the tower
frame and in the world, from the cell's block sizes and the gap between neighbours, for the tower
as the cell file places it or as the cameras measure it (position, yaw, layer spacing, lean).
Perception, planning, the simulator, the simulated person and the benchmark's fast hands all
work from it.

Tower frame: origin at the centre of the tower's footprint on the table, z up, x along the blocks of
odd layers. Slots are numbered 0, 1, 2 along the layer's across axis, slot 0 at its negative end
(y for odd layers, x for even layers), `slot_pitch` (a block's width and the gap beside it)
apart. Every block has two end faces, named by the sign of the tower axis they face: +1 or -1.
The *front* end of a layer faces the arm's base; the robot pushes from the back end and pulls the
block out at the front, where the cameras see it come out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
from spatialmath import SE3

from planning.game.cell.model import BlockSet, Cell
from planning.game.tower import across_index, layer_axis, slot_offset


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


@dataclass(frozen=True)
class TowerGeometry:
    pose: SE3                 # tower frame in the world
    block_length: float       # m, nominal
    block_width: float
    block_height: float
    arm_base: np.ndarray = field(default_factory=lambda: np.zeros(2))   # world xy of the arm's
                              # base, to tell front from back
    pitch: float = 0.0        # layer spacing; 0 means the nominal block height
    side_gap: float = 0.0     # between neighbours in a layer
    lean: tuple[float, float] = (0.0, 0.0)   # as TowerPose's lean_x, lean_y

    @classmethod
    def from_cell(cls, cell: Cell) -> TowerGeometry:
        x, y = cell.tower.position
        pose = SE3(x, y, 0.0) * SE3.Rz(cell.tower.yaw)
        b = cell.blocks
        return cls(pose, b.length.mean, b.width.mean, b.height.mean,
                   np.array(cell.arm.base_position[:2], float), side_gap=b.side_gap)

    @classmethod
    def of_blocks(cls, blocks: BlockSet) -> TowerGeometry:
        """The tower frame alone (the tower at the world's origin)."""
        return cls(SE3(), blocks.length.mean, blocks.width.mean, blocks.height.mean,
                   side_gap=blocks.side_gap)

    def measured(self, pose: TowerPose) -> TowerGeometry:
        """The same tower where the cameras see it: position and yaw on the table, layer spacing,
        lean."""
        return TowerGeometry(SE3(pose.x, pose.y, 0.0) * SE3.Rz(pose.yaw), self.block_length,
                             self.block_width, self.block_height, self.arm_base, pose.pitch,
                             self.side_gap, (pose.lean_x, pose.lean_y))

    @property
    def layer_pitch(self) -> float:
        return self.pitch or self.block_height

    @property
    def slot_pitch(self) -> float:
        """Centre to centre of neighbouring slots."""
        return slot_offset(2, self.block_width, self.side_gap)

    # --- layers and blocks, tower frame -------------------------------------------------------

    def layer_z(self, layer: int, pitch: float | None = None) -> float:
        """Height of the centre of `layer`'s blocks above the table (at `pitch`, if given)."""
        return (layer - 1) * (pitch or self.layer_pitch) + self.block_height / 2

    def slot_offset(self, slot: int) -> float:
        """How far a slot's centre lies across its layer from the tower's axis."""
        return slot_offset(slot, self.block_width, self.side_gap)

    def slot_centre(self, layer: int, slot: int, pitch: float | None = None) -> np.ndarray:
        """Tower-frame centre of the block at (layer, slot), on the tower's (leaning) axis."""
        z = self.layer_z(layer, pitch)
        centre = np.zeros(3)
        centre[across_index(layer)] = self.slot_offset(slot)
        centre[2] = z
        return centre

    def slot_at(self, position: np.ndarray, layer: int) -> int:
        """The slot of `layer` nearest a tower-frame point (may be outside 0-2)."""
        return int(round(float(position[across_index(layer)]) / self.slot_pitch)) + 1

    def layer_at(self, z: float, pitch: float | None = None) -> int:
        """The layer nearest a height above the table."""
        return int(round((z - self.block_height / 2) / (pitch or self.layer_pitch))) + 1

    # --- in the world -------------------------------------------------------------------------

    def height(self, layers: int) -> float:
        """Height of a tower of `layers` layers."""
        return (layers - 1) * self.layer_pitch + self.block_height if layers > 0 else 0.0

    def block_pose(self, layer: int, slot: int) -> SE3:
        """Nominal pose of the block at (layer, slot): origin at its centre, x along its length."""
        centre = self.slot_centre(layer, slot)
        centre[:2] += np.array(self.lean) * centre[2]
        local = SE3(*centre)
        if layer_axis(layer) != "x":
            local = local * SE3.Rz(np.pi / 2)
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
        return (float(position[k]) - self.slot_offset(slot), float(position[2]) - self.layer_z(layer))

    # --- keep-out -----------------------------------------------------------------------------

    def box(self, layers: float, margin: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
        """Tower-frame corners (low, high) of the tower of `layers` layers, grown by `margin` on the
        sides and top (not below the table)."""
        half = self.block_length / 2.0 + margin
        return (np.array([-half, -half, 0.0]),
                np.array([half, half, self.height(layers) + margin]))

    def sticking_out_box(self, layer: int, slot: int, protrusion: float
                         ) -> tuple[np.ndarray, np.ndarray]:
        """Tower-frame corners (low, high) of the part of the block at (layer, slot) that stands
        out of the tower's box, slid `protrusion` along its layer's axis (toward its +1 end), as
        `box` and `to_tower` measure: from the leaning axis."""
        centre = self.slot_centre(layer, slot)
        half = np.array([self.block_width, self.block_width, self.block_height]) / 2.0
        along = 1 - across_index(layer)
        face = np.sign(protrusion) * self.block_length / 2.0
        centre[along] = face + protrusion / 2.0
        half[along] = abs(protrusion) / 2.0
        return centre - half, centre + half

    def to_tower(self, points: np.ndarray) -> np.ndarray:
        """World points (N, 3) in the tower frame, measured from its leaning axis (as the blocks'
        poses are): the keep-out box leans with the tower. Upright, it stood about 2 mm proud of the
        front face of layer 18 of a leaning 22-layer tower in a seed-1 game, and no grasp of a
        block pushed out 21 mm there could be planned."""
        inv = self.pose.inv()
        p = (inv.R @ np.atleast_2d(points).T).T + inv.t
        p[:, :2] -= np.outer(p[:, 2], self.lean)
        return p
