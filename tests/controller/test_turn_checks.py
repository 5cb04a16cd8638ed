"""The turn's pure checks: where to lay a block beside perceived neighbours, which blocks ride
out on the one drawn, and whether what the cameras see after a turn is what the move should have
left."""

from dataclasses import replace

import numpy as np
import pytest
from hypothesis import assume, given, strategies as st

from controller.turn.hands import Look
from controller.turn.checks import (PLACE_CLEARANCE, RIDER_MOVED_M, RIDER_READ_MAX_M,
                                    RIDER_TURNED_M, away_from_neighbours, outcome_problem,
                                    placement_shift, riders, support_rise)
from perception.observation import TowerObservation
from perception.tower_estimator import BlockObservation
from planning.game.geometry import TowerGeometry, TowerPose
from spatialmath import SE3
from planning.game.tower import TowerState

WIDTH = 0.025
TOWER = TowerGeometry(SE3(), 0.075, WIDTH, 0.015)     # no gap between neighbours


def observation(blocks, occupancy=None, out_of_place=()):
    """Blocks as (layer, slot, centre in mm, tower frame), each known by its place in the list
    (None: that block is not read)."""
    seen = [BlockObservation(i, b[0], b[1], 1, tuple(v / 1000 for v in b[2]), 0.0, 0.0, ("left",))
            for i, b in enumerate(blocks) if b is not None]
    full = occupancy if occupancy is not None else {(b.layer, b.slot): True for b in seen}
    return TowerObservation(0.0, TowerPose(0.5, 0.0, 0.0, 0.015), 0.0, 0.1, seen, full,
                            out_of_place=list(out_of_place))


def test_a_new_block_keeps_clear_of_a_neighbour_lying_off_its_slot():
    # layer 19 lies along x, so across is the tower's y; the middle block sits 1.3 mm toward slot 0
    obs = observation([(19, 1, (3.0, -1.3, 276.0))])
    shift = placement_shift(obs, (19, 0), TOWER)
    assert -0.025 + shift == pytest.approx(-0.0013 - WIDTH - PLACE_CLEARANCE)
    assert 0.025 + placement_shift(obs, (19, 2), TOWER) == pytest.approx(-0.0013 + WIDTH + PLACE_CLEARANCE)
    # where the neighbour leaves room, the block goes to its slot
    assert placement_shift(observation([(19, 1, (0.0, -5.0, 276.0))]), (19, 2), TOWER) == 0.0
    # an even layer lies along y: across is x
    obs = observation([(20, 1, (2.0, 0.0, 291.0))])
    assert 0.025 + placement_shift(obs, (20, 2), TOWER) == pytest.approx(0.002 + WIDTH + PLACE_CLEARANCE)


def test_a_block_between_two_neighbours_goes_as_near_its_slot_as_they_allow():
    obs = observation([(19, 0, (0.0, -26.0, 276.0)), (19, 2, (0.0, 30.0, 276.0))])
    assert placement_shift(obs, (19, 1), TOWER) == pytest.approx(-0.026 + WIDTH + PLACE_CLEARANCE)
    # too narrow a gap for the clearance: midway
    obs = observation([(19, 0, (0.0, -23.0, 276.0)), (19, 2, (0.0, 25.0, 276.0))])
    assert placement_shift(obs, (19, 1), TOWER) == pytest.approx(0.001)


def test_a_block_set_down_on_a_neighbour_tries_again_away_from_it():
    middle = observation([(19, 1, (0.0, 1.4, 276.0))])
    assert away_from_neighbours(middle, (19, 2), TOWER) == 1
    assert away_from_neighbours(middle, (19, 0), TOWER) == -1
    # between two: toward the one lying further from the slot
    two = observation([(19, 0, (0.0, -27.0, 276.0)), (19, 2, (0.0, 25.5, 276.0))])
    assert away_from_neighbours(two, (19, 1), TOWER) == -1
    two = observation([(19, 0, (0.0, -24.0, 276.0)), (19, 2, (0.0, 26.0, 276.0))])
    assert away_from_neighbours(two, (19, 1), TOWER) == 1
    # one neighbour of a middle slot: away from it
    assert away_from_neighbours(observation([(19, 2, (0.0, 25.0, 276.0))]), (19, 1), TOWER) == -1
    # nothing seen in the layer: nothing to move away from
    assert away_from_neighbours(observation([]), (19, 1), TOWER) == 0


