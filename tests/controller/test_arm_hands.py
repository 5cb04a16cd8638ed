"""The arm's hands against a recording arm: every guarded place move starts from a fresh tare
(the tool has turned since the last one and its weight would otherwise read as a push); the grasp
feels for a turned block; a pull that drags the tower lets the block go and backs away; a knock
does not."""

from dataclasses import replace
from itertools import chain, repeat
from types import SimpleNamespace

import numpy as np
import pytest

from controller.turn.arm_hands import ArmHands
from controller.turn.arm_pulling import (ARM_HIDES_SLOTS, GRASP_GUARD_N, GRASP_TRIES,
                                         PULL_GUARD_N, PULL_RESUMES, RIDE_LOOK_EVERY_M,
                                         RIDE_WATCH_M, TAKE_GUARD_N)
from controller.turn.arm_placing import ALIGN_RESUMES, LANDED_HIGH_M, PLACE_RETRY_SHIFT, PLACE_TRIES
from controller.turn.checks import REGRASP_REACH
from controller.turn.hands import PlaceOrder
from controller.turn.hands import GaveUp
from controller.turn.report import HeldTurned, TowerFellError, TurnError
from firmware_bridge.client import MotionOutcome, MotionResult
from firmware_bridge.errors import ArmTimeout
from firmware_bridge.messages import Status
from planning.motion.paces import LIGHT_GUARD_N, LIGHT_STEP, LINE_STEP
from planning.motion.contact_geometry import PLACE_OVERHANG, PULL_GRIP_N, PUSH_THROUGH
from planning.motion.plans import PlanError
from tests.controller.test_turn_checks import observation


