"""The benchmark's oracle (controller/bench/oracle.py), without physics: given the true loads it takes
the least loaded stable block at once, puts a block that would drag an unloaded rider last, rules out
what jammed, and says when nothing is left; it is never one of the product's policies."""

import pytest

from controller.bench.oracle import (BENCH_POLICIES, ORACLE, ORACLE_RELAXED, RELAXED_FILTER,
                                     UNLOADED_N, OraclePolicy, check_mode, oracle_policy)
from planning.looseness import LoosenessBelief
from planning.policies import JAM_N, POLICIES, NoBlock, Policy, StepKind, TurnView
from planning.game.rules import legal_sources
from planning.stability import BlockDims
from planning.strategy import LOWEST_LAYER, rank
from planning.game.tower import TowerState

DIMS = BlockDims(0.075, 0.025, 0.015, 0.0193)


def view(tower=None):
    tower = tower or TowerState.fresh()
    return TurnView(tower, LoosenessBelief.prior(tower), DIMS, pulled_end=lambda layer: 1)


def loaded_everywhere(tower, load_n=1.0):
    return {(layer, slot): load_n for layer in range(1, tower.top_layer + 1)
            for slot in range(3) if tower.has_block(layer, slot)}


def test_the_least_loaded_stable_block_is_taken_at_once():
    tower = TowerState.fresh()
    loads = loaded_everywhere(tower) | {(9, 1): 0.0, (12, 1): 0.3}
    chooser = OraclePolicy(loads=lambda: loads).turn(view(tower))
    step = chooser.next_step()
    assert step.kind is StepKind.TAKE and step.source == (9, 1)
    assert 0 < step.guard_n <= JAM_N


def test_a_block_that_would_drag_an_unloaded_rider_goes_last():
    tower = TowerState.fresh()
    # (9, 2) lies across the pulled (+1) end of (8, *) and bears nothing: taking (8, 1) would drag it
    loads = loaded_everywhere(tower) | {(8, 1): 0.0, (9, 2): 0.0, (10, 1): 0.05}
    step = OraclePolicy(loads=lambda: loads).turn(view(tower)).next_step()
    assert step.source != (8, 1)
    assert loads[step.source] < UNLOADED_N     # (9, 2) itself: loose, and nothing rides on it
    # with that rider loaded, the free block under it is the one
    loads[(9, 2)] = 1.0
    assert OraclePolicy(loads=lambda: loads).turn(view(tower)).next_step().source == (8, 1)


def test_what_jammed_is_ruled_out_and_an_empty_choice_is_said():
    tower = TowerState.fresh()
    loads = loaded_everywhere(tower)
    chooser = OraclePolicy(loads=lambda: loads).turn(view(tower))
    taken = set()
    stable = {c.source for c in rank(tower, LoosenessBelief.prior(tower), DIMS)}
    while True:
        try:
            step = chooser.next_step()
        except NoBlock as err:
            assert "no stable, reachable block" in str(err)
            break
        assert step.source not in taken and step.source[0] >= LOWEST_LAYER
        assert step.source in legal_sources(tower)
        taken.add(step.source)
        chooser.jammed(step.source)
    assert taken == stable


def test_the_oracle_reads_the_loads_afresh_for_each_choice():
    tower = TowerState.fresh()
    loads = loaded_everywhere(tower) | {(9, 1): 0.0}
    chooser = OraclePolicy(loads=lambda: loads).turn(view(tower))
    assert chooser.next_step().source == (9, 1)
    chooser.jammed((9, 1))
    loads[(5, 1)] = 0.0          # a jammed push shifted the load
    assert chooser.next_step().source == (5, 1)


def test_the_oracle_is_the_benchmarks_alone():
    assert ORACLE not in POLICIES and ORACLE in BENCH_POLICIES
    with pytest.raises(ValueError, match="unknown policy"):
        Policy(ORACLE)
    with pytest.raises(RuntimeError, match="does not test"):
        OraclePolicy(loads=dict).turn(view()).probed(None, 0)


def test_the_relaxed_oracle_takes_what_the_robots_filter_leaves():
    """The relaxed oracle may take from the two bottom layers, which the robot leaves alone."""
    tower = TowerState.fresh()
    loads = loaded_everywhere(tower) | {(1, 1): 0.0}
    robot = oracle_policy(ORACLE, lambda: loads).turn(view(tower)).next_step()
    relaxed = oracle_policy(ORACLE_RELAXED, lambda: loads).turn(view(tower)).next_step()
    assert robot.source != (1, 1) and robot.source[0] >= LOWEST_LAYER
    assert relaxed.source == (1, 1)
    with pytest.raises(ValueError, match="unknown oracle"):
        oracle_policy("ours", dict)


def test_the_relaxed_filter_lets_through_what_the_robots_does_and_more():
    tower = TowerState.fresh().without(9, 0).without(12, 2)
    prior = LoosenessBelief.prior(tower)
    robot = {c.source for c in rank(tower, prior, DIMS)}
    relaxed = {c.source for c in rank(tower, prior, DIMS, accept=RELAXED_FILTER)}
    assert robot < relaxed
    assert {(1, 0), (2, 1)} <= relaxed


def test_both_oracles_play_only_in_the_fast_mode():
    for name in (ORACLE, ORACLE_RELAXED):
        check_mode(False, [name])
        with pytest.raises(ValueError, match="fast mode"):
            check_mode(True, ["ours", name])
