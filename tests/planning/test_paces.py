"""A straight move's timing: a trapezoid in speed, its speed-up sampled finely enough that the
device's piecewise-constant speed climbs in small steps."""

import numpy as np
from hypothesis import given, settings, strategies as st

from planning.motion.paces import RAMP_TICK_S, ramped_samples

lengths = st.floats(1e-4, 0.2)
speeds = st.floats(0.002, 0.1)
accels = st.floats(0.05, 1.0)


@settings(max_examples=300, deadline=None)
@given(lengths, speeds, accels, st.sampled_from([0.001, 0.002, 0.005]))
def test_samples_cover_the_move_in_order_within_its_speed(length, speed, accel, step):
    s, t = ramped_samples(length, step, speed, accel)
    assert s[0] == 0.0 and t[0] == 0.0
    assert np.isclose(s[-1], length)
    assert np.all(np.diff(s) > 0) and np.all(np.diff(t) > 0)
    assert np.all(np.diff(s) <= step + 1e-12)          # never coarser than the cruise's sampling
    v = np.diff(s) / np.diff(t)
    assert v.max() <= speed * (1 + 1e-9)
    # from rest, and between any two segments, the speed steps by little more than `accel` adds
    # in a tick (a segment that spans the end of the speed-up averages over part of a tick)
    steps = np.abs(np.diff(np.concatenate([[0.0], v, [0.0]])))
    assert steps.max() <= 1.5 * accel * RAMP_TICK_S * (1 + 1e-6)


@given(lengths, speeds, accels)
def test_the_move_takes_the_trapezoids_time(length, speed, accel):
    _, t = ramped_samples(length, 0.002, speed, accel)
    peak = min(speed, np.sqrt(accel * length))
    assert np.isclose(t[-1], peak / accel + length / peak)


def test_a_move_of_no_length_is_one_sample():
    s, t = ramped_samples(0.0, 0.002, 0.01, 0.1)
    assert list(s) == [0.0] and list(t) == [0.0]
