import pytest

from planning.looseness import LoosenessBelief, ProbeOutcome, probe_threshold_n
from planning.stability import BlockDims
from planning.strategy import (FOUND_TIGHT_P, MAX_PROBES, MAX_PROBES_TIGHT, MIN_ALIGN_N, MIN_PRESS_N, PLACE_SAFETY, RIDER_P, RIDER_SAFE_P,
                               Decision, after_probe, best_probed, keeps_less, next_probe,
                               placement_guards, placement_slot, rank, set_down_ends)
from planning.stability import press_limit_n, push_limit_n
from planning.game.tower import TowerState

DIMS = BlockDims(0.075, 0.025, 0.015)


def tower(*rows):
    return TowerState(tuple(tuple(bool(v) for v in r) for r in rows))


def test_threshold_falls_with_height():
    assert probe_threshold_n(1, 18) == pytest.approx(0.7)
    assert probe_threshold_n(17, 18) < probe_threshold_n(5, 18) < probe_threshold_n(1, 18)
    assert probe_threshold_n(17, 18) >= 0.25


def test_prior_follows_the_layer_pattern_and_the_measured_heights():
    rows = [(1, 1, 1)] * 18
    rows[3] = (1, 0, 1)
    belief = LoosenessBelief.prior(tower(*rows))
    assert belief.p_loose[1, 0] == belief.p_loose[1, 1] > belief.p_loose[4, 0]
    heights = {(2, 0): 0.0223, (2, 1): 0.0225, (2, 2): 0.0225}
    sharper = LoosenessBelief.prior(tower(*rows), heights)
    assert sharper.p_loose[2, 0] >= 0.75     # the thinner block carries nothing


def test_a_probe_that_slides_makes_a_block_confidently_loose():
    belief = LoosenessBelief.prior(TowerState.fresh())
    slid = ProbeOutcome(5, 1, peak_force_n=0.1, travel_m=0.0048, guard_tripped=False, threshold_n=0.5)
    assert belief.update(slid) > 0.9 and belief.confident_loose((5, 1))
    stuck = ProbeOutcome(6, 1, peak_force_n=0.6, travel_m=0.0002, guard_tripped=True, threshold_n=0.5)
    assert belief.update(stuck) < 0.05


def test_candidates_are_stable_legal_blocks_most_likely_loose_first():
    rows = [(1, 1, 1)] * 18
    rows[4] = (1, 1, 0)
    belief = LoosenessBelief.prior(tower(*rows))
    belief.p_loose[9, 2] = 0.8
    ranked = rank(tower(*rows), belief, DIMS)
    assert ranked[0].source == (9, 2)
    sources = [c.source for c in ranked]
    assert (5, 1) not in sources          # would leave a side block alone
    assert all(layer < 18 for layer, _ in sources)


def test_placement_prefers_the_middle_of_a_new_layer():
    assert placement_slot(TowerState.fresh(), DIMS) == (19, 1)
    assert placement_slot(TowerState.fresh().moved((3, 1), (19, 1)), DIMS)[0] == 19


def test_probe_policy():
    belief = LoosenessBelief.prior(TowerState.fresh())
    stuck = ProbeOutcome(6, 1, 0.8, 0.0002, True, 0.6)
    belief.update(stuck)
    assert after_probe(belief, stuck, 1) == Decision("next", (6, 1), restore=False)
    shoved = ProbeOutcome(7, 0, 0.65, 0.002, True, 0.6)
    belief.update(shoved)
    assert after_probe(belief, shoved, 2) == Decision("restore_then_next", (7, 0), restore=True)
    slid = ProbeOutcome(8, 2, 0.1, 0.0049, False, 0.6)
    belief.update(slid)
    assert after_probe(belief, slid, 3) .action == "take"
    other = ProbeOutcome(9, 0, 0.7, 0.0, True, 0.6)
    belief.update(other)
    last = after_probe(belief, other, MAX_PROBES)
    assert last.action == "take_best" and last.source == (8, 2) and not last.restore
    shoved_last = after_probe(belief, shoved, MAX_PROBES)
    assert shoved_last.source == (8, 2) and shoved_last.restore      # 7.0 goes home first


