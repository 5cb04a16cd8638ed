"""An ideal arm for the device engine: joints follow their set-points with a short lag, a gripper
that moves at a fixed speed, and a wrist sensor that reads whatever force the test applies.

Used by the tests and the link benchmark, where the protocol, not the physics, is under test.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from firmware_bridge.device.hardware import HardwareState


class IdealArm:
    def __init__(self, q0: np.ndarray, lag_s: float = 0.005, gripper_speed: float = 0.1,
                 control_period: float = 0.001, noise_n: float = 0.0, seed: int = 0):
        self.q = np.array(q0, float)
        self.qd = np.zeros_like(self.q)
        self._target = self.q.copy()
        self._alpha = min(1.0, control_period / lag_s)
        self._period = control_period
        self.gripper_width = 0.0
        self._gripper_target = 0.0
        self._gripper_step = gripper_speed * control_period
        self.gripper_block: float | None = None   # width of an object between the fingers
        # The force the outside world applies, as a function of the joints (sensor frame).
        self.force_at: Callable[[np.ndarray], np.ndarray] = lambda q: np.zeros(6)
        self._noise = noise_n
        self._rng = np.random.default_rng(seed)
        self.presence = False                     # the safety input, as the test sets it

    def read(self) -> HardwareState:
        wrench = np.asarray(self.force_at(self.q), float).copy()
        if self._noise:
            wrench[:3] += self._rng.normal(0.0, self._noise, 3)
        return HardwareState(self.q.copy(), self.qd.copy(), self.gripper_width, wrench,
                             self.presence)

    def command_joints(self, q: np.ndarray) -> None:
        self._target = np.array(q, float)
        self.advance()

    def command_gripper(self, width: float, force: float) -> None:
        self._gripper_target = width

    def advance(self) -> None:
        """One control period of motion."""
        previous = self.q.copy()
        self.q = self.q + self._alpha * (self._target - self.q)
        self.qd = (self.q - previous) / self._period
        goal = self._gripper_target
        if self.gripper_block is not None:
            goal = max(goal, self.gripper_block)
        step = np.clip(goal - self.gripper_width, -self._gripper_step, self._gripper_step)
        self.gripper_width += float(step)