class RecordingArm:
    """Records what it is told. Guarded moves trip as `stop_when(guard)` says; a guarded pull
    move takes its wrist forces from `pull_traces` (N along the guard, 4 ms apart, ending at the
    trip, `pull_trip_at` of the way along), one trace per move, and runs to its end when they run
    out. A move run without waiting goes on as telemetry is waited for, until it is stopped."""

    def __init__(self, q, stop_when=None, pull_traces=()):
        self.q = np.array(q, float)
        self.time = 0.0
        self.calls = []
        self.stop_when = stop_when or (lambda guard: False)
        self.pull_traces = list(pull_traces)
        self.samples = [(0.0, np.zeros(6))]     # what the force recorder hands back
        self.slip_on_pull = False  # the fingers close on nothing during the pull
        self.wrench = np.zeros(6)
        self.holds = 0.025        # what closing fingers stop on (m): a block
        self.width = 0.025        # the fingers' opening telemetry reports (m)
        self.grip_forces_n = []   # the squeeze of every close
        self.pull_labels = []     # the length of each guarded pull move, in samples
        self.guarded = []         # (times, guard) of every guarded move
        self.running = None       # a move started without waiting, and how it goes
        self.pull_trip_at = 0.25  # how far along a pull move a trip comes (share of its samples)
        self.touch_at = 1 / 3     # and along any other guarded move `stop_when` trips
        self.pull_axis = None     # the last pull's guard direction
        self.slid = []            # (start, end) joint positions of each slide back under the pull's guard
        self.slide_trips = []     # wrist traces of slide backs that stop a third of the way in
        self.trip_force_n = 0.0   # the force along the guard a `stop_when` trip reports

    def telemetry(self):
        moving = self.running is not None and not self.running["stopped"] and \
            self.time < self.running["started"] + self.running["times"][self.running["last"]]
        return SimpleNamespace(q_set=self.q.copy(), device_time=self.time,
                               gripper_width_m=self.width, wrench=self.wrench,
                               status=Status.MOVING if moving else Status(0))

    def device_time(self):
        return self.time

    def wait_for(self, predicate, timeout_s):
        if self.running is None:
            self.time += 0.5
            return self.telemetry()
        # a move run without waiting goes on, 4 ms a telemetry frame, to its end or its trip
        deadline = self.time + timeout_s
        while True:
            run = self.running
            if not run["stopped"]:
                done = np.searchsorted(run["times"], self.time - run["started"], side="right") - 1
                self.q = np.array(run["positions"][min(max(done, 0), run["last"])], float)
            t = self.telemetry()
            if predicate(t):
                return t
            if self.time >= deadline:
                raise ArmTimeout("condition not met")
            self.time += 0.004

    def stop(self):
        self.calls.append(("stop",))
        if self.running is not None:
            self.running["stopped"] = True

    def wait_motion(self, handle, timeout_s=None):
        run, self.running = self.running, None
        if not run["stopped"]:       # how it ends, as a move waited for ends, in time
            now, self.time = self.time, run["started"]
            result = self.follow(run["times"], run["positions"], run["guard"])
            self.time = max(self.time, now)
            return result
        self.calls.append(("follow", run["guard"] is not None))
        if run["guard"] is not None:
            self.guarded.append((run["times"], run["guard"]))
        self.samples = [(self.time, np.zeros(6))]
        return MotionResult(MotionOutcome.STOPPED, 1, self.time, 0.0, self.q)

    def tare(self):
        self.calls.append(("tare",))

    def gripper(self, width_m, force_n=10.0):
        self.calls.append(("gripper", width_m))
        if width_m == 0.0:
            self.grip_forces_n.append(force_n)
        return max(width_m, self.holds)

    def follow(self, times, positions, guard=None, wait=True):
        if self._slides_back(guard):
            self.slid.append((np.array(positions[0], float), np.array(positions[-1], float)))
            self.calls.append(("slide_back",))
            forces = self.slide_trips.pop(0) if self.slide_trips else None
            self.q = np.array(positions[-1 if forces is None else len(positions) // 3], float)
            self.time += float(times[-1])
            if forces is None:
                return MotionResult(MotionOutcome.DONE, 1, self.time, 0.0, self.q)
            axis = np.asarray(guard[0], float)
            self.samples = [(self.time - 0.004 * (len(forces) - 1 - k), np.r_[f * axis, 0, 0, 0])
                            for k, f in enumerate(forces)]
            return MotionResult(MotionOutcome.GUARD, 1, self.time, forces[-1], self.q)
        if guard is not None and guard[1] == PULL_GUARD_N:
            self.pull_axis = np.asarray(guard[0], float)
        if not wait:
            trips = guard is not None and guard[1] == PULL_GUARD_N and bool(self.pull_traces)
            self.running = {"times": np.asarray(times, float), "positions": positions,
                            "guard": guard, "started": self.time, "stopped": False,
                            "last": self._trip_index(positions) if trips else len(positions) - 1}
            return "handle"
        if guard is not None:
            self.guarded.append((np.asarray(times, float), guard))
        if guard is not None and guard[1] == PULL_GUARD_N:
            return self._pull(times, positions, guard)
        trips = guard is not None and self.stop_when(guard)
        if trips:       # the wrist's reading while it ran, ending at the touch
            self.samples = [(self.time, np.zeros(6)), (self.time + 0.004, self.wrench.copy())]
        self.q = np.array(positions[int(len(positions) * self.touch_at) if trips else -1], float)
        self.time += float(times[-1])
        self.calls.append(("follow", guard is not None))
        return MotionResult(MotionOutcome.GUARD if trips else MotionOutcome.DONE, 1, self.time,
                            self.trip_force_n if trips else 0.0, self.q)

    def _pull(self, times, positions, guard):
        self.calls.append(("follow", True))
        self.pull_labels.append(len(positions))
        if self.slip_on_pull:
            self.width = 0.0
        axis = np.asarray(guard[0], float)
        if not self.pull_traces:
            self.q = np.array(positions[-1], float)
            self.time += float(times[-1])
            self.samples = [(self.time, np.r_[0.3 * axis, 0, 0, 0])]
            return MotionResult(MotionOutcome.DONE, 1, self.time, 0.0, self.q)
        forces = self.pull_traces.pop(0)
        self.q = np.array(positions[self._trip_index(positions)], float)
        self.time += 0.2
        self.samples = [(self.time - 0.004 * (len(forces) - 1 - k), np.r_[f * axis, 0, 0, 0])
                        for k, f in enumerate(forces)]
        return MotionResult(MotionOutcome.GUARD, 1, self.time, forces[-1], self.q)


    def _slides_back(self, guard) -> bool:
        """A move under the pull's guard the other way: a block given up slid back in."""
        return guard is not None and guard[1] == PULL_GUARD_N and self.pull_axis is not None \
            and np.allclose(np.asarray(guard[0], float), -self.pull_axis, atol=1e-6)

    def _trip_index(self, positions) -> int:
        """Where along a pull move a trip from `pull_traces` stops it."""
        return int(len(positions) * self.pull_trip_at)


class Recorder:
    """The link's force recorder: the samples the arm's last move left."""

    def __init__(self, arm):
        self.arm = arm

    def start(self):
        pass

    def stop(self):
        return self.arm.samples


def arm_hands(planner, default_cell, arm) -> ArmHands:
    """The hands on `arm`; their cameras see the tower as at the turn's look (`hands.obs`) unless
    the link's `seen` is set."""
    link = SimpleNamespace(arm=arm, cell=default_cell, forces=Recorder(arm), seen=None)
    link.observe = lambda: SimpleNamespace(observation=link.seen or hands.obs)
    hands = ArmHands(link, planner)
    hands.obs, hands.layers = observation([]), 19
    return hands


def test_a_tower_that_fell_as_the_block_came_out_stops_the_turn_with_the_block_held(
        planner, default_cell):
    arm = RecordingArm(planner.arm.home)
    hands = arm_hands(planner, default_cell, arm)
    hands.link.seen = replace(observation([]), fell=True)
    with pytest.raises(TowerFellError, match="as the block was pulled out"):
        hands.pull((12, 1))
    grips = [c for c in arm.calls if c[0] == "gripper"]
    assert grips[-1] == ("gripper", 0.0)                             # still held, not let go
    hands.link.seen = None                                           # standing: the pull is kept
    assert hands.pull((12, 1)).came and hands._pull is not None


def test_slots_hidden_by_the_arm_after_a_pull_are_not_called_a_fall(planner, default_cell):
    """A resumed match's turn 16 was called fallen on three slots seen empty with the arm and
    the drawn block in front of the tower, the tower standing: only the look's own call counts
    at the tower."""
    arm = RecordingArm(planner.arm.home)
    hands = arm_hands(planner, default_cell, arm)
    full = {(layer, s): True for layer in range(1, 19) for s in range(3)}
    hands.obs = observation([], occupancy=full)
    hidden = dict(full) | {(10, 0): False, (10, 1): False, (11, 2): False}
    hands.link.seen = observation([], occupancy=hidden)
    assert hands.link.seen.fell_since(hands.obs) and not hands.link.seen.fell
    assert hands.pull((12, 1)).came and hands._pull is not None
    # more than the arm can hide: the top came down with the block
    gone = dict(full) | {(layer, s): False for layer in (16, 17) for s in range(3)}
    hands.link.seen = observation([], occupancy=gone)
    assert len(gone) - sum(gone.values()) > ARM_HIDES_SLOTS
    with pytest.raises(TowerFellError, match="as the block was pulled out"):
        hands.pull((12, 1))


def test_every_guarded_place_move_follows_a_tare(planner, default_cell):
    pull = planner.pull(planner.arm.home, 5, 0, 0.035, tower_layers=19)
    plan = planner.place(pull.q_end, 19, 2, pull.held)
    arm = RecordingArm(pull.q_end)
    arm_hands(planner, default_cell, arm).run_place(plan)
    guarded = [i for i, c in enumerate(arm.calls) if c == ("follow", True)]
    assert len(guarded) == 2                                   # the set-down and the align push
    assert all(arm.calls[i - 1] == ("tare",) for i in guarded)
    assert ("gripper", default_cell.tool.stroke) in arm.calls  # the release


@pytest.mark.parametrize("trips, guarded", [(1, 3), (10, 2 + ALIGN_RESUMES)])
def test_a_push_home_stopped_short_goes_on_after_a_fresh_tare(planner, default_cell, trips, guarded):
    # tripped as it began (the wrist's reading, not the block), it goes on from where it stopped;
    # a block that jams trips it every time and is left after ALIGN_RESUMES tries
    pull = planner.pull(planner.arm.home, 5, 0, 0.035, tower_layers=19)
    plan = planner.place(pull.q_end, 19, 2, pull.held)
    align = plan.step("align_push")
    left = [trips]

    def stop_when(guard):
        if guard[1] != align.guard.threshold_n or left[0] == 0:
            return False
        left[0] -= 1
        return True

    arm = RecordingArm(pull.q_end, stop_when=stop_when)
    reached = []                         # where each guarded move left the tool
    follow = arm.follow

    def recording_follow(times, positions, guard=None):
        result = follow(times, positions, guard)
        if guard is not None:
            reached.append(planner.arm.fk(arm.q, plan.frame).t)
        return result

    arm.follow = recording_follow
    arm_hands(planner, default_cell, arm).run_place(plan)
    follows = [i for i, c in enumerate(arm.calls) if c == ("follow", True)]
    assert len(follows) == guarded and all(arm.calls[i - 1] == ("tare",) for i in follows)
    end = planner.arm.fk(align.trajectory.end, plan.frame).t
    assert (float(np.linalg.norm(reached[-1] - end)) < 1e-4) == (trips == 1)


def test_a_block_that_turned_in_the_fingers_on_the_way_up_is_not_set_down_as_planned(
        planner, default_cell):
    pull = planner.pull(planner.arm.home, 5, 0, 0.035, tower_layers=19)
    plan = planner.place(pull.q_end, 19, 2, pull.held)
    arm = RecordingArm(pull.q_end)
    hands = arm_hands(planner, default_cell, arm)
    hands.grip.check_held()                              # held at 25.0 mm after the pull
    arm.width = 0.0284
    with pytest.raises(HeldTurned, match="turned in the gripper"):
        hands.run_place(plan)
    assert ("gripper", default_cell.tool.stroke) not in arm.calls   # never released
    assert arm.calls.count(("follow", False)) == 1                  # the carry to the top only
    # let down where it lands, as it is held: never kept, never dropped
    hands.run_place(planner.place(arm.q, 19, 2, pull.held), as_landed=True)
    assert ("gripper", default_cell.tool.stroke) in arm.calls


def test_a_block_that_fell_from_the_fingers_on_the_way_up_is_not_set_down(planner, default_cell):
    """Fingers closed on nothing above the tower: the block fell out of them. Said so (not
    "turned"), the fingers opened and nothing held: empty fingers are not set down."""
    from controller.turn.hands import PlaceOrder
    from controller.turn.report import HeldDropped
    pull = planner.pull(planner.arm.home, 5, 0, 0.035, tower_layers=19)
    arm = RecordingArm(pull.q_end)
    hands = arm_hands(planner, default_cell, arm)
    hands.grip.check_held()
    hands._pull = pull
    hands.obs = _tower_obs([(18, 0, (0.0, 0.0, 262.5)), (18, 1, (0.0, 0.0, 262.5)),
                            (18, 2, (0.0, 0.0, 262.5))])
    arm.width = 0.0
    with pytest.raises(HeldDropped, match="fell from the gripper"):
        hands.place(PlaceOrder((19, 1), 5.0, 10.0, (1, -1)))
    assert not hands.holding and arm.calls[-1] == ("gripper", default_cell.tool.stroke)
    assert arm.calls.count(("follow", False)) == 1                  # the carry to the top only


def test_a_pull_that_drags_the_tower_lets_go_and_backs_away(planner, default_cell):
    arm = RecordingArm(planner.arm.home, pull_traces=[DRAG])
    pulled = arm_hands(planner, default_cell, arm).pull((7, 1))
    assert pulled.gave_up is GaveUp.DRAG and pulled.resumed == 0
    assert pulled.peak_force_n == pytest.approx(max(DRAG)) and len(pulled.trace) == len(DRAG)
    opened = arm.calls.index(("gripper", default_cell.tool.stroke), arm.calls.index(("gripper", 0.0)))
    assert arm.calls[opened + 1:] == [("follow", False)]      # then straight away from the block
    # before it let go, it slid the block back in as far as it had drawn it
    assert arm.calls[opened - 1] == ("slide_back",) and len(arm.slid) == 1
    assert pulled.drawn_m > 0.005 and pulled.slid_back_m == pytest.approx(pulled.drawn_m, abs=1e-4)
    assert pulled.left_out_m == pytest.approx(0.0, abs=1e-4)
    assert arm_hands(planner, default_cell, RecordingArm(planner.arm.home)).pull((7, 1)).came


def test_a_block_given_up_slides_back_along_the_pull_and_only_as_far_as_it_goes(planner,
                                                                               default_cell):
    """Fast mode, seed 1: 14.1 let go 38 mm out tipped over the tower's edge, the push home
    stopped on it and the turn ended with its slot empty. The block goes back in the fingers,
    along the line it came out by; one that stops on the way is left out the rest."""
    arm = RecordingArm(planner.arm.home, pull_traces=[DRAG])
    arm.slide_trips = [DRAG]
    hands = arm_hands(planner, default_cell, arm)
    pulled = hands.pull((7, 1))
    start, end = (planner.arm.fk(q, "grasp").t for q in arm.slid[0])
    into = -planner.tower.front_end(7) * planner.tower.axis(7)
    assert (end - start) @ into == pytest.approx(pulled.drawn_m, abs=1e-4)
    assert np.linalg.norm(np.cross(end - start, into)) < 1e-4      # straight back in
    assert len(arm.slid) == 1 and 0.0 < pulled.slid_back_m < pulled.drawn_m
    assert pulled.left_out_m == pytest.approx(pulled.drawn_m - pulled.slid_back_m)


def test_a_knock_as_the_block_slides_back_does_not_stop_it(planner, default_cell):
    """Seed 1's game: the slide back stopped 1.8 of 28.6 mm in, on the knock of reversing the
    stopped pull. A knock on a light drag goes on, as in the pull."""
    arm = RecordingArm(planner.arm.home, pull_traces=[DRAG])
    arm.slide_trips = [KNOCK, KNOCK]
    pulled = arm_hands(planner, default_cell, arm).pull((7, 1))
    assert len(arm.slid) == 3
    assert pulled.slid_back_m == pytest.approx(pulled.drawn_m, abs=1e-4)


def test_a_block_that_slipped_out_of_the_fingers_is_not_slid_back(planner, default_cell):
    arm = RecordingArm(planner.arm.home)
    arm.slip_on_pull = True
    pulled = arm_hands(planner, default_cell, arm).pull((7, 1))
    assert pulled.gave_up is GaveUp.SLIP and not arm.slid and pulled.slid_back_m == 0.0


def _toward_slot_2(planner, layer=7, slot=1):
    """+1 when the grasp's tool y axis points across the layer toward slot 2, else -1."""
    plan = planner.pull(planner.arm.home, layer, slot, PUSH_THROUGH, tower_layers=19)
    tool_y = planner.arm.fk(plan.step("approach").trajectory.end, "grasp").R[:, 1]
    return np.sign(tool_y @ planner.tower.across(layer))


def test_fingers_that_meet_the_block_on_one_side_feel_further_that_way_then_give_it_up(
        planner, default_cell):
    arm = RecordingArm(planner.arm.home, stop_when=lambda guard: guard[1] == GRASP_GUARD_N)
    arm.wrench = np.array([0.0, 0.0, -2.0, -0.04, 0.0, 0.0])   # a finger at tool +y was pressed
    pulled = arm_hands(planner, default_cell, arm).pull((7, 1))
    assert pulled.gave_up is GaveUp.APPROACH and pulled.drawn_m == 0.0
    tries = pulled.touches
    assert tries[0]["wrench"] == pytest.approx([0.0, 0.0, -2.0, -0.04, 0.0, 0.0])  # all of it kept
    # every try goes on toward the finger that touched, as far as the reach allows
    toward = _toward_slot_2(planner)
    assert [t["side"] for t in tries] == [toward] * 3
    assert [g["shift_mm"] for g in tries] == pytest.approx([0.0, toward * 8.0, toward * 16.0])
    assert ("gripper", 0.0) not in arm.calls                   # it never closed on anything
    # every approach followed a fresh tare
    approaches = [i for i, c in enumerate(arm.calls) if c == ("follow", True)][:3]
    assert all(arm.calls[i - 1] == ("tare",) for i in approaches)


def test_a_side_block_given_up_is_pushed_home_where_the_fingers_felt_it(planner, default_cell,
                                                                        monkeypatch):
    """Aimed where the cameras had seen it, the rod met the side of a block that had turned 13
    degrees, and turned it 5 degrees more."""
    arm = RecordingArm(planner.arm.home, stop_when=lambda guard: guard[1] == GRASP_GUARD_N)
    toward = _toward_slot_2(planner, 7, 2)
    # every try met by the finger toward slot 2, the block's open side
    arm.wrench = np.array([0.0, 0.0, -2.0, -0.04 * toward, 0.0, 0.0])
    hands = arm_hands(planner, default_cell, arm)
    assert hands.pull((7, 2)).gave_up is GaveUp.APPROACH
    aims = []
    push = planner.push
    monkeypatch.setattr(planner, "push", lambda *a, **k: (aims.append(k["shift"]), push(*a, **k))[1])
    hands.restore((7, 2), PUSH_THROUGH, 3.0)
    # the last try met it 16 mm out: it lies further, pushed at the search's reach
    assert aims == [pytest.approx(REGRASP_REACH)]
    hands.restore((7, 2), PUSH_THROUGH, 3.0)                     # felt once, used once
    assert aims[-1] == 0.0


def test_a_put_back_that_cannot_be_aimed_where_the_block_was_felt_aims_where_it_was_seen(
        planner, default_cell, monkeypatch):
    hands = arm_hands(planner, default_cell, RecordingArm(planner.arm.home))
    hands._felt[(7, 2)] = REGRASP_REACH
    aims = []
    push = planner.push

    def only_seen(*a, **k):
        aims.append(k["shift"])
        if k["shift"] != 0.0:
            raise PlanError("cannot push layer 7 slot 2 from its + end: fingertip within 2 mm")
        return push(*a, **k)

    monkeypatch.setattr(planner, "push", only_seen)
    hands.restore((7, 2), PUSH_THROUGH, 3.0)
    assert aims == [REGRASP_REACH, 0.0]


def test_the_side_is_read_at_the_touch_not_after_the_stop(planner, default_cell):
    """Read after the stop, the wrist had rung down (2.5 N at the touch, 0.25 N read)."""
    arm = RecordingArm(planner.arm.home, stop_when=lambda guard: guard[1] == GRASP_GUARD_N)
    arm.wrench = np.array([0.0, 0.0, -2.0, 0.04, 0.0, 0.0])    # at the touch: the tool -y finger
    hands = arm_hands(planner, default_cell, arm)
    telemetry = arm.telemetry
    arm.telemetry = lambda: SimpleNamespace(**{**vars(telemetry()),
                                               "wrench": np.array([0.0, 0.0, 0.24, 0.0, 0.0, 0.0])})
    pulled = hands.pull((7, 1))
    assert pulled.touches[0]["side"] == -_toward_slot_2(planner)
    assert pulled.touches[0]["wrench"] == pytest.approx([0.0, 0.0, -2.0, 0.04, 0.0, 0.0])


def test_a_side_block_met_head_on_is_felt_for_on_its_open_side_first(planner, default_cell):
    arm = RecordingArm(planner.arm.home, stop_when=lambda guard: guard[1] == GRASP_GUARD_N)
    arm.wrench = np.array([0.0, 0.0, -2.0, 0.0, 0.0, 0.0])     # head-on: no finger told
    pulled = arm_hands(planner, default_cell, arm).pull((7, 2))
    assert pulled.gave_up is GaveUp.APPROACH
    assert [t["side"] for t in pulled.touches] == [0] * 4
    # slot 2's open side is toward +across; then the other side, then twice as far
    assert [t["shift_mm"] for t in pulled.touches] == pytest.approx([0.0, 8.0, -8.0, 16.0], abs=0.01)


def test_a_finger_that_meets_the_block_once_finds_it_beside_and_pulls(planner, default_cell):
    trips = iter([True])
    arm = RecordingArm(planner.arm.home,
                       stop_when=lambda guard: guard[1] == GRASP_GUARD_N and next(trips, False))
    pulled = arm_hands(planner, default_cell, arm).pull((7, 1))
    assert pulled.came and len(pulled.touches) == 1
    assert ("gripper", 0.0) in arm.calls


KNOCK = [0.3, 0.4, 0.2, 0.5, 0.3, 0.4, 0.3, 0.2, 0.4, 2.6]     # a light drag and one knock
DRAG = [1.6, 1.8, 1.7, 2.0, 1.9, 2.1, 2.2, 2.3, 2.4, 2.6]      # the tower coming along


def test_a_knock_during_the_pull_does_not_let_the_block_go(planner, default_cell):
    arm = RecordingArm(planner.arm.home, pull_traces=[KNOCK])
    pulled = arm_hands(planner, default_cell, arm).pull((7, 1))
    assert pulled.came and pulled.resumed == 1
    # the knock, the rest of the pull (guarded, from where the guard stopped), then the pull_out
    assert len(pulled.trace) == len(KNOCK) + 2 and len(arm.pull_labels) == 3


def test_the_pull_holds_the_block_lightly_and_squeezes_it_once_out(planner, default_cell):
    arm = RecordingArm(planner.arm.home)
    pulled = arm_hands(planner, default_cell, arm).pull((7, 1))
    assert pulled.came
    assert arm.grip_forces_n == [PULL_GRIP_N, default_cell.tool.grip_force]
    # the squeeze comes between the light pull and the rest of it
    squeeze = arm.calls.index(("gripper", 0.0), arm.calls.index(("gripper", 0.0)) + 1)
    assert arm.calls[squeeze - 1] == ("follow", True) and arm.calls[squeeze + 1] == ("follow", True)
    assert arm.calls[-1] == ("follow", True)


def _riding_looks(planner, hands, rider_mm=(3.5,)):
    """The cameras' looks of a pull of 7.1: before it, then with 8.1 come `rider_mm` along at
    each look after (the last for the looks after those)."""
    hands.obs = observation([(7, 1, (0.0, 0.0, 97.5)), (8, 1, (0.0, 0.0, 112.5))])
    out = planner.tower.front_end(7)         # layer 7 lies along x
    later = [observation([(7, 1, (6.0 * out, 0.0, 97.5)), (8, 1, (mm * out, 0.0, 112.5))])
             for mm in rider_mm]
    looks = chain([hands.obs], later, repeat(later[-1]))
    seen = []
    hands.link.observe = lambda: (seen.append(hands.arm.time),
                                  SimpleNamespace(observation=next(looks)))[1]
    return seen


def test_a_block_above_that_rides_out_on_the_drawn_one_makes_the_pull_let_go(planner,
                                                                            default_cell):
    """Seed 3: 18.1 went with 17.1 from the pull's first millimetre at 0.3-0.5 N, far under the
    guard, and fell off the tower. The cameras look as the pull passes RIDE_WATCH_M out, without
    stopping it; a rider stops the arm there."""
    arm = RecordingArm(planner.arm.home)
    hands = arm_hands(planner, default_cell, arm)
    looked = _riding_looks(planner, hands)
    pulled = hands.pull((7, 1))
    assert pulled.gave_up is GaveUp.RIDER and pulled.riders == pytest.approx({(8, 1): 0.0035})
    # the look came as the tool passed the mark (waypoints lie 2 mm apart), the arm was stopped
    # there, let go and backed away; the rest of the pull never ran
    assert len(looked) == 2 and ("stop",) in arm.calls and len(arm.pull_labels) == 0
    assert RIDE_WATCH_M <= pulled.drawn_m <= RIDE_WATCH_M + 0.0025
    opened = arm.calls.index(("gripper", default_cell.tool.stroke), arm.calls.index(("gripper", 0.0)))
    assert arm.calls[opened + 1:] == [("follow", False)]
    assert arm.calls[opened - 1] == ("slide_back",)
    assert pulled.slid_back_m == pytest.approx(pulled.drawn_m, abs=1e-4)
    # the same pull with the block above still: drawn to the end without a stop
    arm = RecordingArm(planner.arm.home)
    hands = arm_hands(planner, default_cell, arm)
    looked = _riding_looks(planner, hands, rider_mm=(0.3,))
    assert hands.pull((7, 1)).came and len(arm.pull_labels) == 2 and ("stop",) not in arm.calls
    # it looked at 5 mm and every 10 mm after while the block's end rested in the tower, then
    # once more after the pull (the tower still standing)
    inside = np.linalg.norm(np.subtract(*(planner.arm.fk(q, "grasp").t for q in (
        planner.pull(planner.arm.home, 7, 1, PUSH_THROUGH, tower_layers=19).step("pull")
        .trajectory.positions[[0, -1]]))))
    assert abs((len(looked) - 2) - (1 + (inside - RIDE_WATCH_M) / RIDE_LOOK_EVERY_M)) <= 1


def test_a_block_taken_after_all_is_grasped_where_it_stands_and_drawn_firmly_unwatched(
        planner, default_cell, monkeypatch):
    """A block that dragged and would not go back is pulled again (the procedure's
    take-after-all): the fingers go to its end where the put-back left it, the pull is guarded
    at TAKE_GUARD_N, and a block above coming along does not stop it."""
    arm = RecordingArm(planner.arm.home)
    hands = arm_hands(planner, default_cell, arm)
    looked = _riding_looks(planner, hands)
    aimed = []
    plan_pull = planner.pull
    monkeypatch.setattr(planner, "pull", lambda *a, **k: (aimed.append(a[3]), plan_pull(*a, **k))[1])
    pulled = hands.pull((7, 1), 0.0305, insist=True)
    assert pulled.came and aimed == [pytest.approx(0.0305)]
    pull_guards = {guard[1] for _, guard in arm.guarded if guard[1] != GRASP_GUARD_N}
    assert pull_guards == {TAKE_GUARD_N}
    assert len(looked) == 2      # before the pull and after it (the tower standing): no look for riders
    assert ("stop",) not in arm.calls


def test_a_block_that_starts_to_ride_later_in_the_pull_is_seen_at_a_later_look(planner,
                                                                             default_cell):
    arm = RecordingArm(planner.arm.home)
    hands = arm_hands(planner, default_cell, arm)
    looked = _riding_looks(planner, hands, rider_mm=(0.2, 0.4, 4.0))
    pulled = hands.pull((7, 1))
    assert pulled.gave_up is GaveUp.RIDER and len(looked) == 4 and ("stop",) in arm.calls
    # each look comes at the first waypoint (2 mm apart) past its mark
    assert RIDE_WATCH_M + 2 * RIDE_LOOK_EVERY_M <= pulled.drawn_m <= \
        RIDE_WATCH_M + 2 * RIDE_LOOK_EVERY_M + 3 * 0.0025


def test_a_knock_before_the_mark_leaves_the_look_for_riders_to_the_rest_of_the_pull(
        planner, default_cell):
    arm = RecordingArm(planner.arm.home, pull_traces=[KNOCK])
    arm.pull_trip_at = 0.05                  # the knock comes 2 mm out
    hands = arm_hands(planner, default_cell, arm)
    looked = _riding_looks(planner, hands)
    pulled = hands.pull((7, 1))
    assert pulled.resumed == 1 and pulled.gave_up is GaveUp.RIDER and len(looked) == 2
    assert RIDE_WATCH_M <= pulled.drawn_m <= RIDE_WATCH_M + 0.0025


def test_a_move_whose_watcher_fails_is_stopped(planner, default_cell):
    arm = RecordingArm(planner.arm.home)
    moves = arm_hands(planner, default_cell, arm).moves
    step = planner.straight(planner.arm.home, "grasp", np.array([0.0, 0.0, 0.02]),
                            tower_layers=19).moves[0]

    def failing(started, trajectory):
        raise RuntimeError("the cameras are gone")
    with pytest.raises(RuntimeError, match="cameras are gone"):
        moves.follow(step, failing)
    assert arm.calls[-1] == ("stop",)


def test_a_block_no_grasp_can_be_planned_for_is_given_up_like_one_the_fingers_met(
        planner, default_cell, monkeypatch):
    def unplannable(*args, **kwargs):
        raise PlanError("cannot pull layer 7 slot 1 from its + end: fingers within 2 mm of the tower")
    monkeypatch.setattr(planner, "pull", unplannable)
    arm = RecordingArm(planner.arm.home)
    pulled = arm_hands(planner, default_cell, arm).pull((7, 1))
    assert pulled.gave_up is GaveUp.APPROACH and not arm.calls      # nothing moved
    assert len(pulled.touches) == GRASP_TRIES
    assert all("within 2 mm" in t["unplanned"] for t in pulled.touches)


def test_knock_after_knock_is_a_drag_after_all(planner, default_cell):
    arm = RecordingArm(planner.arm.home, pull_traces=[KNOCK] * (PULL_RESUMES + 1))
    pulled = arm_hands(planner, default_cell, arm).pull((7, 1))
    assert pulled.gave_up is GaveUp.DRAG and pulled.resumed == PULL_RESUMES


def test_fingers_that_close_on_air_open_and_feel_to_either_side(planner, default_cell):
    arm = RecordingArm(planner.arm.home)
    closes = iter([0.0, 0.025, 0.025])   # the first close meets nothing, the second a block
    arm.gripper = lambda width_m, force_n=10.0: (arm.calls.append(("gripper", width_m)),
                                                 next(closes) if width_m == 0.0 else width_m)[1]
    pulled = arm_hands(planner, default_cell, arm).pull((7, 1))
    assert pulled.came and [t.get("missed") for t in pulled.touches] == [True]
    assert arm.calls.count(("gripper", 0.0)) == 3     # two grasps, then the squeeze once out
    opened_again = arm.calls.index(("gripper", 0.0)) + 1
    assert arm.calls[opened_again] == ("gripper", default_cell.tool.stroke)


def test_a_probe_then_a_push_through_goes_on_from_where_the_probe_stopped(planner, default_cell):
    arm = RecordingArm(planner.arm.home)
    hands = arm_hands(planner, default_cell, arm)
    felt = hands.probe((7, 1), 0.5)
    assert not felt.outcome.guard_tripped and felt.outcome.travel_m > 0.0
    before = len(arm.calls)
    pushed = hands.push_through((7, 1), 3.0)
    assert not pushed.jammed and pushed.moved_m > felt.outcome.travel_m
    # on from the probe: the push-through itself (guarded), then back out of the hole; no new approach
    assert arm.calls[before:] == [("follow", True), ("follow", False)]
    # a block not probed just now is pushed from its back face first
    arm.calls.clear()
    hands.push_through((8, 1), 3.0)
    assert arm.calls.count(("follow", True)) == 2 and ("tare",) in arm.calls


def test_a_push_through_that_cannot_go_on_from_the_probe_starts_again_from_the_back_face(
        planner, default_cell, monkeypatch):
    arm = RecordingArm(planner.arm.home)
    hands = arm_hands(planner, default_cell, arm)
    hands.probe((7, 1), 0.5)
    straight, refused = planner.straight, []

    def once_unplannable(q, frame, displacement, **kwargs):
        if kwargs.get("label") == "push_through" and not refused:
            refused.append(np.array(q, float))
            raise PlanError("cannot plan the straight move 'push_through': the straight move "
                            "passes a singularity or a joint limit")
        return straight(q, frame, displacement, **kwargs)
    monkeypatch.setattr(planner, "straight", once_unplannable)
    before = len(arm.calls)
    pushed = hands.push_through((7, 1), 3.0)
    assert refused and not pushed.jammed and pushed.moved_m > 0.01
    # out of the hole, a fresh approach, tare and push to the face, then through and out again
    calls = arm.calls[before:]
    assert calls[0] == ("follow", False) and ("tare",) in calls
    assert calls.count(("follow", True)) == 2 and calls[-1] == ("follow", False)


@pytest.mark.parametrize("jam_n", [0.25, 3.0])
def test_a_push_through_under_a_light_limit_starts_at_the_probes_pace(planner, default_cell, jam_n):
    """Its first step in speed read as a jam under the safe push force high in the tower."""
    arm = RecordingArm(planner.arm.home)
    hands = arm_hands(planner, default_cell, arm)
    hands.probe((15, 0), min(jam_n, 0.5))
    hands.push_through((15, 0), jam_n)
    times, guard = arm.guarded[-1]
    first_speed = LIGHT_STEP / (times[1] - times[0]) if jam_n < LIGHT_GUARD_N else \
        LINE_STEP / (times[1] - times[0])
    assert guard[1] == jam_n
    if jam_n < LIGHT_GUARD_N:
        assert first_speed <= 0.0025
    else:
        assert first_speed > 0.005


def test_each_move_grip_and_tare_is_recorded_with_its_device_times(planner, default_cell):
    pull = planner.pull(planner.arm.home, 5, 0, 0.035, tower_layers=19)
    plan = planner.place(pull.q_end, 19, 2, pull.held)
    arm = RecordingArm(pull.q_end)
    hands = arm_hands(planner, default_cell, arm)
    moves: list[dict] = []
    hands.record_moves(moves)
    hands.run_place(plan)
    steps = [s.label for s in plan.steps]
    assert [m["move"] for m in moves if m["move"] != "tare"] == steps
    assert [m["move"] for m in moves].count("tare") == 2       # before each guarded move
    assert all(m["end_s"] >= m["start_s"] for m in moves)
    assert all(a["end_s"] <= b["start_s"] for a, b in zip(moves, moves[1:]))
    assert moves[-1]["end_s"] == pytest.approx(arm.time, abs=1e-3)


class LookingLink:
    """A link whose cameras see an 18-story tower, each look stamped with the arm's clock."""

    def __init__(self, arm, cell):
        self.arm, self.cell, self.forces, self.looks = arm, cell, Recorder(arm), []

    def observe(self, after=None):
        self.looks.append(self.arm.time)
        full = {(layer, slot): True for layer in range(1, 19) for slot in range(3)}
        return SimpleNamespace(observation=replace(observation([], full), time=self.arm.time))


def test_the_look_that_closed_the_window_starts_the_next_turn_when_nothing_came_between(
        planner, default_cell):
    arm = RecordingArm(planner.arm.home)
    link = LookingLink(arm, default_cell)
    hands = ArmHands(link, planner)
    tower = planner.tower            # a look moves the shared planner's tower: put it back after
    try:
        _look_twice(hands, arm, link)
    finally:
        planner.set_tower(tower)


def _look_twice(hands, arm, link):
    final = hands.watch(released_at=0.0, window_s=10.0, blocks_moved=1)
    looks = len(link.looks)
    assert final.tower.top_layer == 18
    assert hands.look(1).tower.top_layer == 18 and len(link.looks) == looks   # no new look
    # one look serves once; a look older than the watch's pace is not taken again
    hands.look(1)
    assert len(link.looks) == looks + 1
    hands.watch(released_at=arm.time, window_s=10.0, blocks_moved=1)
    arm.time += 2.0                       # the turn began later than the window's pace
    looks = len(link.looks)
    hands.look(1)
    assert len(link.looks) == looks + 1


@pytest.mark.parametrize("trips", [False, True])
def test_a_put_back_says_how_far_short_of_home_it_stopped(planner, default_cell, trips):
    # in a seed-1 match two tested blocks were put back 4.5-5.4 mm short of home, nothing said;
    # the jam limit that stops it is a real jam, so it is not pushed again
    arm = RecordingArm(planner.arm.home, stop_when=lambda guard: trips)
    short = arm_hands(planner, default_cell, arm).restore((8, 1), 0.02, 1.0)
    assert len([c for c in arm.calls if c == ("follow", True)]) == 1
    assert (short > 0.003) == trips and (short < 1e-4) == (not trips)
    if trips:      # stopped pressing at 1 N, the fingertip's spring gave: the block stands further out
        arm = RecordingArm(planner.arm.home, stop_when=lambda guard: True)
        arm.trip_force_n = 1.0
        planner.set_tower(planner.tower)       # the same block as it first stood, 20 mm out
        pressed = arm_hands(planner, default_cell, arm).restore((8, 1), 0.02, 1.0)
        assert pressed - short == pytest.approx(1.0 / default_cell.tool.fingertip_stiffness)


def _held(planner, default_cell, arm, blocks, source=(5, 0), level=False):
    """Hands holding a block pulled from `source` (held `level`, or as the planner grasped it:
    pitched), seeing `blocks` (layer, slot, centre in mm)."""
    pull = planner.pull(planner.arm.home, *source, 0.035, tower_layers=19)
    if level:
        pull = replace(pull, held=planner.level_grip)
    arm.q = np.array(pull.q_end, float)
    hands = arm_hands(planner, default_cell, arm)
    hands.obs = observation(blocks)
    hands._pull = pull
    return hands


def _record_set_downs(arm, into: list) -> None:
    """Have `arm` note where each set-down (the move under the 3 N place guard) was to end."""
    follow = arm.follow

    def recording(times, positions, guard=None):
        if guard is not None and guard[1] == 3.0:
            into.append(np.array(positions[-1], float))
        return follow(times, positions, guard)
    arm.follow = recording


def test_a_block_set_down_on_its_neighbour_is_lifted_and_set_down_further_from_it(
        planner, default_cell):
    # the first set-down stops a third of the way down: on the middle block's edge
    settles = []
    arm = RecordingArm(planner.arm.home, stop_when=lambda guard: len(settles) == 1)
    _record_set_downs(arm, settles)
    hands = _held(planner, default_cell, arm, [(19, 1, (0.0, 1.4, 276.0))])
    released = hands.place(PlaceOrder((19, 2), 3.0, 6.0, (1, -1)))
    assert released is not None and hands._pull is None
    assert len(settles) == 2
    ends = [planner.arm.fk(q, "grasp").t for q in settles]
    # the second try lies PLACE_RETRY_SHIFT further toward slot 2's side, at the same height
    assert (ends[1] - ends[0]) @ planner.tower.across(19) == pytest.approx(PLACE_RETRY_SHIFT, abs=2e-4)
    assert ends[1][2] == pytest.approx(ends[0][2], abs=1e-4)
    assert ("gripper", default_cell.tool.stroke) in arm.calls          # let go once, at the end
    assert arm.calls.count(("gripper", default_cell.tool.stroke)) == 1


def test_a_block_that_lands_high_at_every_try_is_kept_and_the_turn_stops(planner, default_cell):
    arm = RecordingArm(planner.arm.home, stop_when=lambda guard: guard[1] == 3.0)
    hands = _held(planner, default_cell, arm, [(19, 1, (0.0, 1.4, 276.0))])
    with pytest.raises(TurnError, match=f"each of {PLACE_TRIES} set-downs.*held above the tower"):
        hands.place(PlaceOrder((19, 2), 3.0, 6.0, (1, -1)))
    assert ("gripper", default_cell.tool.stroke) not in arm.calls     # never let go


def test_a_first_block_on_a_new_layer_that_lands_high_is_not_moved_about(planner, default_cell):
    arm = RecordingArm(planner.arm.home, stop_when=lambda guard: guard[1] == 3.0)
    hands = _held(planner, default_cell, arm, [])
    # nothing in the layer, so the set-down is the short one: a third of the way is not high
    hands.place(PlaceOrder((19, 2), 3.0, 6.0, (1, -1)))
    assert ("gripper", default_cell.tool.stroke) in arm.calls


def test_a_block_is_set_down_onto_the_layer_below_where_the_cameras_see_it(planner, default_cell):
    """Placed layers sit off the tower's fitted pitch: the set-down ends where the block rests
    on the highest block seen below it, not at the nominal height."""
    def settle_end(rise_mm):
        ends = []
        arm = RecordingArm(planner.arm.home)
        _record_set_downs(arm, ends)
        z = planner.tower.layer_z(18) * 1000
        below = [(18, 0, (-25.0, 0.0, z)), (18, 1, (0.0, 0.0, z + rise_mm)), (18, 2, (25.0, 0.0, z))]
        _held(planner, default_cell, arm, below).place(PlaceOrder((19, 2), 3.0, 6.0, (1, -1)))
        return planner.arm.fk(ends[0], "grasp").t

    assert settle_end(4.0) - settle_end(0.0) == pytest.approx([0.0, 0.0, 0.004], abs=2e-4)


@pytest.mark.parametrize("level, seen, target, home", [
    (True, [], (19, 1), True),                              # held level, no neighbour
    (True, [(19, 0, (0.0, -25.0, 276.0))], (19, 2), True),  # the one neighbour not beside it
    (True, [(19, 1, (0.0, 0.0, 276.0))], (19, 2), False),   # its neighbour's slot is taken
    (False, [], (19, 1), False),                            # held pitched: fingers in the layer below
])
def test_a_block_goes_home_at_once_where_the_fingers_have_room(planner, default_cell, level, seen,
                                                               target, home):
    arm = RecordingArm(planner.arm.home)
    released_at = []
    gripper = arm.gripper

    def noting_release(width_m, force_n=10.0):
        if width_m == default_cell.tool.stroke:
            released_at.append(arm.time)
        return gripper(width_m, force_n)
    arm.gripper = noting_release
    hands = _held(planner, default_cell, arm, seen, (12, 1), level)
    released = hands.place(PlaceOrder(target, 3.0, 6.0, (1, -1)))
    guards = [guard[1] for _, guard in arm.guarded]
    # set down under the press guard; pushed home under the align guard only when not home
    assert guards == ([3.0] if home else [3.0, 6.0])
    release = arm.calls.index(("gripper", default_cell.tool.stroke))
    moved_after = arm.calls[release + 1:].count(("follow", False))
    # the back-off; or it, the way round to the end, the approach and the retreat from the push
    assert moved_after == (1 if home else 4)
    # home, the window runs from the release; pushed home, from the push's end
    assert (released == released_at[0]) == home


def test_a_neighbour_seen_full_without_a_marker_read_keeps_the_fingers_out(planner, default_cell):
    # layer 19's middle holds a block whose marker the cameras did not read
    arm = RecordingArm(planner.arm.home)
    hands = _held(planner, default_cell, arm, [], (12, 1), level=True)
    hands.obs = observation([], occupancy={(19, 0): False, (19, 1): True, (19, 2): False})
    hands.place(PlaceOrder((19, 2), 3.0, 6.0, (1, -1)))
    assert [guard[1] for _, guard in arm.guarded] == [3.0, 6.0]      # overhanging, pushed home


def _stop_first_set_down(arm, planner, above_end_m: float, into: list) -> None:
    """Have the first set-down (the move under the 3 N place guard) stop as the grasp comes
    within `above_end_m` of its planned end (its guard met something there), and note where
    every set-down was to end."""
    follow = arm.follow
    z = lambda q: planner.arm.fk(np.asarray(q, float), "grasp").t[2]

    def stopping(times, positions, guard=None):
        if guard is None or guard[1] != 3.0:
            return follow(times, positions, guard)
        into.append(np.array(positions[-1], float))
        if len(into) > 1:
            return follow(times, positions, guard)
        at = next(i for i, q in enumerate(positions) if z(q) <= z(positions[-1]) + above_end_m)
        arm.q = np.array(positions[at], float)
        arm.time += float(times[at])
        arm.calls.append(("follow", True))
        arm.guarded.append((np.asarray(times, float), guard))
        return MotionResult(MotionOutcome.GUARD, 1, arm.time, 3.0, arm.q)
    arm.follow = stopping


def test_a_block_set_down_home_that_lands_high_is_lifted_and_set_down_overhanging(
        planner, default_cell):
    # slot 0 holds a block, so the set-down on slot 2 is guarded from above its top down; it
    # meets something 10 mm above its rest
    settles = []
    arm = RecordingArm(planner.arm.home)
    _stop_first_set_down(arm, planner, 0.010, settles)
    hands = _held(planner, default_cell, arm, [(19, 0, (0.0, -25.0, 276.0))], (12, 1),
                  level=True)
    hands.place(PlaceOrder((19, 2), 3.0, 6.0, (1, -1)))
    assert len(settles) == 2
    ends = [planner.arm.fk(q, "grasp").t for q in settles]
    # home first, then PLACE_OVERHANG out along the layer's axis, at the same height
    assert abs((ends[1] - ends[0]) @ planner.tower.axis(19)) == pytest.approx(PLACE_OVERHANG, abs=2e-4)
    assert ends[1][2] == pytest.approx(ends[0][2], abs=1e-4)
    assert [guard[1] for _, guard in arm.guarded][-1] == 6.0          # then pushed home
    assert arm.calls.count(("gripper", default_cell.tool.stroke)) == 1


def test_a_block_held_above_its_centre_line_landing_where_it_hangs_is_not_landed_high(
        planner, default_cell):
    # held 5 mm up the block, it touches down 5.5 mm above the set-down's planned end: its rest
    settles = []
    arm = RecordingArm(planner.arm.home)
    _stop_first_set_down(arm, planner, 0.0055, settles)
    hands = _held(planner, default_cell, arm, [], (12, 1), level=True)
    hands._pull = replace(hands._pull, held=replace(hands._pull.held, raised=0.005))
    hands.place(PlaceOrder((19, 1), 3.0, 6.0, (1, -1)))
    assert len(settles) == 1                                  # set down once, not lifted
    # held at the centre line, the same stop is 5.5 mm high, short of LANDED_HIGH_M too; 6.5 mm is not
    assert 0.0055 < LANDED_HIGH_M < 0.0065


def test_a_withdrawal_that_ended_short_goes_again(planner, default_cell):
    """Seed 3: a withdrawal from a probe ended 8 ms after it began, the fingertip still 6 mm in
    the tower, and the transit after it could not start there."""
    arm = RecordingArm(planner.arm.home)
    hands = arm_hands(planner, default_cell, arm)
    hands.probe((7, 1), 0.3)
    plan = hands._at_block[1]
    follow, cut = arm.follow, []

    def first_ends_at_once(times, positions, guard=None, wait=True):
        if not cut:                 # the first move after the probe: stopped where it began
            cut.append(True)
            arm.calls.append(("follow", guard is not None))
            return MotionResult(MotionOutcome.STOPPED, 1, arm.time, 0.0, arm.q)
        return follow(times, positions, guard, wait)
    arm.follow = first_ends_at_once
    hands.withdraw()
    began = planner.arm.fk(plan.step("approach").trajectory.start, plan.frame).t
    assert np.linalg.norm(planner.arm.fk(arm.q, plan.frame).t - began) < 1e-4
    assert arm.calls[-2:] == [("follow", False), ("follow", False)]


@pytest.mark.parametrize("then_through", [False, True])
def test_a_retreat_the_straight_planner_cannot_plan_backs_the_way_it_came(
        planner, default_cell, monkeypatch, then_through):
    """Seed 2: after a probe of layer 3 no straight retreat could be planned (a joint's jump) and
    the game stopped; the way in was planned and run, so the arm backs out along it."""
    arm = RecordingArm(planner.arm.home, stop_when=lambda guard: guard[1] == 0.5)
    hands = arm_hands(planner, default_cell, arm)
    hands.probe((7, 1), 0.5)                  # stopped a third of the way along its push
    plan = hands._at_block[1]
    straight, refused = planner.straight, []

    def retreats_unplannable(q, frame, displacement, **kwargs):
        if kwargs.get("label") in ("retreat", "back_out"):
            refused.append(kwargs["label"])
            raise PlanError(f"cannot plan the straight move '{kwargs['label']}': the straight "
                            "move passes a singularity or a joint limit")
        return straight(q, frame, displacement, **kwargs)
    monkeypatch.setattr(planner, "straight", retreats_unplannable)
    if then_through:
        assert not hands.push_through((7, 1), 3.0).jammed
    else:
        hands.withdraw()
    assert refused == ["back_out" if then_through else "retreat"]
    began = planner.arm.fk(plan.step("approach").trajectory.start, plan.frame).t
    assert np.linalg.norm(planner.arm.fk(arm.q, plan.frame).t - began) < 1e-4
    assert arm.calls[-1] == ("follow", False)


def test_a_probe_at_a_face_deep_in_its_hole_pushes_past_it_and_backs_out(planner, default_cell):
    """A block out 9 mm at the front stands 9 mm in at the back, where it is probed: the push goes
    PROBE_DEPTH past that face, and the withdrawal takes the fingertip back out of the tower (a
    seed-12 game's probe there was planned to the face's plane, went nowhere, and left the
    fingertip in the tower: every later plan started in collision)."""
    from controller.turn.arm_hands import PROBE_DEPTH
    from planning.motion.contact_geometry import CONTACT_MARGIN
    arm = RecordingArm(planner.arm.home)
    hands = arm_hands(planner, default_cell, arm)
    front = planner.tower.front_end(7)
    hands.obs = observation([(7, 1, (0.0, 0.0, 97.5))])
    hands.obs.blocks[0] = replace(hands.obs.blocks[0], protrusion=0.009 * front)
    hands.probe((7, 1), 0.5)
    plan = hands._at_block[1]
    into = front * planner.tower.axis(7)
    tip = [planner.arm.fk(q, plan.frame).t for q in (plan.step("push").trajectory.start,
                                                     plan.step("push").trajectory.end)]
    assert (tip[1] - tip[0]) @ into > PROBE_DEPTH
    hands.withdraw()
    assert not planner.checker.contacts(arm.q, 19, CONTACT_MARGIN)


def test_the_moves_that_work_a_pushed_out_block_may_go_where_it_sticks_out(planner, default_cell):
    """Pushed through, a block sticks out at the front and every other move keeps clear of it;
    the moves that work it do not: fingers that met it back off from within where it sticks out
    (a seed-12 game stopped on "cannot plan the straight move 'grasp_back_off': fingers 2 mm
    into the tower" when they did), and once taken it is no obstacle."""
    arm = RecordingArm(planner.arm.home, stop_when=lambda guard: guard[1] == GRASP_GUARD_N)
    arm.wrench = np.array([0.0, 0.0, -2.0, -0.04, 0.0, 0.0])
    arm.touch_at = 0.9          # the fingers already around the block's end
    hands = arm_hands(planner, default_cell, arm)
    hands.push_through((7, 1), 3.0)
    assert abs(planner.sticking_out[(7, 1)]) > PUSH_THROUGH - 0.002
    assert (7, 1) in planner.checker.sticking_out
    pulled = hands.pull((7, 1))
    assert pulled.gave_up is GaveUp.APPROACH and len(pulled.touches) >= 2   # backed off, again
    hands.restore((7, 1), PUSH_THROUGH, 3.0)
    assert (7, 1) not in planner.checker.sticking_out        # pushed home
    hands.push_through((7, 1), 3.0)
    arm.stop_when = lambda guard: False
    assert hands.pull((7, 1)).came
    assert (7, 1) not in planner.checker.sticking_out        # in the fingers


def _seen(obs, hands, blocks_moved=0):
    hands.link.seen = obs
    return hands.look(blocks_moved, again=True)


def _tower_obs(blocks, empty=()):
    """`observation` of a 7-layer tower, every slot full but `empty`, `blocks` read."""
    full = {(layer, slot): (layer, slot) not in empty for layer in range(1, 8) for slot in range(3)}
    return observation(blocks, full)


def test_a_block_out_at_the_front_the_next_look_reads_as_empty_stays_an_obstacle(planner,
                                                                                default_cell):
    """Its back face too deep in its hole to read, a block out at the front is an empty slot to
    the cameras, not to the hands: it stays where they last knew it until a look sees it, or sees
    it elsewhere (make play seed 1: a pull beside such a block met it, a 200 N fault)."""
    hands = arm_hands(planner, default_cell, RecordingArm(planner.arm.home))
    out = planner.tower.front_end(7) * 0.021
    blocks = [(7, 0, (0.0, 0.0, 97.5)), (7, 1, (0.0, 0.0, 97.5)), (6, 1, (0.0, 0.0, 82.5))]
    first = _tower_obs(blocks)
    first.blocks[1] = replace(first.blocks[1], protrusion=out)
    _seen(first, hands)
    assert planner.checker.sticking_out == {(7, 1): out}
    unread = _tower_obs([blocks[0], None, blocks[2]], empty=[(7, 1)])
    _seen(unread, hands)
    assert planner.checker.sticking_out == {(7, 1): out}     # kept, look after look
    _seen(unread, hands)
    assert planner.checker.sticking_out == {(7, 1): out}
    elsewhere = _tower_obs([blocks[0], None, blocks[2]], empty=[(7, 1)])
    elsewhere.on_table.append(1)                             # block 1 lies on the table
    _seen(elsewhere, hands)
    assert planner.checker.sticking_out == {}
    # out too far to be read in its slot, it stands where its marker is seen
    far = _tower_obs([blocks[0], None, blocks[2]], empty=[(7, 1)])
    far.out_of_place.append(1)
    far.far_out[(7, 1)] = (1, -out * 3)
    _seen(far, hands)
    assert planner.checker.sticking_out == {(7, 1): -out * 3}
    # then seen on the table: gone from there
    gone = _tower_obs([blocks[0], None, blocks[2]], empty=[(7, 1)])
    gone.on_table.append(1)
    _seen(gone, hands)
    assert planner.checker.sticking_out == {}


def test_a_neighbour_seen_carried_out_is_pushed_home_from_where_it_was_seen(planner, default_cell,
                                                                           monkeypatch):
    """The look after a let-go saw it 5 mm out: the put-back comes to its face there and pushes
    it 5 mm, home (it was planned to end where the face already stood, and pushed nothing)."""
    hands = arm_hands(planner, default_cell, RecordingArm(planner.arm.home))
    front = planner.tower.front_end(7)
    obs = _tower_obs([(7, 1, (0.0, 0.0, 97.5))])
    obs.blocks[0] = replace(obs.blocks[0], protrusion=front * 0.005)
    _seen(obs, hands)
    asked, push = [], planner.push
    monkeypatch.setattr(planner, "push", lambda q, layer, slot, depth, **kw: (
        asked.append((depth, kw["protrusion"])), push(q, layer, slot, depth, **kw))[1])
    hands.restore((7, 1), 0.005, 3.0)
    assert asked[0] == pytest.approx((0.0, 0.005))          # from its face 5 mm out, to home
    assert planner.sticking_out[(7, 1)] == pytest.approx(0.0)
    # a block the hands know nothing of stands as far out as it was moved
    asked.clear()
    hands.restore((9, 2), 0.03, 3.0)
    assert asked[0] == pytest.approx((0.0, 0.03))


def test_a_block_is_pushed_home_and_no_further_however_far_it_was_asked(planner, default_cell,
                                                                         monkeypatch):
    """A let-go block the look reads empty is pushed home again by as far as one the hands know
    nothing of would stand out (let_go.py LOST_OUT_M); the hands knew it stood 19.3 mm out, and
    the push was aimed 22.7 mm into the tower (make play seed 2: "41.9 mm short of home")."""
    from controller.turn.let_go import LOST_OUT_M
    hands = arm_hands(planner, default_cell, RecordingArm(planner.arm.home))
    _seen(_tower_obs([(7, 1, (0.0, 0.0, 97.5))]), hands)
    front = planner.tower.front_end(7)
    planner.block_moved((7, 1), front * 0.0193)
    asked, push = [], planner.push
    monkeypatch.setattr(planner, "push", lambda q, layer, slot, depth, **kw: (
        asked.append((depth, kw["protrusion"])), push(q, layer, slot, depth, **kw))[1])
    hands.restore((7, 1), LOST_OUT_M, 3.0)
    assert asked[0] == pytest.approx((0.0, 0.0193))         # from its face, to home
    assert planner.sticking_out[(7, 1)] == pytest.approx(0.0)


def test_fingers_closed_on_nothing_after_the_draw_let_the_block_go_as_slipped(planner, default_cell):
    """Drawn out to its end, the pull finds the fingers closed on nothing: the block slipped out
    of them. Given up like one that slips during the pull, fingers opened and backed off, for the
    turn to look again: not a stopped turn, and no air carried to the top."""
    arm = RecordingArm(planner.arm.home)
    hands = arm_hands(planner, default_cell, arm)
    draw = hands._draw

    def slipped_at_the_end(*args, **kwargs):      # out of the fingers as the draw ended
        drawn = draw(*args, **kwargs)
        arm.width = 0.0
        return drawn
    hands._draw = slipped_at_the_end
    pulled = hands.pull((7, 1))
    assert pulled.gave_up is GaveUp.SLIP and not hands.holding
    assert arm.calls[-2:] == [("gripper", default_cell.tool.stroke), ("follow", False)]


def test_a_device_fault_says_which_move_it_stopped_and_what_the_wrist_read(planner, default_cell):
    """Three full-pipeline games stopped on "device fault OVERLOAD" and nothing else: the move and
    the wrist's reading say where to look."""
    from firmware_bridge.errors import DeviceFault
    from firmware_bridge.messages import Fault
    arm = RecordingArm(planner.arm.home)
    follow = arm.follow

    def overloaded(times, positions, guard=None, wait=True):
        if guard is not None:
            arm.wrench = np.array([3.0, -4.0, 212.0, 0.0, 0.0, 0.0])
            raise DeviceFault(Fault.OVERLOAD)
        return follow(times, positions, guard, wait)
    arm.follow = overloaded
    hands = arm_hands(planner, default_cell, arm)
    with pytest.raises(DeviceFault, match=r"OVERLOAD during the move 'push' \(the wrist read 212 "
                                          r"N: 3, -4, 212 in the tool's x, y, z\)") as fault:
        hands.probe((7, 1), 0.5)
    assert fault.value.fault == Fault.OVERLOAD


@pytest.mark.parametrize("above_mm", [4.0, 20.0])
def test_fingers_let_go_where_the_block_landed_high_back_off_from_there(planner, default_cell,
                                                                        above_mm):
    # every place missed, so the block is let go where its set-down stops: 20 mm above its planned
    # end the arm stands degrees from where the plan's back-off starts (a tower 24 turn stopped so)
    settles = []
    arm = RecordingArm(planner.arm.home)
    _stop_first_set_down(arm, planner, above_mm / 1000, settles)
    hands = _held(planner, default_cell, arm, [(19, 0, (0.0, -25.0, 276.0))], (12, 1))
    let_go, after = [], []
    release, follow = arm.gripper, arm.follow

    def gripper(width, force):
        let_go.append(planner.arm.fk(arm.q, "grasp").t)
        return release(width, force)

    def following(times, positions, guard=None):
        result = follow(times, positions, guard)
        if let_go:
            after.append(planner.arm.fk(arm.q, "grasp").t)
        return result
    arm.gripper, arm.follow = gripper, following
    order = PlaceOrder((19, 2), 3.0, 6.0, (1, -1), as_landed=True)
    planned = hands._plan_place(order, 0.0, True, 0.0, False)[0].step("back_off").trajectory
    hands.place(order)
    assert len(settles) == 1 and hands._pull is None
    # the plan's own way back from the block's end and up, from where the fingers let go
    way = planner.arm.fk(planned.end, "grasp").t - planner.arm.fk(planned.start, "grasp").t
    assert abs(way[0]) + abs(way[1]) > 0.02 and way[2] == pytest.approx(0.03, abs=1e-4)
    assert after[0] - let_go[-1] == pytest.approx(way, abs=1e-3)
    assert [guard[1] for _, guard in arm.guarded][-1] == 6.0          # then pushed home
