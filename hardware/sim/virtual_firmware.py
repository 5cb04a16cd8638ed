"""The simulated arm as the firmware sees it: the device engine's hardware interface over the
simulated world (servo set-points, gripper, wrist sensor, the light curtain on the safety input),
and the device configuration a real controller board for this cell would carry."""

from __future__ import annotations

import numpy as np

from firmware_bridge.device.hardware import DeviceConfig, HardwareState
from firmware_bridge.messages import JointInfo
from hardware.sim.curtain import LightCurtain
from hardware.sim.mjcf import JOINT_KP, JOINT_KV
from hardware.sim.world import SimWorld
from planning.game.cell.model import Cell


def device_config(cell: Cell) -> DeviceConfig:
    """The firmware's configuration for this cell: joint limits, speed limits, home pose."""
    joints = tuple(JointInfo(link.q_min, link.q_max, link.speed_max, home)
                   for link, home in zip(cell.arm.links, cell.arm.home))
    extra = {"presence_hold_s": cell.curtain.hold_s} if cell.curtain else {}
    return DeviceConfig(joints=joints, gripper_stroke=cell.tool.stroke,
                        force_range_n=cell.tool.sensor_force_range, **extra)


class SimHardware:
    """DeviceHardware over a SimWorld."""

    def __init__(self, world: SimWorld):
        self.world = world
        model = world.model
        self._finger_acts = world.finger_act
        self._default_force = model.actuator_forcerange[self._finger_acts[0]].copy()
        curtain = world.cell.curtain
        self.curtain = LightCurtain(world, curtain) if curtain is not None else None
        # The servo drives feed the set-point's speed forward, as real drives do. The simulated
        # servo (a position actuator: torque kp (set - q) - kv qdot) would otherwise trail a moving
        # set-point by kv/kp times the joint speed: up to 0.12 rad on a transit at three quarters
        # of the speed limit, against the firmware's 0.15 rad tracking limit, and transits
        # stopped on TRACKING faults now and then. With it, 0.002-0.04 rad.
        self._lead_s = np.array(JOINT_KV) / np.array(JOINT_KP)
        self._speed_max = np.array([link.speed_max for link in world.cell.arm.links])
        self._last_set: tuple[float, np.ndarray] | None = None

    def read(self) -> HardwareState:
        w = self.world
        presence = self.curtain.broken() if self.curtain is not None else False
        return HardwareState(w.joint_positions(), w.joint_velocities(), w.gripper_width(), w.wrench(),
                             presence)

    def command_joints(self, q: np.ndarray) -> None:
        q, now = np.array(q, float), self.world.time
        speed = np.zeros_like(q)
        if self._last_set is not None and now > self._last_set[0]:
            # the set-point's speed since the last tick; a jump (a fault stopping the arm where it
            # is) is no speed to feed forward beyond the joints' limits
            speed = np.clip((q - self._last_set[1]) / (now - self._last_set[0]),
                            -self._speed_max, self._speed_max)
        self._last_set = (now, q)
        self.world.set_joint_targets(q + self._lead_s * speed)

    def command_gripper(self, width: float, force: float) -> None:
        # The gripper's drive limits its squeeze to the commanded force (within its maximum).
        limit = min(float(force), float(self._default_force[1])) if force > 0 else float(self._default_force[1])
        for act in self._finger_acts:
            self.world.model.actuator_forcerange[act] = [-limit, limit]
        self.world.set_gripper(width)
