"""The tool and a held block against the arm's own big links."""

import numpy as np
from hypothesis import example, given, settings
from hypothesis import strategies as st

from planning.collision import (BIG_LINKS, HELD_SELF_MARGIN, SELF_MARGIN, TOOL_PARTS,
                                segments_distance)

# Seen in the simulated cell: a transit to the top folded the wrist back over the forearm, and the
# held block, knocked against the forearm, fell out of the grip.
FOLDED = np.array([-0.033, -1.466, 1.88, 0.373, -2.284, -0.062])

coordinate = st.floats(-1.0, 1.0, allow_nan=False)
point = st.tuples(coordinate, coordinate, coordinate)


def sampled_distance(p0, p1, q0, q1, n=401):
    ts = np.linspace(0.0, 1.0, n)[:, None]
    a = p0 + ts * (p1 - p0)
    b = q0 + ts * (q1 - q0)
    return float(np.min(np.linalg.norm(a[:, None, :] - b[None, :, :], axis=2)))


@settings(max_examples=200, deadline=None)
@given(point, point, point, point)
@example((0.0, 0.0, 0.0), (0.0, 0.0625, 0.0), (0.0, 0.0, 1e-05), (0.0, 0.5, 0.0))  # nearly parallel
def test_segment_distance_is_the_closest_approach(p0, p1, q0, q1):
    p0, p1, q0, q1 = (np.array([v], float) for v in (p0, p1, q0, q1))
    exact = float(segments_distance(p0, p1, q0, q1)[0])
    sampled = sampled_distance(p0[0], p1[0], q0[0], q1[0])
    # never more than any sampled pair, and the samples come within half a step of it
    assert exact <= sampled + 1e-6       # a micrometre: segments that short are points
    step = (np.linalg.norm(p1 - p0) + np.linalg.norm(q1 - q0)) / 400
    assert sampled - exact <= step + 1e-9


def test_crossing_and_parallel_segments():
    d = segments_distance(np.array([[0, 0, 0], [0, 0, 0], [0, 0, 0]], float),
                          np.array([[1, 0, 0], [1, 0, 0], [1, 0, 0]], float),
                          np.array([[0.5, -1, 0.2], [0, 0.3, 0], [2, 0, 0]], float),
                          np.array([[0.5, 1, 0.2], [1, 0.3, 0], [3, 0, 0]], float))
    assert np.allclose(d, [0.2, 0.3, 1.0])


def test_a_wrist_folded_onto_the_forearm_is_in_collision(planner):
    held = planner.pull(planner.arm.home, 14, 1, 0.027, tower_layers=19).held
    found = planner.checker.contacts(FOLDED, 19, 0.02, held=held)
    hits = {(c.part, c.obstacle) for c in found if c.obstacle in BIG_LINKS}
    assert ("held", "link3") in hits


def test_home_is_clear_of_itself(planner):
    assert not [c for c in planner.checker.contacts(planner.arm.home, 19, 0.02)
                if c.obstacle in BIG_LINKS]


def test_carrying_a_block_to_the_top_keeps_it_and_the_tool_off_the_arm(planner):
    pull = planner.pull(planner.arm.home, 14, 1, 0.027, tower_layers=19)
    q = pull.step("pull_out").trajectory.end
    place = planner.place(q, 19, 1, pull.held)
    traj = place.step("transit").trajectory
    for t in np.linspace(0.0, traj.duration, 300):
        caps = planner.arm.link_capsules(traj.sample(t), pull.held)
        tool = [i for i, n in enumerate(caps.names) if n in TOOL_PARTS]
        links = [i for i, n in enumerate(caps.names) if n in BIG_LINKS]
        for i in tool:
            for j in links:
                gap = segments_distance(caps.starts[[i]], caps.ends[[i]], caps.starts[[j]],
                                        caps.ends[[j]])[0] - caps.radii[i] - caps.radii[j]
                margin = HELD_SELF_MARGIN if caps.names[i] == "held" else SELF_MARGIN
                # the path is checked at its samples; between them it may cut a little closer
                assert gap > margin - 0.003, (t, caps.names[i], caps.names[j], gap)
