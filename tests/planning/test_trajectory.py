import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from planning.motion.trajectory import JointTrajectory, TrajectoryError, time_path

SPEED = np.radians([180.0] * 6)
ACCEL = np.radians([240.0] * 6)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.lists(st.floats(-3, 3), min_size=6, max_size=6), min_size=2, max_size=12),
       st.floats(0.1, 1.0))
def test_timed_paths_keep_every_joint_within_its_speed(points, scale):
    traj = time_path(np.array(points), SPEED, ACCEL, speed_scale=scale)
    assert traj.times[0] == 0 and np.all(np.diff(traj.times) > 0)
    assert np.all(np.abs(traj.velocities()) <= SPEED * scale * (1 + 1e-6) + 1e-9)


def test_ramps_make_the_start_and_end_slower_than_the_middle():
    line = np.linspace([0] * 6, [5.0] + [0] * 5, 101)
    traj = time_path(line, SPEED, ACCEL)
    speed = np.abs(traj.velocities()[:, 0])
    assert speed[0] < speed[len(speed) // 2] and speed[-1] < speed[len(speed) // 2]
    assert speed.max() == pytest.approx(SPEED[0], rel=1e-6)


def test_cartesian_lower_bounds_slow_a_segment():
    line = np.linspace([0] * 6, [0.01] + [0] * 5, 3)
    traj = time_path(line, SPEED, ACCEL, min_durations=np.array([1.0, 1.0]))
    assert traj.duration >= 2.0


def test_check_names_the_joint_that_breaks_a_limit():
    traj = JointTrajectory(np.array([0.0, 0.1]), np.array([[0.0] * 6, [1.0] + [0.0] * 5]))
    with pytest.raises(TrajectoryError, match="joint 1 in segment 0"):
        traj.check(np.full(6, -4.0), np.full(6, 4.0), SPEED)
    with pytest.raises(TrajectoryError, match="joint 1 at waypoint 1"):
        traj.check(np.full(6, -4.0), np.full(6, 0.5), np.full(6, 100.0))


def test_sample_and_join():
    a = time_path(np.array([[0.0] * 6, [1.0] * 6]), SPEED, ACCEL)
    b = time_path(np.array([[1.0] * 6, [0.0] * 6]), SPEED, ACCEL)
    both = a.then(b)
    assert both.duration == pytest.approx(a.duration + b.duration)
    assert np.allclose(both.sample(a.duration), [1.0] * 6)
    with pytest.raises(TrajectoryError):
        a.then(a)


def test_a_move_of_no_length_is_timed_in_numbers():
    """A retreat from where the tool already was once reached the device timed in NaNs (0/0 in
    the speed-up); a seed-3 game's arm then stopped on an OVERLOAD fault."""
    from planning.motion.paces import ramped_durations
    for length in (0.0, 1e-9):
        durations = ramped_durations(length, 1, 0.03, 0.1)
        assert np.all(np.isfinite(durations)) and np.all(durations > 0)
    moving = ramped_durations(0.02, 10, 0.03, 0.1)
    assert np.all(np.isfinite(moving)) and np.all(moving > 0)


def test_a_trajectory_with_a_time_that_is_not_a_number_is_refused():
    traj = JointTrajectory(np.array([0.0, np.nan, 1.0]), np.zeros((3, 2)))
    with pytest.raises(TrajectoryError, match="not a number"):
        traj.check(np.full(2, -1.0), np.full(2, 1.0), np.full(2, 1.0))