def test_a_block_comes_to_rest_on_the_highest_block_below_it():
    assert TOWER.layer_z(18) == pytest.approx(0.2625)
    below = observation([(18, 0, (-25.0, 0.0, 262.5)), (18, 1, (0.0, 0.0, 265.5)),
                         (18, 2, (25.0, 0.0, 262.0))])
    for slot in range(3):      # each block of layer 18 crosses under every slot of layer 19
        assert support_rise(TOWER, below, (19, slot)) == pytest.approx(0.003)
    assert support_rise(TOWER, observation([(18, 2, (25.0, 0.0, 261.5))]), (19, 0)) \
        == pytest.approx(-0.001)
    # nothing seen below (or the table): the nominal height
    assert support_rise(TOWER, observation([]), (19, 1)) == 0.0
    assert support_rise(TOWER, observation([]), (1, 1)) == 0.0


def test_an_empty_layer_takes_the_nominal_slot():
    assert placement_shift(observation([]), (19, 1), TOWER) == 0.0


def seen(occupancy, out_of_place=()):
    return Look(TowerState.fresh(), {}, {}, occupancy, list(out_of_place))


def test_the_outcome_must_show_the_move_and_nothing_else():
    tower = TowerState(((True, True, True), (True, True, True), (True, True, True)))
    full = {(layer, s): True for layer in (1, 2, 3) for s in range(3)}
    before = Look(tower, {}, {}, full)
    after = dict(full) | {(1, 0): False, (4, 1): True}
    assert outcome_problem(before, seen(after), (1, 0), (4, 1)) is None
    assert "still looks full" in outcome_problem(before, seen(full | {(4, 1): True}),
                                                  (1, 0), (4, 1))
    assert "not seen" in outcome_problem(before, seen(after | {(4, 1): False}),
                                          (1, 0), (4, 1))
    moved = after | {(4, 1): False, (4, 2): True}
    assert "layer 4 slot 2 (seen full)" in outcome_problem(before, seen(moved | {(4, 1): True}),
                                                            (1, 0), (4, 1))
    # a block the turn did not touch gone from sight: which way the look differs is said
    assert "layer 2 slot 2 (seen empty)" in outcome_problem(before, seen(after | {(2, 2): False}),
                                                             (1, 0), (4, 1))
    assert "out of place after the turn: [7]" in outcome_problem(before, seen(after, [7]),
                                                                 (1, 0), (4, 1))


def test_a_block_lying_out_of_place_since_an_earlier_turn_is_not_this_turns():
    """Fast seed 11: a rider carried out of its slot in turn 11 lay there for the rest of the
    game, and every turn after was called illegal for it."""
    tower = TowerState(((True, True, True), (True, True, True), (True, False, True)))
    full = {(layer, s): s != 1 or layer != 3 for layer in (1, 2, 3) for s in range(3)}
    before = Look(tower, {}, {}, full, [21])
    after = dict(full) | {(1, 0): False, (4, 1): True}
    assert outcome_problem(before, seen(after, [21]), (1, 0), (4, 1)) is None
    assert "out of place after the turn: [7]" in outcome_problem(before, seen(after, [21, 7]),
                                                                 (1, 0), (4, 1))