def test_a_block_found_tight_is_forced_only_after_more_probes():
    belief = LoosenessBelief.prior(TowerState.fresh())
    tight = [ProbeOutcome(layer, 0, 0.7, 0.0, True, 0.6) for layer in range(4, 4 + MAX_PROBES_TIGHT)]
    for outcome in tight[:MAX_PROBES]:
        belief.update(outcome)
    assert belief.p_loose[4, 0] < FOUND_TIGHT_P
    assert after_probe(belief, tight[MAX_PROBES - 1], MAX_PROBES).action == "next"
    for outcome in tight[MAX_PROBES:]:
        belief.update(outcome)
    forced = after_probe(belief, tight[-1], MAX_PROBES_TIGHT)
    assert forced.action == "take_best" and forced.source in {(o.layer, o.slot) for o in tight}


def test_a_block_that_jammed_is_never_the_best_bet_again():
    belief = LoosenessBelief.prior(TowerState.fresh())
    slid = ProbeOutcome(8, 2, 0.1, 0.0049, False, 0.6)
    other = ProbeOutcome(9, 0, 0.5, 0.001, False, 0.6)
    belief.update(slid)
    belief.update(other)
    assert best_probed(belief) == (8, 2)
    belief.jammed((8, 2))
    assert belief.p_loose[8, 2] == 0.0 and not belief.confident_loose((8, 2))
    assert best_probed(belief) == (9, 0)
    assert after_probe(belief, other, MAX_PROBES).source == (9, 0)
    belief.jammed((9, 0))
    assert best_probed(belief) is None
    # with every probed block jammed the policy goes on to the next candidate
    assert after_probe(belief, other, MAX_PROBES).action in ("next", "restore_then_next")


def test_the_two_bottom_layers_are_never_candidates():
    belief = LoosenessBelief.prior(TowerState.fresh())
    belief.p_loose[1, 1] = belief.p_loose[2, 1] = 0.99
    sources = [c.source for c in rank(TowerState.fresh(), belief, DIMS)]
    assert sources and all(layer >= 3 for layer, _ in sources)


@pytest.mark.parametrize("end, rider_slot", [(-1, 0), (1, 2)])
def test_a_candidate_with_an_unloaded_block_across_its_pulled_end_goes_last(end, rider_slot):
    rows = [(1, 1, 1)] * 18
    belief = LoosenessBelief.prior(tower(*rows))
    belief.p_loose[9, 1] = 0.85                     # the best bet ...
    belief.p_loose[10, rider_slot] = 0.8            # ... but a loose block lies on its pulled end
    ranked = rank(tower(*rows), belief, DIMS, pulled_end=lambda layer: end)
    flagged = [c.source for c in ranked if c.rider]
    assert (9, 1) in flagged and ranked[-1].rider and not ranked[0].rider
    assert all(layer == 9 or layer == 17 for layer, _ in flagged)   # 17 lies under the top layer
    # without the pulled end known, the ranking is by looseness alone
    assert rank(tower(*rows), belief, DIMS)[0].source == (9, 1)
    # a loose block at the other end rides nothing
    belief.p_loose[10, rider_slot] = 0.2
    belief.p_loose[10, 2 - rider_slot] = 0.8
    assert rank(tower(*rows), belief, DIMS, pulled_end=lambda layer: end)[0].source == (9, 1)


def _ranked(belief, rows, end=-1):
    return rank(tower(*rows), belief, DIMS, pulled_end=lambda layer: end)


def test_a_loaded_block_across_the_pulled_end_beats_an_untested_one():
    rows = [(1, 1, 1)] * 18
    rows[9] = (1, 0, 1)                 # layer 10: two blocks, both carry the load above
    belief = LoosenessBelief.prior(tower(*rows))
    ranked = _ranked(belief, rows)
    under_two = next(c for c in ranked if c.source[0] == 9)
    under_three = next(c for c in ranked if c.source[0] == 8)
    assert under_two.rider_p < RIDER_SAFE_P < under_three.rider_p < RIDER_P
    assert under_two.alone_p > under_three.alone_p
    assert ranked.index(under_two) < ranked.index(under_three)


