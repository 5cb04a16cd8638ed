import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from planning.stability import (BlockDims, _contact_patches, _convex_hull, _hull_margin,
                                _interface_hull, analyse, best_slot, block_centre, press_limit_n,
                                push_limit_n, removal_margin)
from planning.game.tower import TowerState, layer_axis

DIMS = BlockDims(0.075, 0.025, 0.015)


def tower(*rows):
    return TowerState(tuple(tuple(bool(v) for v in r) for r in rows))


def test_a_fresh_tower_stands_with_half_a_layer_of_margin():
    report = analyse(TowerState.fresh(), DIMS)
    assert report.stands
    assert report.margin_mm == pytest.approx(37.5, abs=0.01)


def test_a_layer_left_with_only_a_side_block_is_unstable():
    rows = [(1, 1, 1)] * 18
    rows[5] = (1, 0, 0)
    report = analyse(tower(*rows), DIMS)
    assert not report.stands
    assert report.weakest_interface in (5, 6)


def test_a_layer_left_with_only_its_middle_block_stands():
    rows = [(1, 1, 1)] * 18
    rows[5] = (0, 1, 0)
    report = analyse(tower(*rows), DIMS)
    assert report.stands and report.margin_mm == pytest.approx(12.5, abs=0.01)


def test_two_side_blocks_stand_wider_than_one_middle():
    rows = [(1, 1, 1)] * 18
    rows[5] = (1, 0, 1)
    assert analyse(tower(*rows), DIMS).margin_mm > 30


def test_an_offset_top_sticking_out_past_its_support_topples():
    rows = [(1, 1, 1)] * 18
    offsets = {(18, s): 0.040 for s in range(3)}
    offsets.update({(17, s): 0.030 for s in range(3)})
    assert not analyse(tower(*rows), DIMS, offsets).stands
    assert analyse(tower(*rows), DIMS, {(18, 0): 0.005}).stands


def test_one_top_block_overhanging_tips_off_even_when_its_layer_balances():
    rows = [(1, 1, 1)] * 18 + [(1, 1, 0)]
    assert analyse(tower(*rows), DIMS, {(19, 0): 0.020}).stands
    # The pair's centre of mass is still over the layer below; the overhanging block is not.
    report = analyse(tower(*rows), DIMS, {(19, 0): 0.045, (19, 1): -0.010})
    assert not report.stands
    assert report.weakest_interface == 18


def test_a_top_middle_block_on_a_lone_side_block_tips_off():
    rows = [(1, 1, 1)] * 16 + [(1, 0, 0), (0, 1, 0)]
    assert not analyse(tower(*rows), DIMS).stands
    rows = [(1, 1, 1)] * 16 + [(0, 1, 0), (1, 0, 0)]
    assert analyse(tower(*rows), DIMS).stands


def test_removal_margin_of_each_block_of_a_layer_of_two():
    # A lone middle block on top rests on a strip as wide as itself: half a width of margin.
    assert removal_margin(TowerState.fresh(), DIMS, (5, 0), (19, 1)) == pytest.approx(12.5, abs=0.01)
    # Two blocks left, middle and one side: the edge of the middle one is 12.5 mm from the centre.
    assert removal_margin(TowerState.fresh(), DIMS, (5, 0)) == pytest.approx(12.5, abs=0.01)
    rows = [(1, 1, 1)] * 18
    rows[4] = (1, 1, 0)
    thin = tower(*rows)
    assert removal_margin(thin, DIMS, (5, 0)) == pytest.approx(12.5, abs=0.01)   # the middle stays
    assert removal_margin(thin, DIMS, (5, 1)) < 0          # a side block alone: falls


def test_best_slot_for_a_new_layer_is_the_middle():
    assert best_slot(TowerState.fresh(), DIMS, 19, (0, 1, 2)) == 1


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([(1, 1, 1), (0, 1, 0), (1, 0, 1), (1, 1, 0), (0, 1, 1)]),
                min_size=3, max_size=25))
def test_towers_without_lone_side_blocks_stand(rows):
    rows = [(1, 1, 1)] + rows + [(1, 1, 1)]
    assert analyse(tower(*rows), DIMS).stands


