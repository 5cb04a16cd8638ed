"""Motion plans: within limits, straight where they must be, clear of the tower and the table."""

from dataclasses import replace

import numpy as np
import pytest

from planning.game.cell import parse_cell
from planning.motion.paces import (FREE_ACCEL, LIGHT_ACCEL, LIGHT_DECEL, LIGHT_GUARD_N, LINE_ACCEL,
                                   PLACE_FEEL_SPEED, PLACE_SLOW_SPEED, guarded_pace,
                                   ramped_durations)
from planning.motion.contact_geometry import (BESIDE_CLEARANCE, CONTACT_MARGIN,
                                              DIRECT_FINGER_MARGIN, GRIP_DEPTH, PLACE_OVERHANG,
                                              PUSH_THROUGH, SQUEEZE_INSIDE, TRANSIT_MARGIN)
from planning.motion.planner import MotionPlanner
from planning.motion.plans import GripStep, MoveStep, PlanError
from planning.motion.retrace import retrace
from planning.game.tower import layer_axis

TALL = 19


def assert_within_limits(planner, plan):
    arm = planner.cell.arm
    for move in plan.moves:
        traj = move.trajectory
        assert np.all(traj.positions >= arm.q_min - 1e-9) and np.all(traj.positions <= arm.q_max + 1e-9)
        assert np.all(np.abs(traj.velocities()) <= arm.speed_max * (1 + 1e-6)), move.label
        assert np.all(np.diff(traj.times) > 0)


def assert_continuous(plan):
    moves = plan.moves
    for a, b in zip(moves[:-1], moves[1:]):
        assert np.allclose(a.trajectory.end, b.trajectory.start, atol=1e-9), (a.label, b.label)


def tip_path(planner, move, frame):
    return np.array([planner.arm.fk(q, frame).t for q in move.trajectory.positions])


def line_error(points, direction):
    """Largest distance of points from the line through the first point along `direction`."""
    rel = points - points[0]
    along = rel @ direction
    return float(np.max(np.linalg.norm(rel - np.outer(along, direction), axis=1)))


@pytest.fixture(scope="module")
def push_plan(planner):
    return planner.push(planner.arm.home, 7, 1, 0.035, tower_layers=TALL, guard_n=0.5)


def test_push_plan_is_within_limits_and_continuous(planner, push_plan):
    assert push_plan.kind == "push"
    assert [s.label for s in push_plan.steps] == ["transit", "approach", "push", "retreat"]
    assert np.allclose(push_plan.q_start, planner.arm.home)
    assert_within_limits(planner, push_plan)
    assert_continuous(push_plan)


def _peak_accel(planner, move, frame):
    """The tool's largest acceleration along a straight move (m/s^2), from its waypoints."""
    points = tip_path(planner, move, frame)
    times = move.trajectory.times
    speed = np.linalg.norm(np.diff(points, axis=0), axis=1) / np.diff(times)
    mid = (times[:-1] + times[1:]) / 2
    return float(np.max(np.abs(np.diff(speed) / np.diff(mid))))


def test_guarded_moves_keep_the_gentle_ramp_and_moves_that_sense_nothing_go_fast(
        planner, push_plan):
    tip = push_plan.frame
    # the push is guarded: the tool's own acceleration would read as a push
    assert _peak_accel(planner, push_plan.step("push"), tip) <= LINE_ACCEL * 1.5
    for label in ("approach", "retreat"):        # unguarded, the approach ends short of the face
        fast = _peak_accel(planner, push_plan.step(label), tip)
        assert LINE_ACCEL * 1.5 < fast <= FREE_ACCEL * 1.5, label
    # a face whose place is only estimated is approached gently
    careful = planner.push(planner.arm.home, 7, 1, 0.0, tower_layers=TALL, end=1,
                           protrusion=0.004, guard_n=1.0, gentle_approach=True, retreat=False)
    assert _peak_accel(planner, careful.step("approach"), careful.frame) <= LINE_ACCEL * 1.5


def test_push_moves_the_fingertip_straight_along_the_block_axis(planner, push_plan):
    move = push_plan.step("push")
    tip = next(f for f in planner.arm.fingertip_frames
               if np.allclose(planner.arm.fk(move.trajectory.start, f).t,
                              tip_path(planner, move, f)[0]))
    points = tip_path(planner, move, tip)
    axis = planner.tower.axis(7)
    assert line_error(points, axis) < 3e-4
    travel = float((points[-1] - points[0]) @ axis)
    assert abs(travel) == pytest.approx(0.035 + 0.002, abs=1e-4)
    # The push goes into the tower from the back face, i.e. toward the arm's side.
    front = planner.tower.front_end(7)
    assert np.sign(travel) == front
    rotations = [planner.arm.fk(q, tip).R for q in move.trajectory.positions]
    assert max(np.abs(r - rotations[0]).max() for r in rotations) < 1e-4
    # The rod's rounded end (its frame is the centre of the rounding) starts the guarded leg
    # CONTACT_LEAD short of the back face and ends with its surface 35 mm past it.
    back = planner.tower.end_face_centre(7, 1, -front)
    radius = planner.cell.tool.fingertip_radius
    direction = front * axis
    assert float((back - points[0]) @ direction) - radius == pytest.approx(0.002, abs=1e-4)
    assert float((points[-1] - back) @ direction) + radius == pytest.approx(0.035, abs=1e-4)


