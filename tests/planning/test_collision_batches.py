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


def _at_the_margin(checker, qs, clear, *check) -> np.ndarray:
    """Configurations within a hair of the margin: bisected between clear and blocked ones."""
    free, blocked = qs[clear], qs[~clear]
    found = []
    for a, b in zip(free, blocked):
        for _ in range(40):
            mid = (a + b) / 2
            if checker.is_clear(mid, *check):
                a = mid
            else:
                b = mid
        found += [a, b]
    return np.array(found)


def test_many_configurations_at_once_are_judged_as_one_at_a_time(planner):
    """Asked with 200 others or alone, a configuration gets the same answer, at the margin too
    (where a coarser or finer sampling of a long link would flip it)."""
    rng = np.random.default_rng(7)
    qs = planner.arm.home + rng.uniform(-1.2, 1.2, (200, 6))
    held = planner.level_grip
    for check in [(19, 0.02, (), None, None), (30, 0.008, ("probe",), None, 0.003),
                  (19, 0.008, ("held",), held, 0.003)]:
        batch = planner.checker.clear_many(qs, *check)
        alone = np.array([planner.checker.clear_many(q[None], *check)[0] for q in qs])
        np.testing.assert_array_equal(batch, alone)
        assert 0 < alone.sum() < len(qs)          # both answers occur
        edge = _at_the_margin(planner.checker, qs[:60], alone[:60], *check)
        at_edge = planner.checker.clear_many(edge, *check)
        np.testing.assert_array_equal(at_edge, [planner.checker.is_clear(q, *check) for q in edge])
        np.testing.assert_array_equal(at_edge, np.arange(len(edge)) % 2 == 0)
        # and the contacts found alone agree with the answer
        assert all((not planner.checker.contacts(q, *check)) == ok for q, ok in zip(edge, at_edge))