def test_an_untested_block_across_the_best_candidates_pulled_end_is_tested_first():
    rows = [(1, 1, 1)] * 18
    belief = LoosenessBelief.prior(tower(*rows))
    belief.p_loose[9, 1] = 0.8                          # the best bet; (10, 0) lies on its end
    ranked = _ranked(belief, rows)
    assert ranked[0].source == (9, 1) and ranked[0].rider_at == (10, 0) and ranked[0].rider_unknown
    assert next_probe(ranked).source == (10, 0)
    # tested tight, it is no longer in doubt: the best bet goes first
    belief.update(ProbeOutcome(10, 0, 0.6, 0.0001, True, 0.5))
    ranked = _ranked(belief, rows)
    assert next_probe(ranked).source == (9, 1) and not ranked[0].rider_unknown
    # tested loose, it is a rider: the best bet goes last
    belief.p_loose[10, 0] = 0.95
    ranked = _ranked(belief, rows)
    assert next(c for c in ranked if c.source == (9, 1)).rider
    assert ranked[-1].rider


def test_a_block_in_doubt_that_is_not_a_candidate_is_not_tested_in_its_place():
    rows = [(1, 1, 1)] * 18
    belief = LoosenessBelief.prior(tower(*rows))
    belief.p_loose[16, 1] = 0.8                         # (17, 0) lies on its end ...
    ranked = rank(tower(*rows), belief, DIMS, exclude={(17, 0)}, pulled_end=lambda layer: -1)
    assert ranked[0].source == (16, 1) and ranked[0].rider_unknown
    assert (17, 0) not in [c.source for c in ranked]     # ... and is no candidate
    assert next_probe(ranked).source == (16, 1)


def test_a_confidently_loose_block_is_not_taken_with_a_rider_on_its_pulled_end():
    belief = LoosenessBelief.prior(TowerState.fresh())
    slid = ProbeOutcome(8, 1, 0.1, 0.0049, False, 0.6)
    belief.update(slid)
    # ridden: it slid 4.9 mm, so it goes back home before the rider is tested
    assert after_probe(belief, slid, 1, {(8, 1): 0.95}) == Decision("restore_then_next", (8, 1),
                                                                    restore=True)
    assert after_probe(belief, slid, 1, {(8, 1): 0.45}).action == "take"     # in doubt, untestable
    assert after_probe(belief, slid, 1).action == "take"
    alone = ProbeOutcome(5, 1, 0.15, 0.0035, False, 0.6)
    belief.update(alone)
    risks = {(8, 1): 0.95, (5, 1): 0.03}
    assert best_probed(belief) == (8, 1)                  # looser, but ...
    assert best_probed(belief, risks) == (5, 1)           # ... it would drag its rider
    assert after_probe(belief, alone, MAX_PROBES, risks).source == (5, 1)



def test_setting_a_block_down_stays_within_the_forces_that_would_tip_the_tower():
    massive = BlockDims(0.075, 0.025, 0.015, 0.019)
    fresh = TowerState.fresh()
    press, align = placement_guards(fresh, massive, (19, 1), 0.03, 3.0, 6.0)
    assert press == 3.0                                     # a press on top of a full tower: the default
    assert align == pytest.approx(PLACE_SAFETY * push_limit_n(fresh.with_block(19, 1), massive, (19, 1)))
    assert MIN_ALIGN_N <= align < 6.0
    weak = fresh.without(8, 2).without(18, 2)         # (18, 2) is being set back
    press, _ = placement_guards(weak, massive, (18, 2), 0.03, 3.0, 6.0)
    assert press == pytest.approx(max(MIN_PRESS_N, PLACE_SAFETY * min(
        press_limit_n(weak, massive, (18, 2), o) for o in (0.03, -0.03))))
    assert press < 3.0
    # without the blocks' mass nothing is known: the defaults
    assert placement_guards(weak, DIMS, (18, 2), 0.03, 3.0, 6.0) == (3.0, 6.0)