def test_push_is_guarded_and_slow(push_plan):
    move = push_plan.step("push")
    assert move.guard is not None and move.guard.threshold_n == 0.5
    assert abs(np.linalg.norm(move.guard.direction) - 1) < 1e-9
    length = 0.037
    assert move.trajectory.duration >= length / 0.002 * 0.999


def test_transit_keeps_every_link_out_of_the_keep_out_box(planner, push_plan):
    traj = push_plan.step("transit").trajectory
    ends = (traj.start, traj.end)
    for t in np.linspace(0, traj.duration, 200):
        q = traj.sample(t)
        if min(np.max(np.abs(q - e)) for e in ends) < 0.02:
            continue  # the approach pose itself is allowed to sit close to the tower
        contacts = planner.checker.contacts(q, TALL, TRANSIT_MARGIN - 0.005)
        assert not contacts, (t, contacts)


def test_pull_grasps_the_front_end_and_pulls_straight_out(planner):
    plan = planner.pull(planner.arm.home, 7, 1, 0.035, tower_layers=TALL)
    assert [s.label for s in plan.steps] == ["transit", "open", "approach", "close", "pull",
                                             "squeeze", "pull_out"]
    assert isinstance(plan.step("close"), GripStep) and plan.step("close").force_n > 0
    # held lightly while it slides out, firmly before it leaves the tower
    assert plan.step("close").force_n < plan.step("squeeze").force_n == planner.cell.tool.grip_force
    assert plan.held is not None
    assert_within_limits(planner, plan)
    assert_continuous(plan)
    light = tip_path(planner, plan.step("pull"), "grasp")
    points = np.vstack([light, tip_path(planner, plan.step("pull_out"), "grasp")])
    axis = planner.tower.axis(7)
    assert line_error(points, axis) < 3e-4
    front = planner.tower.front_end(7)
    # Squeezed with SQUEEZE_INSIDE of the block still in the tower, which it then leaves at the
    # front: the block ends beyond the face.
    assert float((light[-1] - light[0]) @ axis) * front == pytest.approx(
        planner.cell.blocks.length.mean - 0.035 - SQUEEZE_INSIDE, abs=2e-3)
    assert float((points[-1] - points[0]) @ axis) * front > 0.075 - 0.035


def test_a_guarded_pull_approach_trips_on_a_block_in_the_fingers_way(planner):
    assert planner.pull(planner.arm.home, 7, 1, PUSH_THROUGH, tower_layers=TALL).step("approach").guard is None
    plan = planner.pull(planner.arm.home, 7, 1, PUSH_THROUGH, tower_layers=TALL, guard_n=2.0)
    guard = plan.step("approach").guard
    assert guard.threshold_n == 2.0
    # A block met on the way in pushes the fingers back out of the tower: the guard's axis, in
    # tool coordinates, is that push.
    approach = plan.step("approach").trajectory
    R = planner.arm.fk(approach.start, "grasp").R
    travel = planner.arm.fk(approach.end, "grasp").t - planner.arm.fk(approach.start, "grasp").t
    assert float((R @ np.array(guard.direction)) @ travel) / np.linalg.norm(travel) == pytest.approx(-1.0)


def test_place_sets_the_block_down_overhanging_then_pushes_it_home(planner):
    pull = planner.pull(planner.arm.home, 5, 0, 0.035, tower_layers=TALL)
    plan = planner.place(pull.q_end, 19, 2, pull.held)
    labels = [s.label for s in plan.steps]
    assert labels[:5] == ["transit", "descend", "settle", "release", "back_off"]
    assert "align_push" in labels
    assert_within_limits(planner, plan)
    assert_continuous(plan)
    settle = plan.step("settle")
    assert settle.guard is not None
    # Where the block was let go: its centre is the slot centre moved out along the axis.
    grasp = planner.arm.fk(settle.trajectory.end, "grasp")
    held_axis = grasp.R @ np.array(pull.held.direction)
    assert abs(held_axis[2]) < 1e-6   # the block lies level
    centre = grasp.t + held_axis * (planner.cell.blocks.length.mean / 2 - GRIP_DEPTH)
    slot = planner.tower.block_pose(19, 2).t
    offset = centre - slot
    assert abs(abs(offset @ planner.tower.axis(19)) - PLACE_OVERHANG) < 1e-3
    assert abs(offset[2] - (0.0005 - 0.001)) < 1e-3
    # The align push ends with the block's end flush with the tower face.
    push = plan.step("align_push")
    assert push.trajectory.duration > 0


