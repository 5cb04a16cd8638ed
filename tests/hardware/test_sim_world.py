"""The simulated cell: a standing tower, an arm that matches the planner, a sensor that reads."""

import itertools

import mujoco
import numpy as np
import pytest

from hardware.sim.ground_truth import GroundTruth
from hardware.sim.world import FINGER_SPEED, SimBuildError, SimWorld
from perception.markers import MarkerDetector
from planning.kinematics import ArmModel

CORNERS = np.array(list(itertools.product((-1.0, 1.0), repeat=3)))   # a box's, in half-sizes


def test_fresh_tower_stands_and_reads_as_a_full_tower(world, fresh):
    world.restore(fresh)
    truth = GroundTruth(world)
    state = truth.tower_state()
    assert state.stories() == "18" and state.block_count == 54
    world.step_for(5.0)
    assert max(truth.displacements().values()) < 0.0002


def test_a_block_lying_upside_down_is_still_in_its_slot(world, fresh):
    # The gripper can hand a block over turned about its length; it is still a block in its slot.
    world.restore(fresh)
    truth = GroundTruth(world)
    block = next(b.index for b in world.blocks if truth.slot_of(b.index) == (18, 1))
    adr = world.model.jnt_qposadr[world.model.body_jntadr[world.block_body[block]]]
    turned = np.zeros(4)
    mujoco.mju_mulQuat(turned, world.data.qpos[adr + 3:adr + 7].copy(), np.array([0.0, 1.0, 0.0, 0.0]))
    world.data.qpos[adr + 3:adr + 7] = turned
    mujoco.mj_forward(world.model, world.data)
    assert truth.pose(block).tilt < np.radians(1)
    assert truth.slot_of(block) == (18, 1)
    world.restore(fresh)


def test_awake_tower_creeps_less_than_a_few_microns_a_second(world, fresh):
    world.restore(fresh)
    truth = GroundTruth(world)
    flag = int(mujoco.mjtEnableBit.mjENBL_SLEEP)
    world.model.opt.enableflags &= ~flag
    try:
        world.step_for(3.0)
    finally:
        world.model.opt.enableflags |= flag
    assert max(truth.displacements().values()) < 0.00005


@pytest.mark.parametrize("seed", range(1, 13))
def test_every_drawn_tower_settles_without_blowing_up(default_cell, seed):
    w = SimWorld(default_cell, seed, markers=False)
    assert w.data.warning[mujoco.mjtWarning.mjWARN_BADQACC].number == 0
    assert GroundTruth(w).tower_state().stories() == "18"


def test_same_seed_same_settled_tower(default_cell, world, fresh):
    world.restore(fresh)
    other = SimWorld(default_cell, 1, markers=False)
    a, b = GroundTruth(world).positions(), GroundTruth(other).positions()
    assert all(np.allclose(a[k], b[k], atol=1e-9) for k in a)


def test_arm_in_the_simulator_is_the_planners_arm(default_cell, world, fresh):
    world.restore(fresh)
    arm = ArmModel(default_cell)
    q = arm.home + np.array([0.2, -0.1, 0.15, 0.3, -0.2, 0.5])
    world.place_arm(q)
    site = world.data.site_xpos[world.model.site("grasp").id]
    assert np.allclose(site, arm.fk(q, "grasp").t, atol=1e-6)


def test_the_simulated_fingers_are_the_planners_fingers(default_cell, world, fresh):
    """Each finger, open, lies inside the planner's finger capsule along the held block's height
    (flange x) and along the fingers (flange z): a thicker simulated finger reached under a
    layer-1 block into the table, where the planner saw room."""
    world.restore(fresh)
    arm = ArmModel(default_cell)
    q = arm.home + np.array([0.2, -0.1, 0.15, 0.3, -0.2, 0.5])
    world.place_arm(q)
    world.set_gripper(default_cell.tool.stroke)
    world.step_for(1.0)
    flange = arm.fk(q, "flange")
    caps = default_cell.tool.fingers
    z_lo = min(min(c.start[2], c.end[2]) - c.radius for c in caps)
    z_hi = max(max(c.start[2], c.end[2]) + c.radius for c in caps)
    for side in ("a", "b"):
        body = world.model.body(f"finger_{side}").id
        for g in np.flatnonzero(world.model.geom_bodyid == body):
            half = world.model.geom_size[g]
            rot = world.data.geom_xmat[g].reshape(3, 3)
            corners = world.data.geom_xpos[g] + (CORNERS * half) @ rot.T
            local = np.array([flange.inv() * c for c in corners])
            assert np.all(np.abs(local[:, 0]) <= default_cell.tool.finger_thickness / 2 + 1e-6)
            assert np.all((local[:, 2] >= z_lo - 1e-6) & (local[:, 2] <= z_hi + 1e-6))


def test_joint_servos_track_a_new_target(world, fresh):
    world.restore(fresh)
    target = world.joint_positions() + np.radians([5, -3, 4, 6, -5, 8])
    world.set_joint_targets(target)
    world.step_for(1.0)
    assert np.max(np.abs(world.joint_positions() - target)) < np.radians(0.1)


def test_wrist_sensor_reads_the_tool_weight_with_noise(world, fresh, default_cell):
    world.restore(fresh)
    world.place_arm(np.array(default_cell.arm.home))
    world.step_for(0.2)
    readings = np.array([world.wrench()[:3] for _ in range(200)])
    weight = default_cell.tool.mass * 9.81
    assert abs(np.linalg.norm(readings.mean(axis=0)) - weight) < 0.5
    assert 0.005 < readings[:, 0].std() < 0.1


