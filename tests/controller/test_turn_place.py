"""The place and pull phases against a recording arm: every guarded place move starts from a fresh
tare (the tool has turned since the last one and its weight would otherwise read as a push), and a
pull that drags the tower lets the block go, puts it back and rules it out."""

from types import SimpleNamespace

import numpy as np
import pytest

from controller.turn import GRASP_GUARD_N, PULL_GUARD_N, PULL_RESUMES, REGRASP_SHIFT, RobotTurn
from controller.turn_report import TurnError, TurnReport
from planning.motion.planner import PULL_GRIP_N, PUSH_THROUGH
from firmware_bridge.client import MotionOutcome, MotionResult
from planning.looseness import LoosenessBelief
from planning.tower import TowerState
from tests.controller.test_turn_checks import observation


class RecordingArm:
    def __init__(self, q, stop_when=None):
        self.q = np.array(q, float)
        self.time = 0.0
        self.calls = []
        self.stop_when = stop_when or (lambda guard: False)   # which guarded moves trip
        self.wrench = np.zeros(6)
        self.holds = 0.025        # what closing fingers stop on (m): a block
        self.width = 0.025        # the fingers' opening telemetry reports (m)
        self.grip_forces_n = []   # the squeeze of every close

    def telemetry(self):
        return SimpleNamespace(q_set=self.q.copy(), device_time=self.time,
                               gripper_width_m=self.width, wrench=self.wrench)

    def device_time(self):
        return self.time

    def wait_for(self, predicate, timeout_s):
        self.time += 0.5
        return self.telemetry()

    def tare(self):
        self.calls.append(("tare",))

    def gripper(self, width_m, force_n=10.0):
        self.calls.append(("gripper", width_m))
        if width_m == 0.0:
            self.grip_forces_n.append(force_n)
        return max(width_m, self.holds)

    def follow(self, times, positions, guard=None):
        trips = guard is not None and self.stop_when(guard)
        self.q = np.array(positions[len(positions) // 3 if trips else -1], float)
        self.time += float(times[-1])
        self.calls.append(("follow", guard is not None))
        return MotionResult(MotionOutcome.GUARD if trips else MotionOutcome.DONE, 1, self.time, 0.0, self.q)


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


def test_a_block_that_turned_in_the_fingers_on_the_way_up_is_not_set_down(planner, default_cell):
    pull = planner.pull(planner.arm.home, 5, 0, 0.035, tower_layers=19)
    plan = planner.place(pull.q_end, 19, 2, pull.held)
    arm = RecordingArm(pull.q_end)
    turn = RobotTurn(SimpleNamespace(arm=arm, cell=default_cell), planner)
    turn.grip.check_held()                               # held at 25.0 mm after the pull
    arm.telemetry = lambda: SimpleNamespace(q_set=arm.q.copy(), device_time=arm.time,
                                            gripper_width_m=0.0284, wrench=arm.wrench)
    with pytest.raises(TurnError, match="turned in the gripper"):
        turn._run_place(plan, 19)
    assert ("gripper", default_cell.tool.stroke) not in arm.calls   # never released
    assert arm.calls.count(("follow", False)) == 1                  # the carry to the top only


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


def test_fingers_that_meet_the_block_feel_to_either_side_then_give_it_up(planner, default_cell):
    arm = RecordingArm(planner.arm.home, stop_when=lambda guard: guard[1] == GRASP_GUARD_N)
    arm.wrench = np.array([0.0, 0.0, -2.0, -0.04, 0.0, 0.0])   # a finger at tool +y was pressed
    turn = RobotTurn(SimpleNamespace(arm=arm, cell=default_cell, forces=Recorder()), planner)
    belief = LoosenessBelief.prior(TowerState.fresh())
    report = TurnReport(1)
    assert turn._pull_out((7, 1), observation([]), 19, belief, report) is None
    assert (7, 1) in belief.stuck
    assert [(g["at"], g["layer"], g["slot"]) for g in report.let_go] == [("approach", 7, 1)]
    tries = report.touches
    assert len(tries) == 3 and tries[0]["shift_mm"] == 0.0
    # the second try goes toward the finger that touched, the third to the other side
    plan = planner.pull(planner.arm.home, 7, 1, PUSH_THROUGH, tower_layers=19)
    tool_y = planner.arm.fk(plan.step("approach").trajectory.end, "grasp").R[:, 1]
    toward = np.sign(tool_y @ planner.tower.across(7))
    shifts = [g["shift_mm"] for g in tries[1:]]
    assert shifts == [toward * REGRASP_SHIFT * 1000, -toward * REGRASP_SHIFT * 1000]
    assert ("gripper", 0.0) not in arm.calls                   # it never closed on anything
    # every approach followed a fresh tare
    approaches = [i for i, c in enumerate(arm.calls) if c == ("follow", True)][:3]
    assert all(arm.calls[i - 1] == ("tare",) for i in approaches)


def test_a_finger_that_meets_the_block_once_finds_it_beside_and_pulls(planner, default_cell):
    trips = iter([True])
    arm = RecordingArm(planner.arm.home,
                       stop_when=lambda guard: guard[1] == GRASP_GUARD_N and next(trips, False))
    turn = RobotTurn(SimpleNamespace(arm=arm, cell=default_cell, forces=Recorder()), planner)
    belief = LoosenessBelief.prior(TowerState.fresh())
    report = TurnReport(1)
    assert turn._pull_out((7, 1), observation([]), 19, belief, report) is not None
    assert (7, 1) not in belief.stuck
    assert len(report.touches) == 1 and not report.let_go
    assert ("gripper", 0.0) in arm.calls


def scripted_pulls(turn, arm, traces):
    """Make the pull moves end as scripted: each trace of forces (N, 4 ms apart, ending at the
    trip) trips the guard; when the script runs out the pull completes."""
    script = iter(traces)
    moves = []

    def follow_recording(step, axis):
        moves.append(step)
        forces = next(script, None)
        if forces is None:
            arm.q = np.array(step.trajectory.end, float)
            return MotionResult(MotionOutcome.DONE, 1, arm.time, 0.0, arm.q), [(arm.time, 0.3)]
        arm.q = np.array(step.trajectory.positions[len(step.trajectory.positions) // 4], float)
        arm.time += 0.2
        trace = [(arm.time - 0.004 * (len(forces) - 1 - k), f) for k, f in enumerate(forces)]
        return MotionResult(MotionOutcome.GUARD, 1, arm.time, forces[-1], arm.q), trace
    turn._follow_recording = follow_recording
    return moves


KNOCK = [0.3, 0.4, 0.2, 0.5, 0.3, 0.4, 0.3, 0.2, 0.4, 2.6]     # a light drag and one knock
DRAG = [1.6, 1.8, 1.7, 2.0, 1.9, 2.1, 2.2, 2.3, 2.4, 2.6]      # the tower coming along


def pull_with(planner, default_cell, traces):
    arm = RecordingArm(planner.arm.home)
    turn = RobotTurn(SimpleNamespace(arm=arm, cell=default_cell, forces=Recorder()), planner)
    moves = scripted_pulls(turn, arm, traces)
    belief = LoosenessBelief.prior(TowerState.fresh())
    report = TurnReport(1)
    pulled = turn._pull_out((7, 1), observation([]), 19, belief, report)
    return pulled, report, belief, moves, turn


def test_a_knock_during_the_pull_does_not_let_the_block_go(planner, default_cell):
    pull, report, belief, moves, turn = pull_with(planner, default_cell, [KNOCK])
    assert pull is not None and report.pull_resumed == 1 and not report.let_go
    # the rest of the pull goes on from where the guard stopped to where the pull ends, guarded
    planned_end = planner.arm.fk(pull.step("pull").trajectory.end, "grasp").t
    assert np.allclose(planner.arm.fk(moves[1].trajectory.end, "grasp").t, planned_end, atol=1e-4)
    assert moves[1].guard.threshold_n == PULL_GUARD_N
    assert len(report.pull_trace) == len(KNOCK) + 2     # the knock, the rest, then the pull_out


def test_the_pull_holds_the_block_lightly_and_squeezes_it_once_out(planner, default_cell):
    pull, report, _, moves, turn = pull_with(planner, default_cell, [])
    assert pull is not None and not report.let_go
    assert turn.arm.grip_forces_n == [PULL_GRIP_N, default_cell.tool.grip_force]
    # the squeeze comes between the light pull and the rest of it
    assert [m.label for m in moves] == ["pull", "pull_out"]
    assert turn.arm.calls[-1] == ("gripper", 0.0)


def test_a_block_that_slides_out_of_the_light_grip_is_let_go(planner, default_cell):
    arm = RecordingArm(planner.arm.home)
    turn = RobotTurn(SimpleNamespace(arm=arm, cell=default_cell, forces=Recorder()), planner)
    scripted_pulls(turn, arm, [])
    closed = turn.moves.dwell_and_tare

    def fingers_slip():
        closed()
        arm.width = 0.0      # the pull that follows ends with the fingers closed on nothing
    turn.moves.dwell_and_tare = fingers_slip
    belief = LoosenessBelief.prior(TowerState.fresh())
    report = TurnReport(1)
    assert turn._pull_out((7, 1), observation([]), 19, belief, report) is None
    assert [g["at"] for g in report.let_go] == ["slip"] and (7, 1) in belief.stuck


def test_a_steady_drag_lets_the_block_go(planner, default_cell):
    pull, report, belief, _, turn = pull_with(planner, default_cell, [DRAG])
    assert pull is None and report.pull_resumed == 0 and (7, 1) in belief.stuck
    assert [g["at"] for g in report.let_go] == ["pull"]
    assert turn.dragged == {(7, 1)}


def test_a_block_that_dragged_the_tower_is_not_chosen_again_in_later_turns(planner, default_cell):
    _, _, _, _, turn = pull_with(planner, default_cell, [DRAG])
    later = turn._belief(TowerState.fresh(), observation([]))
    assert (7, 1) in later.stuck and later.p_loose[7, 1] == 0.0
    assert later.stuck == {(7, 1)}


def test_knock_after_knock_is_a_drag_after_all(planner, default_cell):
    pull, report, belief, _, _ = pull_with(planner, default_cell, [KNOCK] * (PULL_RESUMES + 1))
    assert pull is None and report.pull_resumed == PULL_RESUMES and (7, 1) in belief.stuck


def test_fingers_that_close_on_air_open_and_feel_to_either_side(planner, default_cell):
    arm = RecordingArm(planner.arm.home)
    closes = iter([0.0, 0.025, 0.025])   # the first close meets nothing, the second a block
    arm.gripper = lambda width_m, force_n=10.0: (arm.calls.append(("gripper", width_m)),
                                                 next(closes) if width_m == 0.0 else width_m)[1]
    turn = RobotTurn(SimpleNamespace(arm=arm, cell=default_cell, forces=Recorder()), planner)
    belief = LoosenessBelief.prior(TowerState.fresh())
    report = TurnReport(1)
    assert turn._pull_out((7, 1), observation([]), 19, belief, report) is not None
    assert [t.get("missed") for t in report.touches] == [True]
    assert arm.calls.count(("gripper", 0.0)) == 3     # two grasps, then the squeeze once out
    opened_again = arm.calls.index(("gripper", 0.0)) + 1
    assert arm.calls[opened_again] == ("gripper", default_cell.tool.stroke)


class Probed(Exception):
    """Enough probes to tell."""


def _choosing(planner, default_cell, options, travel_m, comes_out):
    """A turn whose every probe moves its block `travel_m` against a tight push, and whose
    push-through succeeds as `comes_out` says; returns what it probed and pushed through."""
    from controller.turn_report import ProbeRecord
    from planning.looseness import ProbeOutcome
    turn = RobotTurn(SimpleNamespace(arm=RecordingArm(planner.arm.home), cell=default_cell),
                     planner, options)
    probed, pushed = [], []

    def probe(source, obs, layers, top):
        probed.append(source)
        if len(probed) > 2:
            raise Probed()
        return (ProbeOutcome(*source, 0.55, travel_m, True, 0.5),
                ProbeRecord(*source, None, 0.5, 0.55, travel_m * 1000, 0.0), None)
    turn._probe = probe
    turn._push_through = lambda source, *a: pushed.append(source) or comes_out
    turn._retreat = turn._restore = lambda *a, **k: None
    state = TowerState.fresh()
    return turn, state, probed, pushed


def test_under_no_testing_a_block_the_probe_moved_must_be_the_one_taken(planner, default_cell):
    from planning.rules import RuleOptions
    no_testing = RuleOptions(no_testing=True)
    turn, state, probed, pushed = _choosing(planner, default_cell, no_testing, 0.002, False)
    belief = LoosenessBelief.prior(state)
    with pytest.raises(TurnError, match="no testing: the block in layer 4 slot 0 moved and would not come out"):
        turn._choose(state, belief, observation([]), {}, 19, TurnReport(1))
    assert len(probed) == 1 and pushed == probed
    # a tight block the probe did not move may be left for another
    turn, state, probed, pushed = _choosing(planner, default_cell, no_testing, 0.0002, True)
    with pytest.raises(Probed):
        turn._choose(state, LoosenessBelief.prior(state), observation([]), {}, 19, TurnReport(1))
    assert len(set(probed)) == 3 and pushed == []