def test_a_block_held_level_is_set_down_home_with_no_push_home(planner):
    pull = planner.pull(planner.arm.home, 12, 1, 0.035, tower_layers=TALL)
    level = planner.level_grip               # the block held level, the fingers along its axis
    plan = planner.place(pull.q_end, 19, 1, level, overhang=0.0)
    assert [s.label for s in plan.steps] == ["transit", "descend", "settle", "release", "back_off"]
    assert_within_limits(planner, plan)
    assert_continuous(plan)
    grasp = planner.arm.fk(plan.step("settle").trajectory.end, "grasp")
    centre = grasp.t + grasp.R @ np.array(level.direction) * (
        planner.cell.blocks.length.mean / 2 - GRIP_DEPTH)
    slot = planner.tower.block_pose(19, 1).t
    assert np.linalg.norm((centre - slot)[:2]) < 1e-3
    assert centre[2] - slot[2] == pytest.approx(0.0005 - 0.001, abs=1e-4)  # pressed 1 mm past rest
    # the fingers over the layer below keep DIRECT_FINGER_MARGIN, not the tower's side margin
    end = plan.step("settle").trajectory.end
    assert not planner.checker.contacts(end, 18, CONTACT_MARGIN, exempt=("held",), held=level,
                                        fine_margin=DIRECT_FINGER_MARGIN - 1e-4)
    assert planner.checker.contacts(end, 18, CONTACT_MARGIN, exempt=("held",), held=level,
                                    fine_margin=0.003)


def test_a_block_set_down_home_on_a_layer_measured_low_keeps_the_fingers_over_it(planner):
    # a tall tower's top layers sit lower than nominal: set down 2 mm lower, home still plans,
    # and the fingers keep their margin over the layer where it was measured
    pull = planner.pull(planner.arm.home, 10, 0, 0.035, tower_layers=22)
    level = planner.level_grip
    low = planner.place(pull.q_end, 22, 1, level, overhang=0.0, rise=-0.002)
    nominal = planner.place(pull.q_end, 22, 1, level, overhang=0.0)
    ends = [planner.arm.fk(p.step("settle").trajectory.end, "grasp").t[2] for p in (low, nominal)]
    assert ends[1] - ends[0] == pytest.approx(0.002, abs=1e-4)
    measured = 21 - 0.002 / planner.tower.layer_pitch
    assert not planner.checker.contacts(low.step("settle").trajectory.end, measured, CONTACT_MARGIN,
                                        exempt=("held",), held=level,
                                        fine_margin=DIRECT_FINGER_MARGIN - 1e-4)


def test_a_block_held_pitched_cannot_be_set_down_home(planner):
    pull = planner.pull(planner.arm.home, 3, 1, 0.035, tower_layers=TALL)
    assert abs(pull.held.direction[0]) > 0.3          # the grasps the planner takes are pitched
    with pytest.raises(PlanError, match="fingers"):
        planner.place(pull.q_end, 19, 1, pull.held, overhang=0.0)
    assert "align_push" in [s.label for s in planner.place(pull.q_end, 19, 1, pull.held).steps]


def test_a_probe_that_must_allow_a_push_through_checks_the_whole_line(planner):
    probe = planner.push(planner.arm.home, 7, 1, 0.005, tower_layers=TALL, guard_n=0.5,
                         retreat=False, through=0.03)
    push = probe.step("push").trajectory
    # from where the probe ends, the straight push on is plannable
    direction = planner.arm.fk(push.end, probe.frame).t - planner.arm.fk(push.start, probe.frame).t
    direction /= np.linalg.norm(direction)
    on = planner.straight(push.end, probe.frame, direction * 0.03, tower_layers=TALL,
                          exempt=("probe",))
    assert on.moves[0].trajectory.duration > 0
    # a push on far past the tower's other side is not
    with pytest.raises(PlanError):
        planner.push(planner.arm.home, 7, 1, 0.005, tower_layers=TALL, guard_n=0.5, retreat=False,
                     through=1.0)


def test_a_block_held_above_its_centre_line_starts_its_slow_set_down_that_much_higher(planner):
    pull = planner.pull(planner.arm.home, 9, 0, 0.035, tower_layers=TALL)
    raised = replace(pull.held, raised=0.005)
    heights = []
    for held in (pull.held, raised):
        settle = planner.place(pull.q_end, 19, 2, held).step("settle").trajectory
        heights.append(planner.arm.fk(settle.start, "grasp").t[2]
                       - planner.arm.fk(settle.end, "grasp").t[2])
    assert heights[1] - heights[0] == pytest.approx(0.005, abs=1e-4)


