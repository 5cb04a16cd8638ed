"""The simulated arm as the firmware sees it: the device engine's hardware interface over the
simulated world (servo set-points, gripper, wrist sensor, the light curtain on the safety input),
and the device configuration a real controller board for this cell would carry."""

from __future__ import annotations

import logging

import numpy as np

from firmware_bridge.device.hardware import DeviceConfig, HardwareState
from firmware_bridge.messages import JointInfo
from hardware.sim.curtain import LightCurtain
from hardware.sim.world import SimWorld
from planning.game.cell.model import Cell

log = logging.getLogger(__name__)

# A wrist load past this share of the sensor's range (where the firmware latches OVERLOAD, on the
# load less its tare; this is the raw load, the tool's weight in it) is logged with what the arm
# touches, at most once per REPORT_EVERY_S of world time: what a fault met is then on record,
# which the controller, seeing only the wrist, cannot say.
REPORT_SHARE = 0.75
REPORT_EVERY_S = 1.0


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
        self._limit_n = REPORT_SHARE * world.cell.tool.sensor_force_range
        self._reported_at = -np.inf

    def read(self) -> HardwareState:
        w = self.world
        presence = self.curtain.broken() if self.curtain is not None else False
        wrench = w.wrench()
        # (abs: a world restored to an earlier state runs its clock back)
        if np.max(np.abs(wrench[:3])) > self._limit_n \
                and abs(w.time - self._reported_at) >= REPORT_EVERY_S:
            self._reported_at = w.time
            met = ", ".join(f"{ours} on {other} {force:.0f} N"
                            for ours, other, force in w.arm_contacts())
            log.warning("the wrist reads %s N at t=%.3f s: %s", np.round(wrench[:3]).tolist(),
                        w.time, met or "no contact (an acceleration)")
        return HardwareState(w.joint_positions(), w.joint_velocities(), w.gripper_width(), wrench,
                             presence)

    def command_joints(self, q: np.ndarray) -> None:
        self.world.set_joint_targets(q)

    def command_gripper(self, width: float, force: float) -> None:
        # The gripper's drive limits its squeeze to the commanded force (within its maximum).
        limit = min(float(force), float(self._default_force[1])) if force > 0 else float(self._default_force[1])
        for act in self._finger_acts:
            self.world.model.actuator_forcerange[act] = [-limit, limit]
        self.world.set_gripper(width)