def test_gripper_opens_and_closes(world, fresh):
    world.restore(fresh)
    world.set_gripper(0.0)
    world.step_for(1.0)        # the fingers' set-points move at FINGER_SPEED
    assert world.gripper_width() < 0.001
    world.set_gripper(0.03)
    world.step_for(1.0)
    assert abs(world.gripper_width() - 0.03) < 0.001


def test_the_fingers_move_together_so_a_grasp_centres_the_block(world, fresh):
    world.restore(fresh)
    a, b = world.finger_qpos
    world.data.qpos[a], world.data.qpos[b] = 0.015, 0.005     # knocked to one side
    world.set_gripper(0.02)
    world.step_for(1.0)
    assert abs(world.data.qpos[a] - world.data.qpos[b]) < 0.0002
    assert abs(world.gripper_width() - 0.02) < 0.001


def test_the_fingers_close_at_their_drive_speed(world, fresh):
    """A real gripper closes at a set speed; fingers that jumped to their goal slammed into the
    block hard enough to shove it into the layer above."""
    world.restore(fresh)
    start = world.gripper_width()
    world.set_gripper(0.0)
    world.step_for(0.2)
    closed_by = start - world.gripper_width()
    assert closed_by == pytest.approx(2 * FINGER_SPEED * 0.2, rel=0.25)


def test_the_fingers_open_at_once_from_a_squeeze(world, fresh):
    """Closed on something, the set-points run past the fingers; opening starts from the fingers,
    not from those set-points."""
    world.restore(fresh)
    a, b = world.finger_qpos
    world.data.ctrl[world.finger_act] = 0.0
    world.data.qpos[a] = world.data.qpos[b] = 0.0125      # squeezing a 25 mm block
    world.set_gripper(0.04)
    world.step_for(0.1)
    assert world.gripper_width() > 0.025 + 0.5 * 2 * FINGER_SPEED * 0.1


def test_cameras_see_the_block_markers(world, fresh):
    """Both back faces carry one marker per block (27 each on 18 layers); each camera reads
    nearly all of them, and together they read every one."""
    world.restore(fresh)
    detector = MarkerDetector(54)
    seen = set()
    for cam in world.cell.cameras:
        image = world.render(cam.name)
        assert image.shape == (cam.height, cam.width, 3)
        found = {s.block for s in detector.detect(image)}
        assert len(found) >= 45
        seen |= found
    assert seen == set(range(54))


def test_a_cell_the_simulator_cannot_build(default_cell):
    import dataclasses
    from planning.game.cell.model import Capsule
    broken_tool = dataclasses.replace(default_cell.tool, body=(Capsule((0, 0, 0.05), (0, 0, 0.05), 0.0004),))
    cell = dataclasses.replace(default_cell, tool=broken_tool)
    with pytest.raises(SimBuildError, match="cannot build cell 'default'"):
        SimWorld(cell, 1, markers=False)


def test_a_run_from_a_restored_state_repeats_exactly(world, fresh):
    # The realism bench and the tests start every measurement from a saved world; a restore that
    # left the solver's warm start or what sleeps behind made a figure depend on what ran before.
    def sweep() -> tuple[dict, np.ndarray]:
        home = np.array(world.cell.arm.home)
        readings = []
        for i in range(400):
            world.set_joint_targets(home + 0.2 * np.sin(i / 40) * np.array([1, 0.3, -0.3, 0.5, 0.5, 1]))
            world.step(1)
            readings.append(world.wrench())
        return GroundTruth(world).positions(), np.array(readings)

    world.restore(fresh)
    world.step_for(0.3)          # some history: bodies fall asleep, the warm start fills
    saved = world.save()
    first = sweep()
    world.step_for(0.5)          # and a different history before the restore
    world.restore(saved)
    second = sweep()
    assert all(np.array_equal(first[0][k], second[0][k]) for k in first[0])
    assert np.array_equal(first[1], second[1])
    world.restore(fresh)


def test_what_the_arm_touches_is_named_with_its_force(world, fresh, caplog):
    """A block dropped on the wrist is what the arm meets; a wrist load near the overload limit is
    logged with it (what a fault met stays on record)."""
    from hardware.sim.virtual_firmware import SimHardware
    world.restore(fresh)
    assert world.arm_contacts() == []
    block = world.blocks[-1].index
    adr = world.model.jnt_qposadr[world.model.joint(f"block{block}").id]
    world.data.qpos[adr:adr + 3] = world.data.xpos[world.model.body("tool").id] + [0, 0, 0.04]
    world.data.qvel[:] = 0
    met = []
    for _ in range(40):
        world.step(10)
        met = world.arm_contacts()
        if met and met[0][2] > 0:
            break
    assert met[0][1] == f"block{block}" and met[0][2] > 0
    hardware = SimHardware(world)
    hardware.read()
    assert "the wrist reads" not in caplog.text
    world.wrench = lambda: np.array([0.0, 0.0, 400.0, 0, 0, 0])
    with caplog.at_level("WARNING"):
        hardware.read()
        hardware.read()
    assert caplog.text.count("the wrist reads") == 1 and f"block{block}" in caplog.text
    del world.wrench