def test_push_limit_is_the_tipping_force_about_the_base():
    dims = BlockDims(0.075, 0.025, 0.015, 0.016)
    fresh = TowerState.fresh()
    # layer 14 lies along y; the table's support reaches 37.5 mm either way from the centre line,
    # and the whole tower (54 blocks) rests on it; the push acts 13.5 layers up
    weight = 54 * 0.016 * 9.81
    assert push_limit_n(fresh, dims, (14, 0)) == pytest.approx(weight * 0.0375 / (13.5 * 0.015))
    # the higher the push, the less it takes
    assert push_limit_n(fresh, dims, (17, 1)) < push_limit_n(fresh, dims, (8, 1)) < push_limit_n(fresh, dims, (2, 1))
    # a bottom layer missing a side block narrows the base: the tower tips far sooner
    holed = fresh.moved((1, 2), (19, 1))
    assert push_limit_n(holed, dims, (14, 0)) < 0.5 * push_limit_n(fresh, dims, (14, 0))
    with pytest.raises(ValueError):
        push_limit_n(fresh, DIMS, (14, 0))


@given(st.integers(2, 18), st.sampled_from([0, 1, 2]))
def test_push_limit_is_positive_on_a_fresh_tower(layer, slot):
    dims = BlockDims(0.075, 0.025, 0.015, 0.016)
    assert 0 < push_limit_n(TowerState.fresh(), dims, (layer, slot)) < 100


MASSIVE = BlockDims(0.075, 0.025, 0.015, 0.016)


def test_a_press_over_the_support_never_tips_a_fresh_tower():
    assert press_limit_n(TowerState.fresh(), MASSIVE, (18, 0)) == np.inf
    assert press_limit_n(TowerState.fresh(), MASSIVE, (19, 1), 0.03) == np.inf   # set down on top


def test_a_press_beyond_a_narrow_layer_tips_the_tower_above_it():
    # layer 8 keeps its slots 0 and 1: everything above stands on a support 12.5 mm past its
    # centre line; a side block of the layers of the same direction lies over nothing there
    holed = TowerState.fresh().without(8, 2)
    limit = press_limit_n(holed, MASSIVE, (18, 2))
    assert 0 < limit < np.inf
    # the weight above layer 8 (10 layers and the pressed one's) about the support edge
    above = 30 * MASSIVE.mass * 9.81
    com = 0.0                      # the upper tower is centred over the missing block's neighbour
    assert limit == pytest.approx(above * (0.0125 - com) / (0.025 - 0.0125), rel=0.02)
    assert press_limit_n(holed, MASSIVE, (18, 0)) == np.inf      # the other side is supported


@settings(max_examples=60, deadline=None)
@given(st.lists(st.tuples(st.integers(3, 17), st.sampled_from([0, 2])), max_size=6, unique=True),
       st.integers(0, 2), st.sampled_from([-0.03, 0.0, 0.03]))
def test_the_press_limit_is_where_the_weighted_centre_reaches_a_support_edge(holes, slot, offset):
    tower = TowerState.fresh()
    for hole in holes:
        tower = tower.without(*hole)
    target = (19, slot)
    limit = press_limit_n(tower, MASSIVE, target, offset)
    placed = tower.with_block(*target)
    blocks = [(lay, s, offset if (lay, s) == target else 0.0) for lay, s in placed.blocks()]
    point = block_centre(MASSIVE, *target, offset)

    def tips(force: float) -> bool:
        for interface in range(19):
            above = [b for b in blocks if b[0] > interface]
            weight = len(above) * MASSIVE.mass * 9.81
            com = np.mean([block_centre(MASSIVE, *b) for b in above], axis=0)
            centre = (weight * com + force * point) / (weight + force)
            hull = _convex_hull(np.concatenate(_contact_patches(MASSIVE, blocks, interface)))
            if _hull_margin(centre, hull) < -1e-9:
                return True
        return False

    if not np.isfinite(limit):
        assert not tips(1e4)
    else:
        assert not tips(0.98 * limit) and tips(1.02 * limit)