def test_a_block_set_down_beside_others_feels_its_way_down_past_their_tops(planner):
    pull = planner.pull(planner.arm.home, 9, 0, 0.035, tower_layers=TALL)
    alone, beside = (planner.place(pull.q_end, 19, 2, pull.held, beside=b) for b in (False, True))
    z = lambda q: planner.arm.fk(q, "grasp").t[2]
    settles = [p.step("settle").trajectory for p in (alone, beside)]
    # the same resting place, the guarded part starting a block's height (and a little) higher
    assert z(settles[1].end) == pytest.approx(z(settles[0].end), abs=1e-6)
    assert z(settles[1].start) - z(settles[0].start) == pytest.approx(
        planner.cell.blocks.height.mean + BESIDE_CLEARANCE, abs=1e-4)
    assert z(beside.step("descend").trajectory.end) == pytest.approx(z(settles[1].start), abs=1e-6)
    assert_continuous(beside)
    # past the neighbours' tops at the feeling pace, the last part as slow as ever
    speeds = np.diff([z(q) for q in settles[1].positions]) / np.diff(settles[1].times)
    assert -speeds.min() == pytest.approx(PLACE_FEEL_SPEED, rel=0.05)
    assert -speeds[-3] <= PLACE_SLOW_SPEED * 1.05


def test_a_place_beside_a_neighbour_shifts_across_the_layer(planner):
    pull = planner.pull(planner.arm.home, 5, 0, 0.035, tower_layers=TALL)
    nominal = planner.place(pull.q_end, 19, 0, pull.held)
    shifted = planner.place(pull.q_end, 19, 0, pull.held, shift=-0.003)
    at = [planner.arm.fk(p.step("settle").trajectory.end, "grasp").t for p in (nominal, shifted)]
    assert (at[1] - at[0]) @ planner.tower.across(19) == pytest.approx(-0.003, abs=1e-4)


def test_a_place_on_a_layer_measured_high_sets_down_and_pushes_home_that_much_higher(planner):
    pull = planner.pull(planner.arm.home, 5, 0, 0.035, tower_layers=TALL)
    nominal = planner.place(pull.q_end, 19, 0, pull.held)
    high = planner.place(pull.q_end, 19, 0, pull.held, rise=0.004)
    for step in ("settle", "align_push"):
        at = [planner.arm.fk(p.step(step).trajectory.end, p.frame if step != "settle" else "grasp").t
              for p in (nominal, high)]
        assert at[1] - at[0] == pytest.approx([0.0, 0.0, 0.004], abs=1e-4)


def test_unreachable_targets_raise_before_anything_moves(planner, default_cell):
    with pytest.raises(PlanError, match="layer 90"):
        planner.push(planner.arm.home, 90, 1, 0.035, tower_layers=91)
    data = _cell_data(default_cell)
    data["tower"]["position_m"] = [1.6, 0.0]
    far = MotionPlanner(parse_cell(data))
    with pytest.raises(PlanError, match="cannot pull layer 3 slot 1"):
        far.pull(far.arm.home, 3, 1, 0.035, tower_layers=TALL)


def test_transit_into_the_tower_is_refused(planner):
    from spatialmath import SE3
    inside = planner.arm.ik(SE3(planner.tower.block_pose(8, 1).t) * SE3.Rx(np.pi), "grasp",
                            planner.arm.home)
    with pytest.raises(PlanError, match="transit goal is in collision"):
        planner.transit(planner.arm.home, inside, tower_layers=TALL)


def _cell_data(cell):
    import tomllib
    from hardware.cells import DEFAULT_CELL
    return tomllib.loads(DEFAULT_CELL.read_text())


def test_transit_between_two_work_poses_is_planned(planner):
    a = planner.push(planner.arm.home, 4, 0, 0.01, tower_layers=TALL).q_end
    b = planner.pull(planner.arm.home, 12, 2, 0.035, tower_layers=TALL).step("approach").trajectory.start
    plan = planner.transit(a, b, tower_layers=TALL)
    assert np.allclose(plan.q_start, a) and np.allclose(plan.q_end, b)
    assert_within_limits(planner, plan)


