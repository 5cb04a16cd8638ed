"""The simulated cell: MuJoCo model and data, stepped in simulated time, with the arm's servo
targets, the gripper, the wrist force/torque sensor (noise and slow bias drift) and the cameras.

This is the physical world the virtual firmware and the camera server talk to. It knows nothing of
the serial protocol. The ground truth a test may read lives in `ground_truth.py`.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from hardware.sim import mjcf
from hardware.sim.blocks import BlockSpec, draw_tower
from planning.game.cell.model import Cell

SETTLE_S = 1.0
# Each finger's drive moves its set-point at this speed, as a real gripper's closing-speed setting
# does. A set-point that jumped to the goal let the force-limited fingers slam into a block at
# about 0.6 m/s: 30-60 N impacts that shoved the gripped block into the layer above.
FINGER_SPEED = 0.025  # m/s


class SimBuildError(RuntimeError):
    """The simulator cannot build a model from this cell."""


@dataclass
class SavedState:
    """Everything of a world at one moment: the engine's whole data (so that what sleeps and the
    solver's warm start come back too, and a run from a restored state repeats exactly), the
    fingers' goal, the sensor's bias and its noise generator."""
    data: mujoco.MjData
    finger_goal: float
    bias: np.ndarray
    rng_state: dict


class SimWorld:
    """One simulated cell with a tower drawn from `seed`. The tower is settled on construction."""

    def __init__(self, cell: Cell, seed: int = 1, *, markers: bool = True,
                 probe_stage: bool = False, board: str | None = None, settle_s: float = SETTLE_S):
        self.cell = cell
        self.seed = seed
        self.blocks: list[BlockSpec] = draw_tower(cell.blocks, seed)
        built = mjcf.build(cell, self.blocks, markers_on=markers, probe_stage=probe_stage, board=board)
        self.built = built
        try:
            self.model = mujoco.MjModel.from_xml_string(built.xml, built.assets)
        except ValueError as exc:
            raise SimBuildError(f"the simulator cannot build cell {cell.name!r}: {exc}") from None
        self.data = mujoco.MjData(self.model)
        self._rng = np.random.default_rng(seed + 7919)
        self._finger_goal = 0.0
        self._bias = np.zeros(6)
        self._ids()
        self.place_arm(np.array(cell.arm.home))
        self.set_gripper(cell.tool.stroke)
        self._open_fingers()
        mujoco.mj_forward(self.model, self.data)
        self.step_for(settle_s)
        self.data.time = 0.0  # the world's clock starts once the tower stands
        self._renderers: dict[tuple[int, int], mujoco.Renderer] = {}

    def _ids(self) -> None:
        m = self.model
        self.joint_qpos = np.array([m.jnt_qposadr[m.joint(f"joint{i + 1}").id] for i in range(6)])
        self.joint_dof = np.array([m.jnt_dofadr[m.joint(f"joint{i + 1}").id] for i in range(6)])
        self.arm_act = np.array([m.actuator(f"joint{i + 1}").id for i in range(6)])
        self.finger_qpos = [m.jnt_qposadr[m.joint(f"finger_{s}").id] for s in "ab"]
        self.finger_act = [m.actuator(f"finger_{s}").id for s in "ab"]
        self.block_body = {b.index: m.body(f"block{b.index}").id for b in self.blocks}
        self._spec_of = {b.index: b for b in self.blocks}
        self.block_geom = {b.index: m.geom(f"block{b.index}").id for b in self.blocks}
        self.fingertip_qpos = m.jnt_qposadr[m.joint("fingertip").id]
        self._force_adr = m.sensor_adr[m.sensor("wrist_force").id]
        self._torque_adr = m.sensor_adr[m.sensor("wrist_torque").id]
        arm_root = m.body_rootid[m.jnt_bodyid[m.joint("joint1").id]]
        self._arm_bodies = {b for b in range(m.nbody) if m.body_rootid[b] == arm_root}

    # --- time ---------------------------------------------------------------------------------

    @property
    def time(self) -> float:
        """Simulated seconds since the tower settled."""
        return float(self.data.time)

    @property
    def timestep(self) -> float:
        return float(self.model.opt.timestep)

    def step(self, n: int = 1) -> None:
        for _ in range(n):
            self._drive_fingers()
            mujoco.mj_step(self.model, self.data)
            self._drift_bias()

    def step_for(self, seconds: float) -> None:
        self.step(int(round(seconds / self.timestep)))

    def block_spec(self, block: int) -> BlockSpec:
        """The drawn sizes of block `block` (by index)."""
        return self._spec_of[block]

    def blocks_asleep(self, blocks: list[int] | None = None) -> bool:
        """Whether every block (of `blocks`, by index) sleeps: nothing moves them until
        something awake touches them, so a still scene's future is its present."""
        indices = self.block_body.keys() if blocks is None else blocks
        return not self.data.body_awake[[self.block_body[b] for b in indices]].any()

    # --- arm and gripper ----------------------------------------------------------------------

    def joint_positions(self) -> np.ndarray:
        return self.data.qpos[self.joint_qpos].copy()

    def joint_velocities(self) -> np.ndarray:
        return self.data.qvel[self.joint_dof].copy()

    def set_joint_targets(self, q: np.ndarray) -> None:
        """Servo set-points (rad); the joint controllers track them."""
        self.data.ctrl[self.arm_act] = q

    def joint_targets(self) -> np.ndarray:
        return self.data.ctrl[self.arm_act].copy()

    def place_arm(self, q: np.ndarray) -> None:
        """Put the arm at `q`, at rest, with the servos holding it (setting up a scene)."""
        self.data.qpos[self.joint_qpos] = q
        self.data.qvel[self.joint_dof] = 0.0
        self.set_joint_targets(q)
        mujoco.mj_forward(self.model, self.data)

    def set_gripper(self, width: float) -> None:
        """Target opening between the pads (m); closing on a block stops at the block, squeezing
        with the cell's grip force."""
        self._finger_goal = float(np.clip(width, 0.0, self.cell.tool.stroke)) / 2
        # The drive starts from where the fingers are: set-points left squeezed past a held block
        # would otherwise keep it gripped for most of an opening.
        for act, adr in zip(self.finger_act, self.finger_qpos):
            self.data.ctrl[act] = self.data.qpos[adr]

    def _drive_fingers(self) -> None:
        ctrl = self.data.ctrl
        for act in self.finger_act:
            at = float(ctrl[act])
            if at != self._finger_goal:
                step = FINGER_SPEED * self.model.opt.timestep
                ctrl[act] = min(at + step, self._finger_goal) if at < self._finger_goal \
                    else max(at - step, self._finger_goal)

    def gripper_width(self) -> float:
        return float(sum(self.data.qpos[a] for a in self.finger_qpos))

    def _open_fingers(self) -> None:
        """Setting up a scene: the fingers open at once, set-points and all."""
        for adr in self.finger_qpos:
            self.data.qpos[adr] = self.cell.tool.stroke / 2
        self.data.ctrl[self.finger_act] = self._finger_goal = self.cell.tool.stroke / 2

    # --- sensing ------------------------------------------------------------------------------

    def true_wrench(self) -> np.ndarray:
        """Force (N) and torque (N m) the tool exerts on the sensor, sensor frame, no noise.

        MuJoCo reports the force the parent (flange) exerts on the tool; the sensor reads the
        tool's weight and contact loads, so the sign is flipped."""
        f = self.data.sensordata[self._force_adr:self._force_adr + 3]
        t = self.data.sensordata[self._torque_adr:self._torque_adr + 3]
        return -np.concatenate([f, t])

    def wrench(self) -> np.ndarray:
        """What the wrist force/torque sensor reads: the true wrench plus white noise and a slowly
        wandering bias, as a strain-gauge sensor does."""
        tool = self.cell.tool
        noise = np.concatenate([self._rng.normal(0, tool.sensor_noise_force, 3),
                                self._rng.normal(0, tool.sensor_noise_torque, 3)])
        return self.true_wrench() + self._bias + noise

    def arm_contacts(self) -> list[tuple[str, str, float]]:
        """What the arm and tool touch now: (its geom or body, what it meets, normal force N),
        strongest first. For telling what an overload met; nothing here reaches the controller."""
        m, d = self.model, self.data
        found = []
        force = np.zeros(6)
        for i in range(d.ncon):
            c = d.contact[i]
            g1, g2 = int(c.geom[0]), int(c.geom[1])
            b1, b2 = m.geom_bodyid[g1], m.geom_bodyid[g2]
            if (b1 in self._arm_bodies) == (b2 in self._arm_bodies):
                continue
            ours, other = (g1, g2) if b1 in self._arm_bodies else (g2, g1)
            mujoco.mj_contactForce(m, d, i, force)
            found.append((_name(m, ours), _name(m, other), float(force[0])))
        return sorted(found, key=lambda f: -f[2])

    def fingertip_deflection(self) -> float:
        """How far the compliant fingertip is pushed in along the rod (m, signed along tool x)."""
        return float(self.data.qpos[self.fingertip_qpos])

    def _drift_bias(self) -> None:
        rate = self.cell.tool.sensor_bias_drift
        if rate > 0:
            step = rate * np.sqrt(self.timestep)
            self._bias[:3] += self._rng.normal(0, step, 3)
            self._bias[3:] += self._rng.normal(0, step * 0.05, 3)

    def place_board(self, world_from_board: np.ndarray) -> None:
        """Stand the calibration board (worlds built with board="stage") at a pose: its x axis is
        the printed face's normal, y the print's right, z its up."""
        body = self.model.body("board_stage")
        mocap = self.model.body_mocapid[body.id]
        quat = np.empty(4)
        mujoco.mju_mat2Quat(quat, np.asarray(world_from_board[:3, :3], float).ravel())
        self.data.mocap_pos[mocap] = world_from_board[:3, 3]
        self.data.mocap_quat[mocap] = quat
        mujoco.mj_forward(self.model, self.data)

    # --- cameras ------------------------------------------------------------------------------

    def render(self, camera: str) -> np.ndarray:
        """RGB image (H, W, 3) from a cell camera at the current state."""
        cam = self.cell.camera(camera)
        key = (cam.height, cam.width)
        if key not in self._renderers:
            self._renderers[key] = mujoco.Renderer(self.model, cam.height, cam.width)
        renderer = self._renderers[key]
        renderer.update_scene(self.data, camera=camera)
        return renderer.render()

    def close(self) -> None:
        for renderer in self._renderers.values():
            renderer.close()
        self._renderers.clear()

    # --- state --------------------------------------------------------------------------------

    def save(self) -> SavedState:
        copy = mujoco.MjData(self.model)
        mujoco.mj_copyData(copy, self.model, self.data)
        return SavedState(copy, self._finger_goal, self._bias.copy(), self._rng.bit_generator.state)

    def rebuild_tower(self, saved: SavedState) -> None:
        """Put every block back where it was in `saved` (a person rebuilding the tower), at rest;
        the arm, its set-points and the clock carry on."""
        for body in self.block_body.values():
            joint = self.model.body_jntadr[body]
            adr, dof = self.model.jnt_qposadr[joint], self.model.jnt_dofadr[joint]
            self.data.qpos[adr:adr + 7] = saved.data.qpos[adr:adr + 7]
            self.data.qvel[dof:dof + 6] = 0.0
        mujoco.mj_forward(self.model, self.data)

    def restore(self, saved: SavedState) -> None:
        """Back to `saved` exactly: a run from here repeats the run from there."""
        mujoco.mj_copyData(self.data, self.model, saved.data)
        self._finger_goal = saved.finger_goal
        self._bias = saved.bias.copy()
        self._rng.bit_generator.state = saved.rng_state


def _name(model: mujoco.MjModel, geom: int) -> str:
    """A geom's name, else its body's."""
    return model.geom(geom).name or model.body(model.geom_bodyid[geom]).name
