"""`cell check`'s reachability: the same answers however many processes plan it."""

import pytest

from planning.reachability import check_reach

pytestmark = pytest.mark.slow


def test_planning_in_parallel_gives_the_answers_planning_alone_does(default_cell, planner):
    layers = range(18, 20)            # pushes and pulls, and placements on layer 19
    alone = check_reach(default_cell, layers, planner)
    shared = check_reach(default_cell, layers, jobs=2)
    assert shared == alone
    assert [(r.layer, r.slot, r.place_needed) for r in alone] == \
        [(layer, slot, layer == 19) for layer in layers for slot in range(3)]
    assert all(r.ok for r in alone)
