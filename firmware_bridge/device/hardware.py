"""What the arm's firmware runs against: the hardware it reads and drives (servos, gripper, wrist
sensor, the safety input) and the device's settings. The real arm, the simulator
(hardware/sim/virtual_firmware.py) and the tests' ideal arm each provide a `DeviceHardware`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from firmware_bridge.messages import JointInfo


@dataclass
class HardwareState:
    q: np.ndarray
    qd: np.ndarray
    gripper_width: float
    wrench: np.ndarray   # raw sensor reading: force N (3), torque N m (3), sensor frame
    presence: bool = False   # the safety input: the cell's presence sensor sees something


class DeviceHardware(Protocol):
    """What the firmware drives: joint servos, the gripper, the wrist sensor."""

    def read(self) -> HardwareState: ...

    def command_joints(self, q: np.ndarray) -> None: ...

    def command_gripper(self, width: float, force: float) -> None: ...


@dataclass(frozen=True)
class DeviceConfig:
    joints: tuple[JointInfo, ...]
    gripper_stroke: float
    force_range_n: float
    control_hz: int = 1000
    telemetry_hz: int = 250
    watchdog_s: float = 0.2
    max_points: int = 4096
    tracking_limit: float = 0.15      # rad between set-point and measured joint
    homing_speed_scale: float = 0.2
    start_tolerance: float = 0.02     # rad: a trajectory must start where the arm is commanded
    tare_samples: int = 20
    presence_hold_s: float = 0.5      # the safety input stays clear this long before motion goes on