def test_a_transit_whose_path_search_fails_searches_again_with_another_stream(planner,
                                                                              monkeypatch):
    """In a seed-2 game the carry of a block from layer 7 to layer 22 found no path and the turn
    stopped with the block held: a search has a fixed budget and a fixed random stream."""
    import planning.motion.transit as module
    a = planner.push(planner.arm.home, 4, 0, 0.01, tower_layers=TALL).q_end
    b = planner.pull(planner.arm.home, 12, 2, 0.035, tower_layers=TALL).step("approach").trajectory.start
    real, salts = module.plan_path, []

    def unlucky(*args, salt=0, **kwargs):
        salts.append(salt)
        return None if salt < module.TRANSIT_SEARCHES - 1 else real(*args, salt=salt, **kwargs)

    monkeypatch.setattr(module, "plan_path", unlucky)
    plan = planner.transit(a, b, tower_layers=TALL)
    assert np.allclose(plan.q_end, b) and salts == list(range(module.TRANSIT_SEARCHES))
    monkeypatch.setattr(module, "plan_path", lambda *args, **kwargs: None)
    with pytest.raises(PlanError, match="no collision-free transit"):
        planner.transit(a, b, tower_layers=TALL)


def test_the_keep_out_box_leans_with_the_tower(planner):
    """A seed-1 game's 22-layer tower leaned 2.2 mm away from the arm by layer 18 (the simulator's
    truth), and no grasp of a block pushed out PUSH_THROUGH there could be planned: against an
    upright box the fingers were within 2 mm of the tower at every try. At 12 mm a metre (3 mm by
    layer 18) no slot of layer 18 could be pulled against the upright box."""
    from planning.game.geometry import TowerPose
    nominal = planner.tower
    front = nominal.front_end(18) * nominal.axis(18)
    # the tower's axis moves 12 mm per metre away from the arm
    lean = tuple((nominal.pose.R.T @ -front)[:2] * 0.012)
    x, y = nominal.pose.t[:2]
    yaw = float(np.arctan2(nominal.pose.R[1, 0], nominal.pose.R[0, 0]))
    planner.set_tower(nominal.measured(TowerPose(x, y, yaw, nominal.pitch, *lean)))
    try:
        for slot in (0, 1, 2):
            plan = planner.pull(planner.arm.home, 18, slot, PUSH_THROUGH, tower_layers=22)
            assert plan.step("approach").trajectory.duration > 0
        # a point on the leaning axis at layer 18's height lies on the box's axis
        z = planner.tower.block_pose(18, 1).t[2]
        on_axis = planner.tower.pose.R @ np.r_[np.array(lean) * z, z] + planner.tower.pose.t
        assert planner.tower.to_tower(on_axis[None, :])[0][:2] == pytest.approx([0, 0], abs=1e-9)
    finally:
        planner.set_tower(nominal)


def test_a_pull_closes_on_the_block_where_it_was_seen(planner):
    """A block seen off its slot's centre is grasped centred on where it is, not on the slot."""
    nominal = planner.pull(planner.arm.home, 7, 2, 0.035, tower_layers=TALL)
    seen = planner.pull(planner.arm.home, 7, 2, 0.035, tower_layers=TALL, shift=0.002, rise=-0.001)
    at = [planner.arm.fk(p.step("approach").trajectory.end, "grasp").t for p in (nominal, seen)]
    assert (at[1] - at[0]) @ planner.tower.across(7) == pytest.approx(0.002, abs=1e-4)
    assert at[1][2] - at[0][2] == pytest.approx(-0.001, abs=1e-4)


def test_seen_offset_is_measured_from_the_slot_centre(planner):
    tower = planner.tower
    for layer in (6, 7):
        for slot in (0, 1, 2):
            centre = (tower.pose.inv() * tower.block_pose(layer, slot).t).flatten()  # tower frame
            assert tower.seen_offset(layer, slot, centre) == pytest.approx((0.0, 0.0), abs=1e-9)
            across = 1 if layer_axis(layer) == "x" else 0
            moved = np.array(centre, float)
            moved[across] += 0.003
            moved[2] -= 0.001
            assert tower.seen_offset(layer, slot, moved) == pytest.approx((0.003, -0.001), abs=1e-9)