def test_a_block_is_set_down_overhanging_only_an_end_it_balances_on():
    dims = BlockDims(0.075, 0.025, 0.015, 0.019)
    # the rules keep the layer under the placement full: either end will do
    after = TowerState.fresh().without(9, 1)
    assert set_down_ends(after, dims, (19, 1), 0.03) == (1, -1)
    # a block taken from the highest complete layer (a forbidden move) leaves a gap under one
    # end: set down over it, 30 mm out, the block would tip off when let go
    gap = TowerState.fresh().moved((18, 0), (19, 1)).without(8, 2)
    assert set_down_ends(gap, dims, (19, 2), 0.03) == (1,)
    assert set_down_ends(gap, dims, (19, 2), 0.0) == (1, -1)
    only_middle = TowerState.fresh().moved((18, 0), (19, 1)).moved((18, 2), (19, 0)).without(8, 2)
    assert set_down_ends(only_middle, dims, (19, 2), 0.03) == ()


def test_only_a_full_layers_middle_leaves_its_layer_with_nothing_to_take():
    tower = TowerState.fresh()
    assert keeps_less(tower, (9, 1))
    assert not keeps_less(tower, (9, 0)) and not keeps_less(tower, (9, 2))
    one_side_gone = tower.without(9, 0)
    # then the other side goes, and the middle is left alone, which carries the tower
    assert not keeps_less(one_side_gone, (9, 1)) and not keeps_less(one_side_gone, (9, 2))


def test_between_equal_bets_a_side_block_goes_before_its_layers_middle():
    """Taking the middle of a full layer leaves two side blocks, neither of which can then go: the
    side block first keeps a second block of that layer takeable."""
    fresh = TowerState.fresh()
    belief = LoosenessBelief.prior(fresh)
    for slot in (0, 1, 2):
        belief.p_loose[9, slot] = 0.8
    ranked = [c.source for c in rank(fresh, belief, DIMS)]
    assert ranked[0] in ((9, 0), (9, 2)) and ranked.index((9, 1)) == 2
    belief.p_loose[9, 1] = 0.81                    # a better bet still goes first
    assert rank(fresh, belief, DIMS)[0].source == (9, 1)


def test_a_forced_move_takes_blocks_the_tower_stands_without_first_the_loosest_first():
    from planning.stability import removal_margin
    from planning.strategy import JAM_N, forced_order
    dims = BlockDims(0.075, 0.025, 0.015, 0.0135)
    rows = [(1, 1, 1)] * 18
    rows[5] = (1, 0, 1)             # layer 6 on its sides: taking either leaves one side block
    t = tower(*rows)
    belief = LoosenessBelief.prior(t)
    belief.jammed((3, 0))
    probe = ProbeOutcome(9, 2, 0.2, 0.004, False, 0.6)
    belief.update(probe)
    order = forced_order(t, belief, dims)
    sources = [s for s, _ in order]
    margins = [removal_margin(t, dims, s, placement_slot(t.without(*s), dims)) for s in sources]
    # every legal block, those the tower stands without before any it does not
    assert len(sources) == len(set(sources)) and (6, 0) in sources
    assert any(m < 0 for m in margins)
    first_unsafe = next((i for i, m in enumerate(margins) if m < 0), len(margins))
    assert all(m < 0 for m in margins[first_unsafe:])
    # among the safe ones, the loose-probed block first and the jammed one after every other
    safe = sources[:first_unsafe]
    assert safe[0] == (9, 2) and safe[-1] == (3, 0)
    # no push past the jam limit, nor past the force that would tip the tower
    assert all(0 < jam_n <= JAM_N for _, jam_n in order)


def test_a_forced_move_pushes_gently_where_the_model_says_the_tower_tips_at_no_force(monkeypatch):
    """Tower 11, turn 17: the model found no support under some interface (a push limit of 0 N);
    the forced move's guard was 0 N, which the firmware refused, and the game stopped. The tower
    stands: the block is pushed, with the gentlest guard the turn uses."""
    import planning.strategy as strategy
    from planning.motion.plans import ForceGuard
    dims = BlockDims(0.075, 0.025, 0.015, 0.0135)
    t = tower(*[(1, 1, 1)] * 18)
    monkeypatch.setattr(strategy, "push_limit_n", lambda *a, **k: 0.0)
    order = strategy.forced_order(t, LoosenessBelief.prior(t), dims)
    assert order and all(jam_n == strategy.MIN_PUSH_N for _, jam_n in order)
    with pytest.raises(ValueError, match="above 0 N"):
        ForceGuard((1.0, 0.0, 0.0), 0.0)
