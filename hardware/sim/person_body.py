"""The simulated person's finger and hand in the world (hardware/sim/person.py decides what they
do): two mocap bodies that move a physics step at a time, a sprung fingertip that feels its push,
and a hand that holds a block by a weld.

Moves are generators that yield once per physics step, so the person and the tower run in one
simulated time. Between moves the finger and hand go up over the tower and off to the person's
side of the table (-y of the tower, beyond the cell's light curtain), as a real reach would.
"""

from __future__ import annotations

import mujoco
import numpy as np

from hardware.sim.ground_truth import GroundTruth
from hardware.sim.mocap import overlaps_square, slerp, weld, weld_force
from hardware.sim.mjcf import PERSON_PARK
from hardware.sim.world import SimWorld

REACH_SPEED = 0.25          # m/s, the hand and finger in the air
PULL_SPEED = 0.05           # m/s, drawing a block out, and backing off the tower
LEAVE = 0.03                # a hand or finger done at the tower backs off this far first (m)
ABOVE = 0.08                # moves over the tower this far above its top (m)
# Where the person's hand comes up over the table: their side, beyond the cell's light curtain
# (-y of the tower), so every reach to the tower crosses it as a real one would.
PLAYER_REACH = 0.6


class PersonBody:
    def __init__(self, world: SimWorld, truth: GroundTruth):
        self.world = world
        self.truth = truth
        m = world.model
        self.finger = m.body_mocapid[m.body("person_finger").id]
        self.hand = m.body_mocapid[m.body("person_hand").id]
        self.hand_body = m.body("person_hand").id
        self.grip = m.equality("person_grip").id
        self._spring = m.jnt_qposadr[m.joint("person_finger_spring").id]
        self._stiffness = float(m.jnt_stiffness[m.joint("person_finger_spring").id])

    @property
    def finger_force_n(self) -> float:
        """The push felt in the fingertip (N)."""
        return max(0.0, -self._stiffness * float(self.world.data.qpos[self._spring]))

    def park(self) -> None:
        """Let go, and take the finger and hand off the table."""
        data = self.world.data
        self.release()
        data.mocap_pos[self.finger], data.mocap_pos[self.hand] = PERSON_PARK
        data.mocap_quat[self.finger] = data.mocap_quat[self.hand] = [1.0, 0.0, 0.0, 0.0]

    # --- moving ------------------------------------------------------------------------------------

    def reach(self, mocap: int, goal: np.ndarray):
        """From wherever it is to `goal`, by way of the air above the tower."""
        data = self.world.data
        top = self.top_z() + ABOVE
        here = data.mocap_pos[mocap].copy()
        if here[2] < 0:                                  # from under the table: come in from the side
            here = self.side_point(goal, top)
            data.mocap_pos[mocap] = here
            yield
        yield from self.line(mocap, np.array([here[0], here[1], max(top, here[2])]), REACH_SPEED)
        yield from self.line(mocap, np.array([goal[0], goal[1], top]), REACH_SPEED)
        yield from self.line(mocap, goal, REACH_SPEED)

    def leave(self, mocap: int, away: np.ndarray, distance: float = LEAVE):
        """Back `distance` along `away`, up over the tower, and off to the person's side."""
        data = self.world.data
        here = data.mocap_pos[mocap].copy()
        yield from self.line(mocap, here + away * distance, PULL_SPEED)
        top = self.top_z() + ABOVE
        yield from self.line(mocap, np.array([*data.mocap_pos[mocap][:2], top]), REACH_SPEED)
        yield from self.line(mocap, self.side_point(here, top), REACH_SPEED)
        self.park()
        yield

    def line(self, mocap: int, goal: np.ndarray, speed: float, quat: np.ndarray | None = None,
             until=None):
        """Straight to `goal` at `speed` (turning to `quat`), stopping early once `until()`."""
        data = self.world.data
        start = data.mocap_pos[mocap].copy()
        q0 = data.mocap_quat[mocap].copy()
        n = max(1, int(np.ceil(np.linalg.norm(goal - start) / (speed * self.world.timestep))))
        for i in range(1, n + 1):
            data.mocap_pos[mocap] = start + (goal - start) * i / n
            if quat is not None:
                data.mocap_quat[mocap] = slerp(q0, quat, i / n)
            yield
            if until is not None and until():
                return

    def hold(self, body: int) -> None:
        """Close the hand on `body`: weld it where it is relative to the hand."""
        weld(self.world, self.grip, self.hand_body, body)

    def held_force(self) -> np.ndarray:
        """What the hand holds its block with (world frame, N): the block's pull or push back."""
        return weld_force(self.world, self.grip)

    def release(self) -> None:
        self.world.data.eq_active[self.grip] = 0

    # --- where things are --------------------------------------------------------------------------

    def near(self, block: int) -> np.ndarray:
        """The horizontal unit vector along `block` toward the person, who stands on the -y side."""
        axis = self.world.data.xmat[self.world.block_body[block]].reshape(3, 3)[:, 0].copy()
        axis[2] = 0.0
        axis /= np.linalg.norm(axis)
        return axis if axis[1] < 0 else -axis

    def top_z(self) -> float:
        return max(float(self.world.data.xpos[b][2]) for b in self.world.block_body.values())

    def side_point(self, near: np.ndarray, top: float) -> np.ndarray:
        """Where the person's hand comes into the air over the table: its side of the tower."""
        _, ty = self.world.cell.tower.position
        return np.array([near[0], ty - PLAYER_REACH, top])

    def in_workspace(self, p: np.ndarray, top: float, margin: float = 0.12) -> bool:
        """Whether any part of the hand, its centre at `p` (world), is inside the box `margin`
        around the tower's footprint and above its top: the workspace as the product defines it
        (12 cm). Each of the hand's boxes is tested against it exactly (separating axes in the
        table's plane, and their heights)."""
        m = self.world.model
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, self.world.data.mocap_quat[self.hand])
        hand = rot.reshape(3, 3)
        half = self.world.cell.blocks.length.mean / 2 + margin
        for geom in np.flatnonzero(m.geom_bodyid == self.hand_body):
            centre = p + hand @ m.geom_pos[geom]
            local = np.zeros(9)
            mujoco.mju_quat2Mat(local, m.geom_quat[geom])
            axes = hand @ local.reshape(3, 3)
            signs = np.array([[x, y, z] for x in (-1, 1) for y in (-1, 1) for z in (-1, 1)])
            corners = np.array([self.truth.to_tower(centre + axes @ (s * m.geom_size[geom]))
                                for s in signs])
            if corners[:, 2].min() > top + margin or corners[:, 2].max() < 0.0:
                continue
            in_plane = np.array([self.truth.to_tower(centre + axes[:, k])[:2]
                                 - self.truth.to_tower(centre)[:2] for k in (0, 1)])
            if overlaps_square(corners[:, :2], in_plane, half):
                return True
        return False
