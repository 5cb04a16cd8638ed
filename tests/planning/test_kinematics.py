import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from spatialmath import SE3

from planning.kinematics import IKError


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(-1.0, 1.0), min_size=6, max_size=6),
       st.sampled_from(["flange", "grasp", "fingertip0", "fingertip1"]))
def test_fk_ik_round_trip(planner, offsets, frame):
    arm = planner.arm
    q = arm.home + np.array(offsets)
    target = arm.fk(q, frame)
    seed = q + 0.05
    found = arm.ik(target, frame, seed)
    assert arm.within_limits(found)
    reached = arm.fk(found, frame)
    assert np.allclose(reached.t, target.t, atol=1e-5)
    assert np.allclose(reached.R, target.R, atol=1e-5)


def test_ik_seeded_from_current_joints_stays_on_the_same_branch(planner):
    arm = planner.arm
    q = arm.home + np.array([0.2, 0.1, -0.1, 0.1, 0.2, 0.3])
    found = arm.ik(arm.fk(q, "grasp") * SE3(0.01, 0, 0), "grasp", q)
    assert np.max(np.abs(found - q)) < 0.1


def test_tool_frames_are_the_cell_offsets(planner, default_cell):
    arm = planner.arm
    flange = arm.fk(arm.home)
    grasp = arm.fk(arm.home, "grasp")
    assert np.allclose((flange.inv() * grasp).t, default_cell.tool.grasp_centre)
    tip = arm.fk(arm.home, "fingertip1")
    assert np.allclose((flange.inv() * tip).t, default_cell.tool.fingertips[1])


def test_numpy_frames_match_the_toolbox(planner):
    q = np.array([0.3, -1.2, 1.4, -1.8, -1.57, 0.4])
    ours = planner.arm.joint_frames(q)
    toolbox = planner.arm.robot.fkine_all(q)
    for i in range(7):
        assert np.allclose(ours[i], toolbox[i].A)


def test_unreachable_pose_raises_a_clear_error(planner):
    far = SE3(3.0, 0.0, 0.5)
    with pytest.raises(IKError, match=r"grasp at \(3.000, 0.000, 0.500\)"):
        planner.arm.ik(far, "grasp", planner.arm.home)
    with pytest.raises(ValueError, match="unknown tool frame"):
        planner.arm.fk(planner.arm.home, "elbow")