def _margin_by_hand(point, points) -> float:
    """Signed distance (m) from `point` to the convex hull of `points`, edge by edge in plain
    Python: positive inside."""
    hull = _convex_hull(np.asarray(points))
    if len(hull) < 3:
        a, b = hull[0], hull[-1]
        t = 0.0 if np.allclose(a, b) else min(max((point - a) @ (b - a) / ((b - a) @ (b - a)), 0), 1)
        return -float(np.linalg.norm(point - (a + t * (b - a))))
    inside, nearest = True, np.inf
    for k in range(len(hull)):
        a, b = hull[k], hull[(k + 1) % len(hull)]
        edge = b - a
        if edge[0] * (point[1] - a[1]) - edge[1] * (point[0] - a[0]) < 0:
            inside = False
        t = min(max((point - a) @ edge / (edge @ edge), 0.0), 1.0)
        nearest = min(nearest, float(np.linalg.norm(point - (a + t * edge))))
    return nearest if inside else -nearest


def _interface_margins_by_hand(tower_state, dims, offsets):
    """The interfaces' margins (mm) straight from the definition, nothing cached or shared; the
    top layer's blocks each balance on their own too."""
    blocks = [(lay, s, offsets.get((lay, s), 0.0)) for lay, s in tower_state.blocks()]
    margins = {}
    for interface in range(tower_state.top_layer):
        above = [b for b in blocks if b[0] > interface]
        patches = _contact_patches(dims, blocks, interface)
        com = np.mean([block_centre(dims, *b) for b in above], axis=0)
        margins[interface] = (_margin_by_hand(com, np.concatenate(patches)) * 1000.0
                              if patches else -np.inf)
    top = tower_state.top_layer
    for block in (b for b in blocks if b[0] == top and top > 1):
        below = [b for b in blocks if b[0] == top - 1] + [block]
        patches = _contact_patches(dims, below, top - 1)
        centre = block_centre(dims, *block)
        own = _margin_by_hand(centre, np.concatenate(patches)) if patches else -np.inf
        if own > 0:
            k = 0 if layer_axis(block[0]) == "x" else 1
            along = np.concatenate(patches)[:, k]
            own = min(centre[k] - along.min(), along.max() - centre[k])
        margins[top - 1] = min(margins[top - 1], own * 1000.0)
    return margins


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from([(1, 1, 1), (0, 1, 0), (1, 0, 1), (1, 1, 0), (0, 1, 1), (0, 0, 1),
                                 (1, 0, 0)]),
                min_size=2, max_size=12),
       st.lists(st.floats(-0.02, 0.02), min_size=36, max_size=36))
def test_the_cached_interfaces_give_the_margins_of_the_definition(rows, shifts):
    """The model keeps each interface's support from one tower to the next: towers that differ
    only in a block's offset must not share it."""
    rows = [(1, 1, 1)] + rows
    state = tower(*rows)
    offsets = {b: shifts[i % len(shifts)] for i, b in enumerate(state.blocks()) if i % 3 == 0}
    for offs in (offsets, {}, {k: -v for k, v in offsets.items()}):
        report = analyse(state, DIMS, offs)
        expected = _interface_margins_by_hand(state, DIMS, offs)
        assert report.margins_mm.keys() == expected.keys()
        for interface, margin in expected.items():
            assert report.margins_mm[interface] == pytest.approx(margin, abs=1e-6)


def test_a_support_that_is_only_a_line_gives_a_negative_margin():
    """A block pushed a whole length along its axis (less a tenth of a nanometre) meets the block
    under it along an edge only: no area to stand on."""
    state = tower((1, 1, 1), (1, 0, 0), (0, 1, 0))
    offsets = {(3, 1): -DIMS.length + 1e-10}
    blocks = [(lay, s, offsets.get((lay, s), 0.0)) for lay, s in state.blocks()]
    assert len(_convex_hull(np.concatenate(_contact_patches(DIMS, blocks, 2)))) == 2
    report = analyse(state, DIMS, offsets)
    assert report.margins_mm[2] < 0


def test_a_cached_support_cannot_be_changed_by_whoever_reads_it():
    hull = _interface_hull(DIMS, 1, ((0, 0.0), (1, 0.0), (2, 0.0)), ((0, 0.0), (1, 0.0), (2, 0.0)))
    with pytest.raises(ValueError):
        hull[0, 0] = 1.0
