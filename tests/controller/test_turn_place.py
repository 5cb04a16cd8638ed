"""The place phase against a recording arm: every guarded move starts from a fresh tare, since the
tool has turned since the last one and its weight would otherwise read as a push."""

from types import SimpleNamespace

import numpy as np

from controller.turn import RobotTurn
from firmware_bridge.client import MotionResult


class RecordingArm:
    def __init__(self, q):
        self.q = np.array(q, float)
        self.time = 0.0
        self.calls = []

    def telemetry(self):
        return SimpleNamespace(q_set=self.q.copy(), device_time=self.time, gripper_width_m=0.025)

    def device_time(self):
        return self.time

    def wait_for(self, predicate, timeout_s):
        self.time += 0.5
        return self.telemetry()

    def tare(self):
        self.calls.append(("tare",))

    def gripper(self, width_m, force_n=10.0):
        self.calls.append(("gripper", width_m))

    def follow(self, times, positions, guard=None):
        self.q = np.array(positions[-1], float)
        self.time += float(times[-1])
        self.calls.append(("follow", guard is not None))
        return MotionResult("done", 1, self.time, 0.0, self.q)


def test_every_guarded_place_move_follows_a_tare(planner, default_cell):
    pull = planner.pull(planner.arm.home, 5, 0, 0.035, tower_layers=19)
    plan = planner.place(pull.q_end, 19, 2, pull.held)
    arm = RecordingArm(pull.q_end)
    turn = RobotTurn(SimpleNamespace(arm=arm, cell=default_cell), planner)
    turn._run_place(plan, 19)
    guarded = [i for i, c in enumerate(arm.calls) if c == ("follow", True)]
    assert len(guarded) == 2                                   # the set-down and the align push
    assert all(arm.calls[i - 1] == ("tare",) for i in guarded)
    assert ("gripper", default_cell.tool.stroke) in arm.calls  # the release
