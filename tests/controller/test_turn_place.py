"""The place and pull phases against a recording arm: every guarded place move starts from a fresh
tare (the tool has turned since the last one and its weight would otherwise read as a push), and a
pull that drags the tower lets the block go, puts it back and rules it out."""

from types import SimpleNamespace

import numpy as np

from controller.turn import PULL_GUARD_N, RobotTurn, TurnReport
from firmware_bridge.client import MotionResult
from planning.looseness import LoosenessBelief
from planning.tower import TowerState
from tests.controller.test_turn_checks import observation


class RecordingArm:
    def __init__(self, q, stop_when=None):
        self.q = np.array(q, float)
        self.time = 0.0
        self.calls = []
        self.stop_when = stop_when or (lambda guard: False)   # which guarded moves trip

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
        trips = guard is not None and self.stop_when(guard)
        self.q = np.array(positions[len(positions) // 3 if trips else -1], float)
        self.time += float(times[-1])
        self.calls.append(("follow", guard is not None))
        return MotionResult("guard" if trips else "done", 1, self.time, 0.0, self.q)


class Recorder:
    def start(self):
        pass

    def stop(self):
        return [(0.0, np.zeros(6))]


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


def test_a_pull_that_drags_the_tower_lets_go_puts_the_block_back_and_rules_it_out(planner,
                                                                                default_cell):
    arm = RecordingArm(planner.arm.home, stop_when=lambda guard: guard[1] == PULL_GUARD_N)
    turn = RobotTurn(SimpleNamespace(arm=arm, cell=default_cell, forces=Recorder()), planner)
    belief = LoosenessBelief.prior(TowerState.fresh())
    seen = observation([])
    report = TurnReport(1)
    assert turn._pull_out((7, 1), seen, 19, belief, report) is None
    assert (7, 1) in belief.stuck and belief.p_loose[7, 1] == 0.0
    assert [(g["layer"], g["slot"]) for g in report.let_go] == [(7, 1)]
    opened = arm.calls.index(("gripper", default_cell.tool.stroke), arm.calls.index(("gripper", 0.0)))
    # after letting go: a straight move away, then the restore's transit, approach and guarded push
    assert arm.calls[opened + 1:].count(("follow", True)) == 1
    pull = RecordingArm(planner.arm.home)
    turn = RobotTurn(SimpleNamespace(arm=pull, cell=default_cell, forces=Recorder()), planner)
    assert turn._pull_out((7, 1), seen, 19, belief, TurnReport(2)) is not None
