"""Events in world time: settled, fell, something in the workspace."""

import numpy as np

from perception.events import FallWatch, SettleWatch, TowerFell, TowerSettled
from perception.observation import TowerObservation
from perception.tower_estimator import BlockObservation
from planning.game.geometry import TowerPose
from tests.perception.conftest import frames_of

POSE = TowerPose(0.5, 0.0, 0.785, 0.01499)


def observation(t, offset_mm=0.0, fell=False):
    blocks = [BlockObservation(i, 1 + i // 3, i % 3, 1, ((i * 1.0 + offset_mm) / 1000, 0.0, 0.007), 0.0,
                               0.0, ("left",))
              for i in range(6)]
    return TowerObservation(t, POSE, 0.0, 0.1, blocks, {}, fell=fell)


def test_settled_after_a_second_without_a_block_moving_more_than_0_2_mm():
    watch = SettleWatch()
    events = [watch.update(observation(t, 0.1 * np.sin(t))) for t in np.arange(0.0, 1.5, 0.1)]
    assert events[:10] == [None] * 10
    assert isinstance(events[10], TowerSettled) and events[10].time == 1.0


def test_a_block_moving_restarts_the_settle_clock():
    watch = SettleWatch()
    for t in np.arange(0.0, 0.9, 0.1):
        watch.update(observation(t))
    assert watch.update(observation(0.9, offset_mm=0.5)) is None     # moved 0.5 mm
    results = [watch.update(observation(t, 0.5)) for t in np.arange(1.0, 2.05, 0.1)]
    assert results[-1] is not None and all(r is None for r in results[:-2])


def test_fall_is_reported_once_with_the_blocks_that_moved():
    watch = FallWatch()
    assert watch.update(observation(0.0)) is None
    fell = watch.update(observation(0.1, fell=True))
    assert isinstance(fell, TowerFell) and fell.time == 0.1
    assert watch.update(observation(0.2, fell=True)) is None


def test_an_arm_entering_the_workspace_is_seen(sim_world, default_cell):
    from perception.pipeline import Perception
    perception = Perception(default_cell)
    perception.observe(frames_of(sim_world))
    perception.workspace_clear(frames_of(sim_world))
    assert not [e for e in perception.observe(frames_of(sim_world)).events
                if type(e).__name__ == "WorkspaceEntered"]
    saved = sim_world.save()
    from planning.kinematics import ArmModel
    from spatialmath import SE3
    arm = ArmModel(default_cell)
    # The gripper right beside the tower's back faces, where a hand would come in.
    target = SE3(0.62, 0.0, 0.2) * SE3.Rx(np.pi)
    sim_world.place_arm(arm.ik(target, "grasp", arm.home))
    entered = [e for e in perception.observe(frames_of(sim_world)).events
               if type(e).__name__ == "WorkspaceEntered"]
    sim_world.restore(saved)
    assert entered and entered[0].fraction > 0.01


def test_the_robots_own_arm_can_be_cut_out_of_the_watch(sim_world, default_cell):
    from perception.events import capsule_mask
    from perception.pipeline import Perception
    from planning.kinematics import ArmModel
    from spatialmath import SE3
    perception = Perception(default_cell)
    perception.observe(frames_of(sim_world))
    perception.workspace_clear(frames_of(sim_world))
    saved = sim_world.save()
    arm = ArmModel(default_cell)
    q = arm.ik(SE3(0.62, 0.0, 0.2) * SE3.Rx(np.pi), "grasp", arm.home)
    sim_world.place_arm(q)
    caps, home = arm.link_capsules(q), arm.link_capsules(np.array(default_cell.arm.home))
    tool_seen = 0
    for name, frame in frames_of(sim_world).items():
        camera = next(c for c in perception.cameras if c.name == name)
        own = capsule_mask(camera, frame.image.shape, caps.starts, caps.ends, caps.radii + 0.04)
        u, v = np.round(camera.project(caps.ends[-1:])[0]).astype(int)
        if 0 <= v < own.shape[0] and 0 <= u < own.shape[1]:
            assert own[v, u]                                 # the tool is in the mask
            tool_seen += 1
        # where the arm is now and where it was when the clear workspace was taken
        was = capsule_mask(camera, frame.image.shape, home.starts, home.ends, home.radii + 0.04)
        assert perception.workspace.update(name, frame.image, 0.0, exclude=own | was) is None
    sim_world.restore(saved)
    assert tool_seen >= 1
