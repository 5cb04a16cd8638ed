"""The three ways of choosing a block (planning/policies.py), without any physics: what each asks
to test or take, in which order, and what it does with a probe's outcome."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planning.looseness import LoosenessBelief, ProbeOutcome, probe_threshold_n
from planning.policies import (JAM_N, MIDDLE_FIRST_THRESHOLD_N, NoBlock, Policy, TurnView)
from planning.game.rules import legal_sources
from planning.stability import BlockDims
from planning.strategy import LOWEST_LAYER
from planning.game.tower import TowerState

DIMS = BlockDims(0.075, 0.025, 0.015, 0.0193)


def view(tower=None):
    tower = tower or TowerState.fresh()
    return TurnView(tower, LoosenessBelief.prior(tower), DIMS, pulled_end=lambda layer: 1)


def outcome(source, tripped, travel_m=0.0, peak_n=0.1, threshold_n=0.5):
    return ProbeOutcome(*source, peak_n, travel_m, tripped, threshold_n)


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="known: ours, random, middle-first"):
        Policy("cautious")


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000), st.lists(st.tuples(st.integers(3, 17), st.integers(0, 2)),
                                        max_size=12, unique=True))
def test_random_takes_legal_reachable_blocks_without_testing_and_never_one_that_jammed(seed, gone):
    tower = TowerState.fresh()
    for layer, slot in gone:           # a played tower: no layer may lose two blocks here
        if sum(tower.row(layer)) == 3:
            tower = tower.without(layer, slot)
    chooser = Policy("random", np.random.default_rng(seed)).turn(view(tower))
    legal = {s for s in legal_sources(tower) if s[0] >= LOWEST_LAYER}
    jammed = set()
    for _ in range(len(legal)):
        step = chooser.next_step()
        assert step.kind == "take" and step.guard_n == JAM_N
        assert step.source in legal and step.source not in jammed
        chooser.jammed(step.source)
        jammed.add(step.source)
    with pytest.raises(NoBlock):
        chooser.next_step()


def test_middle_first_tests_middle_blocks_top_down_then_the_sides_at_one_threshold():
    chooser = Policy("middle-first").turn(view())
    asked = []
    for n in range(1, 60):
        try:
            step = chooser.next_step()
        except NoBlock:
            break
        if step.kind == "take":
            break
        assert step.guard_n == MIDDLE_FIRST_THRESHOLD_N
        asked.append(step.source)
        decision = chooser.probed(outcome(step.source, tripped=True), n)
        assert decision.action == "next" and not decision.restore
    middles = [(layer, 1) for layer in range(17, LOWEST_LAYER - 1, -1)]
    assert asked[:len(middles)] == middles
    assert all(slot != 1 for _, slot in asked[len(middles):])
    assert len(asked) == len(set(asked)) == 3 * (17 - LOWEST_LAYER + 1)


def test_middle_first_takes_the_first_block_that_gives_way_and_restores_one_left_out():
    chooser = Policy("middle-first").turn(view())
    first = chooser.next_step().source
    decision = chooser.probed(outcome(first, tripped=True, travel_m=0.002), 1)
    assert decision.restore and decision.action == "restore_then_next"
    second = chooser.next_step().source
    assert second != first
    assert chooser.probed(outcome(second, tripped=False, travel_m=0.005), 2).action == "take"


def test_middle_first_takes_the_least_resisting_block_when_none_gives_way():
    tower = TowerState.fresh()
    chooser = Policy("middle-first").turn(view(tower))
    peaks = {}
    n = 0
    while (step := chooser.next_step()).kind == "probe":
        n += 1
        peaks[step.source] = 0.5 + 0.01 * ((step.source[0] * 7 + step.source[1] * 3) % 11)
        chooser.probed(outcome(step.source, tripped=True, peak_n=peaks[step.source]), n)
    least = min(peaks, key=lambda s: (peaks[s], s))
    assert step.source == least
    chooser.jammed(least)
    assert chooser.next_step().source != least


def test_ours_tests_within_the_layer_threshold_and_takes_a_block_that_slid():
    tower = TowerState.fresh()
    chooser = Policy("ours").turn(view(tower))
    step = chooser.next_step()
    assert step.kind == "probe"
    assert step.guard_n <= probe_threshold_n(step.source[0], tower.top_layer) + 1e-12
    slid = outcome(step.source, tripped=False, travel_m=0.005, peak_n=0.05, threshold_n=step.guard_n)
    chooser.view.belief.update(slid)
    assert chooser.probed(slid, 1).action == "take"
    assert chooser.jam_n(step.source) <= JAM_N


def test_ours_never_asks_for_the_same_block_twice_in_a_turn():
    tower = TowerState.fresh()
    chooser = Policy("ours").turn(view(tower))
    asked = []
    for n in range(1, 7):
        step = chooser.next_step()
        if step.kind == "take":
            break
        asked.append(step.source)
        stuck = outcome(step.source, tripped=True, travel_m=0.0, peak_n=step.guard_n,
                        threshold_n=step.guard_n)
        chooser.view.belief.update(stuck)
        chooser.probed(stuck, n)
    assert len(asked) == len(set(asked))
