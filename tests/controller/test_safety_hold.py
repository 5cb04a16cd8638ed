"""The safety monitor holds the arm while something stays in the workspace, but not for ever: when
what stays is nothing the looks can read (blocks fallen with their markers out of sight), the
move it was held in is stopped after HELD_LIMIT_S and the turn is given up with a reason."""

from types import SimpleNamespace

import numpy as np

from controller.safety.monitor import HELD_LIMIT_S, Level, SafetyMonitor
from perception.pipeline import Perception
from planning.kinematics import ArmModel


class HeldArm:
    def __init__(self):
        self.stops, self.rates = 0, []

    def on_telemetry(self, listener) -> None:
        pass

    def set_rate(self, rate: float) -> None:
        self.rates.append(rate)

    def stop(self) -> None:
        self.stops += 1

    def device_time(self) -> float:
        return 0.0


def _monitor(default_cell):
    arm = HeldArm()
    link = SimpleNamespace(cell=default_cell, arm=arm, perception=Perception(default_cell), cameras={})
    monitor = SafetyMonitor(link, ArmModel(default_cell))
    monitor.inside.update = lambda name, image, t, exclude: SimpleNamespace(fraction=0.02)
    monitor._arm_mask = lambda name, shape, t=None: np.zeros(shape[:2], bool)
    monitor._look_at_what_stays = lambda t: None        # the looks find no fall, no block
    monitor._paced_at = lambda level: 0.0
    return monitor, arm


def _frames(monitor, times):
    image = np.zeros((4, 4, 3), np.uint8)
    for t in times:
        monitor._check("left", SimpleNamespace(image=image, time=t))


def test_what_stays_in_the_workspace_holds_the_arm_then_gives_the_turn_up(default_cell):
    monitor, arm = _monitor(default_cell)
    monitor.arm_at_work = True
    _frames(monitor, np.arange(0.0, HELD_LIMIT_S - 0.1, 0.5))
    assert monitor.level is Level.INSIDE and arm.rates == [0.0]
    assert monitor.stuck is None and arm.stops == 0
    _frames(monitor, [HELD_LIMIT_S, HELD_LIMIT_S + 0.5, HELD_LIMIT_S + 1.0])
    assert arm.stops == 1 and "stayed in the workspace" in monitor.stuck
    assert monitor.level is Level.INSIDE and arm.rates == [0.0]       # still held


def test_between_turns_nothing_is_given_up(default_cell):
    monitor, arm = _monitor(default_cell)
    monitor.arm_at_work = False          # the person's turn: their hand may stay as long as it takes
    _frames(monitor, np.arange(0.0, 2 * HELD_LIMIT_S, 0.5))
    assert monitor.stuck is None and arm.stops == 0