def test_blocks_above_that_the_drawn_block_carried_or_turned_ride_on_it():
    """Layer 17 lies along x, drawn toward -x; 6 mm drawn. A block above rides when it went 2 mm
    the pull's way, or read 3 mm from where it was whichever way: turned by the pull, a block
    reads as moved sideways or back, its centre placed from one end's marker."""
    before = observation([(17, 1, (0.0, 0.0, 262.5)), (18, 1, (0.0, 0.0, 277.5)),
                          (18, 2, (0.0, 25.0, 277.5)), (19, 0, (-25.0, 0.0, 292.5)),
                          (16, 0, (0.0, -25.0, 247.5)), (19, 1, (0.0, 0.0, 292.5)),
                          (19, 2, (25.0, 0.0, 292.5)), (18, 0, (0.0, -25.0, 277.5)),
                          (20, 1, (0.0, 0.0, 307.5)), (20, 0, (-25.0, 0.0, 307.5))])
    after = observation([
        (17, 1, (-6.0, 0.0, 262.5)),     # the drawn block: not above itself
        (18, 1, (-3.0, 0.0, 277.5)),     # carried along: a rider
        (18, 2, (-1.0, 25.0, 277.5)),    # under the limit
        (19, 0, (-27.5, 0.5, 292.6)),    # 2.5 mm along: a rider
        (16, 0, (-5.0, -25.0, 247.5)),   # below the drawn block
        (19, 1, (2.5, 1.0, 292.5)),      # 2.7 mm, into the tower: neither
        (19, 2, (25.0 - 40.0, 0.0, 292.5)),   # further than the block was drawn: a misread
        (18, 0, (0.5, -29.0, 277.5)),    # turned: read 4 mm sideways, a rider
        None,                            # 20.1 unread in the later look
        (20, 0, (-25.0, 11.0, 307.5)),   # turned further: read 11 mm, under RIDER_READ_MAX_M
    ])
    assert riders(before, after, 17, -1, 0.006) == pytest.approx(
        {(18, 0): np.hypot(0.0005, 0.004), (18, 1): 0.003, (19, 0): np.hypot(0.0025, 0.0005),
         (20, 0): 0.011})
    assert list(riders(before, after, 17, -1, 0.006, min_m=0.0028)) == [(18, 0), (18, 1), (20, 0)]
    assert list(riders(before, after, 17, -1, 0.006, turned_m=0.0045)) == [(18, 1), (19, 0),
                                                                         (20, 0)]
    assert riders(before, before, 17, -1, 0.006) == {}
    # a block read by other cameras in the later look is not judged
    moved = observation([(18, 1, (-3.0, 0.0, 277.5))])
    moved.blocks[0] = replace(moved.blocks[0], block=1, cameras=("left", "right"))
    assert riders(before, moved, 17, -1, 0.006) == {}


@given(st.floats(-0.01, 0.01), st.floats(-0.01, 0.01), st.floats(-0.005, 0.005),
       st.sampled_from([1, -1]))
def test_a_block_above_rides_exactly_when_it_went_out_or_turned_and_no_further_than_the_block(
        dx, dy, dz, end):
    before = observation([(17, 1, (0.0, 0.0, 262.5)), (18, 1, (0.0, 0.0, 277.5))])
    after = observation([(17, 1, (0.0, 0.0, 262.5)), (18, 1, (dx * 1000, dy * 1000, 277.5 + dz * 1000))])
    sx, sy = np.float64(dx * 1000) / 1000, np.float64(dy * 1000) / 1000
    along, went = float(sx * end), float(np.hypot(sx, sy))
    most = max(0.006 + RIDER_MOVED_M, RIDER_READ_MAX_M)
    assume(abs(along - RIDER_MOVED_M) > 1e-9 and abs(went - RIDER_TURNED_M) > 1e-9
           and abs(went - most) > 1e-9)
    rides = (along >= RIDER_MOVED_M or went >= RIDER_TURNED_M) and went <= most
    assert list(riders(before, after, 17, end, 0.006)) == ([(18, 1)] if rides else [])
    assert riders(before, after, 18, end, 0.006) == {}
