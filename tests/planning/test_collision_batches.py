"""The collision checker asked about many configurations at once answers as it does one at a time,
and the shortcut that skips sampling far segments never changes a decision."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from planning.collision import segments_box_distance

coordinate = st.floats(-0.6, 0.6, allow_nan=False)
point = st.tuples(coordinate, coordinate, coordinate)
LOW, HIGH = np.array([-0.05, -0.05, 0.0]), np.array([0.05, 0.05, 0.3])


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(point, point), min_size=1, max_size=8), st.floats(-0.05, 0.3))
def test_far_segments_are_bounded_never_misjudged(segments, at_least):
    starts = np.array([s for s, _ in segments], float)
    ends = np.array([e for _, e in segments], float)
    sampled = segments_box_distance(starts, ends, LOW, HIGH)
    quick = segments_box_distance(starts, ends, LOW, HIGH, at_least=np.full(len(starts), at_least))
    np.testing.assert_array_equal(sampled < at_least, quick < at_least)
    near = sampled < at_least
    np.testing.assert_array_equal(sampled[near], quick[near])   # the figures a contact reports
    assert np.all(quick <= sampled + 1e-12)                      # a bound, never more


def test_many_configurations_at_once_are_judged_as_one_at_a_time(planner):
    rng = np.random.default_rng(7)
    arm = planner.arm
    qs = arm.home + rng.uniform(-1.2, 1.2, (200, 6))
    held = planner.level_grip
    for layers, margin, exempt, grip, fine in [(19, 0.02, (), None, None),
                                               (30, 0.008, ("probe",), None, 0.003),
                                               (19, 0.008, ("held",), held, 0.003)]:
        batch = planner.checker.clear_many(qs, layers, margin, exempt, grip, fine)
        alone = [not planner.checker.contacts(q, layers, margin, exempt, grip, fine) for q in qs]
        assert list(batch) == alone
        assert 0 < sum(alone) < len(qs)          # both answers occur
