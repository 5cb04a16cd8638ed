"""What really happened in the simulated cell: block poses, which blocks left their place, contact
forces, and the tower as the rules see it.

For tests and benchmarks only. Nothing in controller/, planning/ or perception/ may use it: the
product must see the tower through its cameras and feel it through the wrist sensor.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

import mujoco
import numpy as np

from hardware.sim.world import SimWorld
from planning.game.tower import TowerState
from planning.game.geometry import TowerGeometry

# A block whose centre is more than this below its layer's nominal height has fallen.
FALLEN_DROP = 0.02


@dataclass(frozen=True)
class BlockPose:
    block: int
    position: np.ndarray   # centre, tower frame, m
    axis: np.ndarray       # unit vector along the block's length, tower frame
    yaw: float             # rad about the tower's z, of the length axis
    tilt: float            # rad between the block's thickness axis and the vertical, either
                           # way up: a box lying upside down lies level


class GroundTruth:
    """Reads the world's true state. `reference()` snapshots where every block is now, so later
    displacements are measured from it (a fresh tower, the start of a turn)."""

    def __init__(self, world: SimWorld):
        self.world = world
        self.geometry = TowerGeometry.from_cell(world.cell)
        # The tower frame as plain arrays: poses are read for every block at every look.
        self._rot = np.array(self.geometry.pose.R).T      # world -> tower
        self._origin = np.array(self.geometry.pose.t)
        self._reference = self.positions()
        self._height = world.cell.blocks.height.mean

    # --- poses --------------------------------------------------------------------------------

    def to_tower(self, point_world: np.ndarray) -> np.ndarray:
        """A world point in the tower frame (origin on the table under the tower's centre)."""
        return self._rot @ (np.asarray(point_world, float) - self._origin)

    def to_world(self, point_tower: np.ndarray) -> np.ndarray:
        return self._rot.T @ np.asarray(point_tower, float) + self._origin

    def world_direction(self, direction_tower: np.ndarray) -> np.ndarray:
        return self._rot.T @ np.asarray(direction_tower, float)

    def pose(self, block: int) -> BlockPose:
        data = self.world.data
        body = self.world.block_body[block]
        position = self.to_tower(data.xpos[body])
        rot = self._rot @ data.xmat[body].reshape(3, 3)
        axis = rot[:, 0]
        tilt = float(np.arccos(np.clip(abs(rot[2, 2]), 0.0, 1.0)))
        return BlockPose(block, position, axis, float(np.arctan2(axis[1], axis[0])), tilt)

    def positions(self) -> dict[int, np.ndarray]:
        """Every block's centre, tower frame."""
        return {b.index: self.pose(b.index).position for b in self.world.blocks}

    def reference(self) -> None:
        """From now on, displacements are measured from the blocks' current places."""
        self._reference = self.positions()

    def displacements(self) -> dict[int, float]:
        """How far each block's centre is from its reference place (m)."""
        now = self.positions()
        return {b: float(np.linalg.norm(now[b] - self._reference[b])) for b in now}

    def displaced(self, tolerance: float) -> list[int]:
        """Blocks that moved more than `tolerance` (m) from their reference places."""
        return sorted(b for b, d in self.displacements().items() if d > tolerance)

    # --- the tower as the rules see it --------------------------------------------------------

    def slot_of(self, block: int) -> tuple[int, int] | None:
        """(layer, slot) the block sits in now, or None when it is not in the tower's footprint
        lying level (fallen, held, or on the table beside the tower)."""
        p = self.pose(block)
        layer = self.geometry.layer_at(p.position[2])
        if layer < 1 or p.tilt > np.radians(10):
            return None
        along_x = abs(p.axis[0]) > abs(p.axis[1])
        if along_x != (layer % 2 == 1):
            return None
        along = p.position[0] if along_x else p.position[1]
        slot = self.geometry.slot_at(p.position, layer)
        if slot not in (0, 1, 2) or abs(along) > self.geometry.block_length / 2:
            return None
        if abs(p.position[2] - self.geometry.layer_z(layer)) > self._height / 2:
            return None
        return layer, slot

    def tower_state(self, blocks_moved: int = 0) -> TowerState:
        """Occupancy from where the blocks really are (raises TowerError if it is no tower)."""
        occupied = {}
        for b in self.world.blocks:
            where = self.slot_of(b.index)
            if where is not None:
                occupied[where] = True
        top = max((layer for layer, _ in occupied), default=0)
        rows = [tuple(occupied.get((layer, s), False) for s in range(3)) for layer in range(1, top + 1)]
        return TowerState(tuple(rows), blocks_moved)

    def fallen(self) -> list[int]:
        """Blocks well below their reference height: off the tower, on the table."""
        now = self.positions()
        return sorted(b for b in now if self._reference[b][2] - now[b][2] > FALLEN_DROP)

    def fell(self, moving: int | None = None) -> bool:
        """The tower fell by the rules' strict reading: a block other than `moving` (the one
        being moved) came down 2 cm or more below where it was at `reference()`."""
        return any(block != moving for block in self.fallen())

    def tower_fell(self, min_blocks: int = 3) -> bool:
        return len(self.fallen()) >= min_blocks

    # --- forces -------------------------------------------------------------------------------

    def contact_force(self, block: int) -> float:
        """Sum of normal contact forces on a block (N)."""
        model, data = self.world.model, self.world.data
        geom = self.world.block_geom[block]
        total = 0.0
        wrench = np.zeros(6)
        for i in range(data.ncon):
            contact = data.contact[i]
            if geom in (contact.geom1, contact.geom2):
                mujoco.mj_contactForce(model, data, i, wrench)
                total += abs(wrench[0])
        return total

    def loads(self) -> dict[tuple[int, int], float]:
        """The true load on each block in the tower (N): the normal force the blocks of the layer
        above press on its top face with. What the friction a push must beat grows with; zero for a
        block nothing rests on. Keyed by (layer, slot)."""
        model, data = self.world.model, self._awake_copy()
        slot_of = {geom: self.slot_of(b) for b, geom in self.world.block_geom.items()}
        load = {where: 0.0 for where in slot_of.values() if where is not None}
        wrench = np.zeros(6)
        for i in range(data.ncon):
            contact = data.contact[i]
            a, b = slot_of.get(contact.geom1), slot_of.get(contact.geom2)
            if a is None or b is None or abs(a[0] - b[0]) != 1:
                continue
            mujoco.mj_contactForce(model, data, i, wrench)
            lower = a if a[0] < b[0] else b
            load[lower] += float(abs(wrench[0]))
        return load

    def _awake_copy(self) -> mujoco.MjData:
        """The world's data with every contact and force worked out, the world itself untouched: a
        tower at rest sleeps, and the engine finds no contacts for sleeping bodies."""
        model, data = self.world.model, copy.copy(self.world.data)
        flag = int(mujoco.mjtEnableBit.mjENBL_SLEEP)
        slept = model.opt.enableflags & flag
        model.opt.enableflags &= ~flag
        try:
            mujoco.mj_forward(model, data)
        finally:
            model.opt.enableflags |= slept
        return data

    def fingertip_force(self) -> float:
        """Force in the robot's compliant fingertip (N): stiffness times deflection."""
        return abs(self.world.fingertip_deflection()) * self.world.cell.tool.fingertip_stiffness

    # --- for tests and benchmarks beyond this process ---------------------------------------

    def document(self, loads: bool = False) -> dict:
        """What really is, as the simulated cell serves it (`/truth.json`): every block's pose in
        the tower frame and its slot, the tower's occupancy, what fell, and with `loads` the true
        load on each block of the tower ("layer,slot": N, see `loads`)."""
        blocks = {}
        for b in self.world.blocks:
            pose = self.pose(b.index)
            blocks[b.index] = {"position": pose.position.tolist(), "axis": pose.axis.tolist(),
                               "tilt_deg": float(np.degrees(pose.tilt)), "slot": self.slot_of(b.index)}
        try:
            layers = [[int(v) for v in row] for row in self.tower_state().layers]
        except ValueError:
            layers = None
        document = {"time": self.world.time, "blocks": blocks, "layers": layers,
                    "fallen": self.fallen()}
        if loads:
            document["loads"] = {f"{layer},{slot}": n for (layer, slot), n in self.loads().items()}
        return document

    def block_at(self, layer: int, slot: int) -> int | None:
        """The block sitting in (layer, slot), if any."""
        for b in self.world.blocks:
            if self.slot_of(b.index) == (layer, slot):
                return b.index
        return None
