"""Feeling for a pushed-out block's end with the fingers (controller/turn/checks.py): which finger
a touch was, and where the next grasp try goes."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.turn.checks import (FINGER_CLEARANCE, REGRASP_REACH, REGRASP_SHIFT, SAME_AIM_M,
                                    felt_offset, next_grasp_shift, touch_side)

BLOCK_HALF_WIDTH = 0.0125
OPEN_HALF = 0.020          # the open pads' half-distance (a 40 mm stroke)


def test_a_fingers_end_pressed_back_tells_its_side():
    # a finger at tool +y pressed back along -z twists the wrist negatively about x
    assert touch_side([0.0, 0.0, -1.0, -0.025, 0.0, 0.0], tool_y_across=1.0) == 1
    assert touch_side([0.0, 0.0, -1.0, -0.025, 0.0, 0.0], tool_y_across=-1.0) == -1
    assert touch_side([0.0, 0.0, -1.0, 0.025, 0.0, 0.0], tool_y_across=1.0) == -1


def test_a_pad_pushed_outward_by_the_block_between_the_fingers_tells_its_side():
    # the block between the fingers pushes the +y pad outward (+y), 0.17 m ahead of the sensor
    assert touch_side([0.0, 0.6, -0.3, -0.17 * 0.6, 0.0, 0.0], tool_y_across=0.9) == 1


@pytest.mark.parametrize("wrench", [[0.0, 0.0, -2.5, 0.002, 0.0, 0.0],   # both ends, head-on
                                    [0.0, 0.0, 0.0, 0.0, 0.0, 0.0]])     # nothing read
def test_a_head_on_touch_tells_no_side(wrench):
    assert touch_side(wrench, tool_y_across=1.0) == 0


def test_with_no_side_known_the_tries_go_to_the_open_side_first():
    assert next_grasp_shift([(0.0, 0)], outward=1) == pytest.approx(REGRASP_SHIFT)
    assert next_grasp_shift([(0.0, 0)], outward=-1) == pytest.approx(-REGRASP_SHIFT)
    assert next_grasp_shift([(0.0, None)], outward=0) == pytest.approx(REGRASP_SHIFT)
    tries = [(0.0, 0), (REGRASP_SHIFT, 0)]
    assert next_grasp_shift(tries, outward=1) == pytest.approx(-REGRASP_SHIFT)
    tries.append((-REGRASP_SHIFT, 0))
    assert next_grasp_shift(tries, outward=1) == pytest.approx(2 * REGRASP_SHIFT)


def test_a_sided_touch_sends_the_next_try_that_way_until_out_of_reach():
    tries = [(0.0, 1)]
    assert next_grasp_shift(tries) == pytest.approx(REGRASP_SHIFT)
    tries.append((REGRASP_SHIFT, 1))
    assert next_grasp_shift(tries) == pytest.approx(2 * REGRASP_SHIFT)
    tries.append((2 * REGRASP_SHIFT, 1))
    assert next_grasp_shift(tries) is None            # 24 mm off is not its slot's block any more


def test_a_side_learned_after_a_head_on_touch_skips_the_aim_already_tried():
    # head-on at 0, then the finger toward -across met it at +8: -8 next, not 0 again
    assert next_grasp_shift([(0.0, 0), (REGRASP_SHIFT, -1)]) == pytest.approx(-REGRASP_SHIFT)


def test_fingers_met_on_both_sides_try_between_them():
    tries = [(0.0, 1), (0.016, -1)]      # past 0 toward +, short of 16
    assert next_grasp_shift(tries) == pytest.approx(0.008)


def _met(aim: float, block: float) -> int | None:
    """What an ideal try finds: the side of the finger the block's edge reaches, or None when the
    block fits between the pads."""
    if block + BLOCK_HALF_WIDTH > aim + OPEN_HALF:
        return 1
    if block - BLOCK_HALF_WIDTH < aim - OPEN_HALF:
        return -1
    return None


@settings(max_examples=300, deadline=None)
@given(block=st.floats(-0.030, 0.030), outward=st.sampled_from([-1, 0, 1]),
       head_on=st.booleans())
def test_the_search_ends_within_reach_and_finds_a_block_it_can_reach(block, outward, head_on):
    """Against ideal fingers, every aim is new and within reach, the search ends, and a block whose
    centre lies within the reach (less the pads' clearance) is found within four tries."""
    tries: list[tuple[float, int | None]] = []
    aim = 0.0
    found = False
    while aim is not None and len(tries) < 8:
        assert abs(aim) <= REGRASP_REACH + 1e-9
        assert all(abs(aim - tried) > SAME_AIM_M for tried, _ in tries)
        side = _met(aim, block)
        if side is None:
            found = True
            break
        tries.append((aim, 0 if head_on else side))
        aim = next_grasp_shift(tries, outward)
    if not head_on and abs(block) <= REGRASP_REACH:
        assert found and len(tries) < 4
    assert len(tries) < 8


def test_a_sided_bound_leaves_the_fingers_clear_of_the_block():
    # the block lies past FINGER_CLEARANCE beyond the aim of a finger that met it: an ideal block
    # the +side finger just reached lies at least that far along
    aim = 0.0
    block = aim + OPEN_HALF - BLOCK_HALF_WIDTH + 1e-4
    assert _met(aim, block) == 1 and block - aim >= FINGER_CLEARANCE
    assert _met(next_grasp_shift([(aim, 1)]), block) is None
    assert np.isclose(next_grasp_shift([(aim, 1)]), REGRASP_SHIFT)


def test_a_side_block_given_up_is_felt_between_or_just_past_the_fingers_that_met_it():
    assert felt_offset([(0.0, 1), (0.012, -1)], outward=1) == pytest.approx(0.006)
    assert felt_offset([(0.0, 0), (0.008, 1)], outward=1) == pytest.approx(0.008 + REGRASP_SHIFT)
    assert felt_offset([(0.0, -1)], outward=-1) == pytest.approx(-REGRASP_SHIFT)
    # never further out than the search reaches
    assert felt_offset([(0.0, 0), (0.008, 1), (0.016, 1)], outward=1) == pytest.approx(REGRASP_REACH)


def test_no_felt_place_for_a_middle_block_or_one_felt_inward():
    """A middle block's neighbours hold it in its line: a finger that met it met something
    else (a neighbour sticking out), and a put-back aimed 24 mm across would push at nothing."""
    assert felt_offset([(0.0, 1), (0.008, 1), (0.016, 1)], outward=0) is None
    assert felt_offset([(0.0, -1)], outward=1) is None
    assert felt_offset([(0.0, 0), (0.008, 0), (-0.008, None)], outward=1) is None
