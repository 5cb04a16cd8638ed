"""The safety monitor holds the arm while something stays in the workspace, but not for ever: when
what stays is nothing the looks can read (blocks fallen with their markers out of sight), the
move it was held in is stopped after HELD_LIMIT_S and the turn is given up with a reason. A watch
that cannot see (a silent camera, an error in its thread) stops the arm and says why."""

import itertools
from types import SimpleNamespace

import numpy as np
import pytest

from controller.safety import monitor as safety
from controller.safety.monitor import (HELD_LIMIT_S, LOOK_AFTER_S, Level, SafetyMonitor,
                                       SafetyWatchError)
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


class Camera:
    """A camera source: a new frame at every call, or the same one for ever when silent."""

    def __init__(self, silent: bool = False):
        self.silent, self.numbers = silent, itertools.count(1)
        self.frame = SimpleNamespace(image=np.zeros((4, 4, 3), np.uint8), time=0.0, number=0)

    def latest(self):
        if not self.silent:
            self.frame = SimpleNamespace(image=self.frame.image, time=self.frame.time + 0.1,
                                         number=next(self.numbers))
        return self.frame


def _monitor(default_cell, seeing=("left",), cameras=None):
    """A monitor whose cameras in `seeing` see something in the workspace in every frame."""
    arm = HeldArm()
    link = SimpleNamespace(cell=default_cell, arm=arm, perception=Perception(default_cell),
                           cameras=cameras or {})
    monitor = SafetyMonitor(link, ArmModel(default_cell))
    monitor.inside.update = lambda name, image, t, exclude: \
        SimpleNamespace(fraction=0.02) if name in seeing else None
    monitor.near.update = lambda name, image, t, exclude: None
    monitor._arm_mask = lambda name, shape, t=None: np.zeros(shape[:2], bool)
    monitor.looks = []
    monitor._look_at_what_stays = monitor.looks.append   # the looks find no fall, no block
    monitor._paced_at = lambda level: 0.0
    return monitor, arm


def _frames(monitor, times, cameras=("left",)):
    image = np.zeros((4, 4, 3), np.uint8)
    for t in times:
        for name in cameras:
            monitor._check(name, SimpleNamespace(image=image, time=t))


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


def test_one_camera_seeing_the_workspace_clear_does_not_reset_the_hold(default_cell):
    """A block dropped where only the left camera sees it: the right camera's clear frames
    neither let the arm go nor start the hold's clock again (a seed-2 match was held for
    hours, with no look and no limit, as each right frame reset it)."""
    monitor, arm = _monitor(default_cell, seeing=("left",))
    monitor.arm_at_work = True
    _frames(monitor, np.arange(0.0, LOOK_AFTER_S + 0.5, 0.25), cameras=("left", "right"))
    assert monitor.level is Level.INSIDE and arm.rates == [0.0]
    assert monitor.looks, "what stays was never looked at"
    _frames(monitor, np.arange(LOOK_AFTER_S + 0.5, HELD_LIMIT_S + 0.5, 0.25), cameras=("left", "right"))
    assert arm.stops == 1 and "stayed in the workspace" in monitor.stuck


def test_the_hold_ends_when_every_camera_has_seen_the_workspace_clear(default_cell):
    monitor, arm = _monitor(default_cell, seeing=("left",))
    monitor.arm_at_work = True
    _frames(monitor, [0.0, 0.2], cameras=("left", "right"))
    monitor.inside.update = lambda name, image, t, exclude: None
    _frames(monitor, np.arange(0.4, 1.5, 0.2), cameras=("left", "right"))
    assert monitor.level is Level.CLEAR and arm.rates == [0.0, 1.0]
    assert monitor._inside_since is None


def test_a_silent_camera_blinds_the_watch_and_stops_the_arm(default_cell, monkeypatch):
    monkeypatch.setattr(safety, "SILENT_S", 0.2)
    monitor, arm = _monitor(default_cell, seeing=(),
                            cameras={"left": Camera(), "right": Camera(silent=True)})
    monitor._run()                  # returns once blind
    assert arm.stops == 1
    assert "camera right has sent no frame" in monitor.stuck and "--resume" in monitor.stuck
    with pytest.raises(SafetyWatchError, match="camera right"):
        monitor.check()
    with pytest.raises(SafetyWatchError):
        monitor.watch(None, 20)     # no new watch on a blind monitor


def test_an_error_in_the_watch_stops_the_arm_instead_of_holding_it_paused(default_cell):
    monitor, arm = _monitor(default_cell, cameras={"left": Camera()})

    def broken(name, frame):
        raise ValueError("no tower in sight")
    monitor._check = broken
    monitor._run()
    assert arm.stops == 1 and "ValueError: no tower in sight" in monitor.stuck
    with pytest.raises(SafetyWatchError, match="no tower in sight"):
        monitor.check()