def test_straight_moves_speed_up_gently_so_the_wrist_does_not_feel_the_tool_accelerate(planner):
    """The wrist sensor reads the tool's mass times its acceleration: a pull must not start with a
    jolt the size of a loose block's drag."""
    pull = planner.pull(planner.arm.home, 7, 1, 0.035, tower_layers=TALL).step("pull").trajectory
    points = np.array([planner.arm.fk(q, "grasp").t for q in pull.positions])
    speeds = np.linalg.norm(np.diff(points, axis=0), axis=1) / np.diff(pull.times)
    assert speeds.max() <= 0.03 * 1.01
    # the device interpolates between waypoints, so each segment's speed is a step: the first and
    # the last must be small ones
    assert speeds[0] <= 0.5 * 0.03 and speeds[-1] <= 0.5 * 0.03
    assert np.all(np.diff(speeds[:len(speeds) // 2]) >= -1e-6)    # no lurch in the speed-up


def _segment_speeds(planner, move, frame) -> np.ndarray:
    points = tip_path(planner, move, frame)
    return np.linalg.norm(np.diff(points, axis=0), axis=1) / np.diff(move.trajectory.times)


@pytest.mark.parametrize("guard_n", [0.21, 0.3, LIGHT_GUARD_N * 0.99])
def test_a_push_under_a_light_guard_starts_at_the_probes_pace(planner, guard_n):
    """The wrist reads a step in speed as a push (about 0.25 N for one to 10 mm/s): a push-through
    under the 0.2-0.3 N safe force high in the tower that started with a step to 14 mm/s tripped
    as it began on blocks that slide at 0.15 N. Under a light guard the first step is no larger
    than the probe's 2 mm/s (and a little), and the speed-up is gentle; the cruise is the same.
    The slow-down reads as a pull on the wrist, not as resistance: it may be less gentle, and
    the push takes less time than one that also slows down at LIGHT_ACCEL."""
    probe = planner.push(planner.arm.home, 15, 0, 0.005, tower_layers=TALL, guard_n=guard_n,
                         speed=0.002, retreat=False, through=PUSH_THROUGH)
    on = planner.straight(probe.q_end, probe.frame, planner.tower.axis(15) * -0.02,
                          tower_layers=TALL, speed=0.015, exempt=("probe",),
                          **guarded_pace(guard_n))
    put_back = planner.push(planner.arm.home, 15, 0, -0.005, tower_layers=TALL, end=1,
                            protrusion=0.027, speed=0.015, guard_n=guard_n, retreat=False)
    for move, frame in ((on.moves[0], probe.frame),
                        (put_back.step("push"), put_back.frame)):
        speeds = _segment_speeds(planner, move, frame)
        assert speeds[0] <= 0.0025
        assert speeds.max() > 0.01                    # it still gets going
        top = int(np.argmax(speeds))
        speeding_up = MoveStep(move.label, _head(move.trajectory, top + 1))
        assert _peak_accel(planner, speeding_up, frame) <= LIGHT_ACCEL * 2
        # it slows down at LIGHT_DECEL: a third of the line's pace, its pull on the wrist a small
        # share of the lightest guard
        assert _peak_accel(planner, move, frame) <= LIGHT_DECEL * 2
        assert speeds[-1] <= 0.005
    both_gentle = ramped_durations(0.024, 48, 0.02, LIGHT_ACCEL).sum()
    assert ramped_durations(0.024, 48, 0.02, **_pace_of(guard_n)).sum() < 0.85 * both_gentle
    # a probe keeps its pace, start to end
    probe_speeds = _segment_speeds(planner, probe.step("push"), probe.frame)
    assert probe_speeds.max() <= 0.002 * 1.01


def _head(traj, n):
    """The first `n` waypoints of a joint trajectory."""
    return type(traj)(traj.times[:n], traj.positions[:n])


def _pace_of(guard_n):
    pace = guarded_pace(guard_n)
    return dict(accel=pace["accel"], decel=pace["decel"])


def test_a_push_under_a_firm_guard_speeds_up_at_the_line_pace(planner):
    put_back = planner.push(planner.arm.home, 15, 0, -0.005, tower_layers=TALL, end=1,
                            protrusion=0.027, speed=0.015, guard_n=3.0, retreat=False)
    speeds = _segment_speeds(planner, put_back.step("push"), put_back.frame)
    assert speeds[0] > 0.005                          # the faster start of a firm guard
    assert _peak_accel(planner, put_back.step("push"), put_back.frame) <= LINE_ACCEL * 1.5


def test_the_place_backs_away_from_the_block_it_pushed_home_gently(planner):
    pull = planner.pull(planner.arm.home, 9, 1, PUSH_THROUGH, tower_layers=TALL)
    plan = planner.place(pull.q_end, 19, 1, pull.held)
    assert _peak_accel(planner, plan.step("align_retreat"), plan.frame) <= LINE_ACCEL * 1.5


def test_transits_keep_every_joint_within_its_acceleration_limit_at_their_corners(planner):
    """A transit around the tower is a path with corners; cruising through them asked the joints
    for 80-240 rad/s^2 (the simulated arm then trailed its set-point into a TRACKING fault)."""
    first = planner.push(planner.arm.home, 10, 0, 0.005, tower_layers=TALL, guard_n=0.5)
    second = planner.push(first.q_end, 5, 1, 0.005, tower_layers=TALL, guard_n=0.5)
    for plan in (first, second):
        transit = plan.step("transit").trajectory
        speeds = np.vstack([np.zeros(6), transit.velocities(), np.zeros(6)])
        t = transit.times
        mid = np.concatenate([[t[0]], (t[:-1] + t[1:]) / 2, [t[-1]]])
        accel = np.abs(np.diff(speeds, axis=0)) / np.diff(mid)[:, None]
        assert np.all(accel <= planner.cell.arm.accel_max * 1.01)


@pytest.mark.parametrize("pushed_on", [False, True])
def test_a_retrace_backs_the_way_the_tool_came_from_where_it_stopped(planner, pushed_on):
    """Seed 2: no straight retreat could be planned from where a probe of layer 3 stopped; the
    way in was planned and run, so the way out runs it backwards, passing no waypoint further in
    than the tool (a probe stopped part-way, then pushed on past where the probe would have ended,
    leaves the probe's unrun waypoints behind the tool's way in)."""
    probe = planner.push(planner.arm.home, 3, 1, 0.005, tower_layers=TALL, guard_n=0.6,
                         retreat=False, through=PUSH_THROUGH)
    approach, push = probe.step("approach").trajectory, probe.step("push").trajectory
    direction = planner.tower.axis(3) * planner.tower.front_end(3)
    stopped = push.sample(0.3 * push.duration)       # where a guard stopped the probe
    came_by = (approach, push)
    if pushed_on:
        on = planner.straight(stopped, probe.frame, direction * 0.016, tower_layers=TALL,
                              exempt=("probe",)).moves[0].trajectory
        came_by += (on,)
        stopped = on.sample(0.5 * on.duration)       # a jam halfway through
    back = retrace(planner, stopped, probe.frame, came_by, direction, tower_layers=TALL,
                           exempt=("probe",), label="retreat")
    move = back.moves[0]
    assert move.label == "retreat"
    assert np.allclose(move.trajectory.start, stopped) and np.allclose(move.trajectory.end,
                                                                       approach.start)
    tip = tip_path(planner, move, probe.frame)
    assert np.all(np.diff(tip @ direction) < 0)      # only ever back, never on into the block
    assert line_error(tip, direction) < 2e-4
    assert_within_limits(planner, back)


@pytest.mark.parametrize("joint", range(6))
def test_a_retrace_from_off_the_path_it_came_by_is_refused(planner, joint):
    probe = planner.push(planner.arm.home, 7, 1, 0.005, tower_layers=TALL, guard_n=0.6,
                         retreat=False)
    came_by = (probe.step("approach").trajectory, probe.step("push").trajectory)
    direction = planner.tower.axis(7) * planner.tower.front_end(7)
    off = came_by[1].sample(0.5 * came_by[1].duration)
    off[joint] += 0.05                               # within a line step's joint jump
    with pytest.raises(PlanError, match="cannot retrace 'retreat': the arm is not on the path"):
        retrace(planner, off, probe.frame, came_by, direction, tower_layers=TALL,
                        label="retreat")
    with pytest.raises(PlanError, match="not on the path"):
        retrace(planner, planner.arm.home, probe.frame, came_by, direction, tower_layers=TALL)


def _clear_of_the_tower(planner, plan, layers, exempt=()):
    """Every configuration of `plan`'s moves before it holds a block, checked as the planner
    checks a move at the tower (the fingers to their fine margin)."""
    from planning.motion.contact_geometry import FINGER_MARGIN
    for move in plan.moves:
        if move.label in ("pull", "squeeze", "pull_out"):
            break
        for q in move.trajectory.positions:
            if planner.checker.contacts(q, layers, CONTACT_MARGIN, exempt,
                                        fine_margin=FINGER_MARGIN):
                return False
    return True


def test_a_block_sticking_out_is_kept_clear_of_by_every_move_but_its_own(default_cell):
    """A block left 30 mm out at the front is an obstacle (make play seed 1: a pull beside one met
    it and the arm stopped on a 200 N fault); the move that works it may go where it sticks out,
    and once it is pushed home the tower is as before."""
    planner = MotionPlanner(default_cell)
    layer = 7
    out = planner.tower.front_end(layer) * 0.03
    nominal = planner.pull(planner.arm.home, layer, 1, PUSH_THROUGH, tower_layers=TALL)
    planner.set_tower(planner.tower, {(layer, 0): out})
    assert not _clear_of_the_tower(planner, nominal, TALL)      # the old way in meets it
    try:
        beside = planner.pull(planner.arm.home, layer, 1, PUSH_THROUGH, tower_layers=TALL)
    except PlanError:
        beside = None                     # no way in beside it: the block is not worked
    if beside is not None:
        assert _clear_of_the_tower(planner, beside, TALL)
    own = planner.pull(planner.arm.home, layer, 0, 0.03, tower_layers=TALL)
    assert own.held is not None
    assert planner.checker.sticking_out == {(layer, 0): out}    # kept after its own plan
    planner.block_moved((layer, 0), 0.0)
    assert planner.checker.sticking_out == {}
    assert _clear_of_the_tower(planner, nominal, TALL)


def test_a_sticking_out_box_spans_from_the_towers_face_to_the_blocks_end(planner):
    tower = planner.tower
    for layer, slot, out in ((6, 0, 0.02), (7, 2, -0.03)):
        low, high = tower.sticking_out_box(layer, slot, out)
        end = 1 if out > 0 else -1
        face = tower.to_tower(tower.end_face_centre(layer, slot, end, end * out)[None, :])[0]
        assert np.all(face >= low - 1e-9) and np.all(face <= high + 1e-9)
        along = 0 if layer_axis(layer) == "x" else 1
        outer, inner = (high, low) if end > 0 else (low, high)
        assert face[along] == pytest.approx(outer[along])
        assert inner[along] == pytest.approx(end * tower.block_length / 2)
        assert high[2] - low[2] == pytest.approx(tower.block_height)


def test_a_transit_keeps_clear_of_the_block_its_move_works(default_cell):
    """Only the move's own approach may go where the worked block sticks out: the transit to it
    keeps the transit margin from that part too (without it, 15 of 48 pulls of a block 35 mm out
    came nearer, that of layer 17 slot 1 among them)."""
    from planning.collision import CollisionChecker
    from planning.motion.transit import near_ends as _near
    planner = MotionPlanner(default_cell)
    out = {(17, 1): planner.tower.front_end(17) * 0.035}
    planner.set_tower(planner.tower, out)
    transit = planner.pull(planner.arm.home, 17, 1, 0.035, tower_layers=TALL).step("transit")
    qs = transit.trajectory.positions
    between = qs[~_near(qs, qs[0], qs[-1])]
    every = CollisionChecker(planner.arm, planner.tower, out)
    assert len(between) and every.clear_many(between, TALL, TRANSIT_MARGIN).all()


def test_near_its_ends_a_transit_keeps_the_margins_its_ends_keep(planner):
    """The path's configurations near either end were not checked at all: each keeps at least the
    contact margins the ends are held to."""
    from planning.motion.contact_geometry import FINGER_MARGIN
    from planning.motion.transit import near_ends as _near
    for layer, slot in ((3, 1), (12, 0), (17, 2)):
        plan = planner.push(planner.arm.home, layer, slot, 0.005, tower_layers=TALL)
        qs = plan.step("transit").trajectory.positions
        near = qs[_near(qs, qs[0], qs[-1])]
        assert planner.checker.clear_many(near, TALL, CONTACT_MARGIN,
                                          fine_margin=FINGER_MARGIN).all()


def test_a_transit_keeps_every_part_off_the_table_by_the_big_parts_margin(planner):
    """A finger's flat box reaches 6 mm past its capsule: a transit of tower 13 that held the
    fingers 2 mm off the table ran one into it at 343 N. Away from its ends (work poses at the
    low layers), a transit keeps every part TABLE_MARGIN off the table (from a push's approach
    at layer 4 to a pull's at layer 4 or 5, parts came within 4-5 mm of it)."""
    from planning.collision import TABLE_MARGIN
    from planning.motion.transit import near_ends
    home = planner.arm.home
    start = planner.push(home, 4, 1, 0.005, tower_layers=TALL).step("transit").trajectory.end
    for layer in (4, 5):
        goal = planner.pull(home, layer, 1, 0.035, tower_layers=TALL).step("transit").trajectory.end
        traj = planner._transit(start, goal, TALL)
        qs = np.array([traj.sample(t) for t in np.linspace(0, traj.duration, 300)])
        away = qs[~near_ends(qs, traj.start, traj.end)]
        low = [c for q in away for c in planner.checker.contacts(
            q, TALL, 0.0, table_margin=TABLE_MARGIN - 0.001) if c.obstacle == "table"]
        assert len(away) and not low, low[:3]


def test_a_transit_starts_from_a_set_point_at_a_joint_limit_as_the_wire_reports_it(planner):
    """The wire carries set-points as 32-bit floats, and every limit of the arm rounds outward:
    an arm sent to a limit reports a set-point past it (tower 11 at c1bacc1: a forced move found
    every block "outside the joint limits", and the tower fell). One truly past is refused."""
    at_limit = np.array(planner.arm.home, float)
    at_limit[5] = planner.arm.q_max[5]
    reported = at_limit.astype(np.float32).astype(float)       # firmware_bridge Telemetry.q_set
    assert reported[5] > planner.arm.q_max[5]
    plan = planner.transit(reported, planner.arm.home, tower_layers=TALL)
    # it starts at the limit, where the arm is to the wire's precision
    assert plan.q_start[5] == planner.arm.q_max[5] and np.allclose(plan.q_start, reported)
    assert np.allclose(plan.q_end, planner.arm.home) and planner.arm.within_limits(plan.q_start)
    past = at_limit.copy()
    past[5] += 0.01
    with pytest.raises(PlanError, match="transit start is outside the joint limits"):
        planner.transit(past, planner.arm.home, tower_layers=TALL)
