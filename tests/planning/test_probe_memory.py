"""What probes found is kept from turn to turn while the load on the block has not changed
(planning/looseness.py `ProbeMemory`): pure logic, checked over every tower and change."""

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from planning.looseness import LoosenessBelief, ProbeMemory, ProbeOutcome, load_context
from planning.game.tower import SLOTS, TowerError, TowerState

TIGHT = dict(peak_force_n=0.5, travel_m=0.0002, guard_tripped=True, threshold_n=0.5)
LOOSE = dict(peak_force_n=0.05, travel_m=0.004, guard_tripped=False, threshold_n=0.5)


def probe(key, found):
    return ProbeOutcome(key[0], key[1], **found)


def test_a_finding_holds_on_the_same_tower_as_if_probed_again():
    tower = TowerState.fresh()
    memory = ProbeMemory()
    memory.remember(tower, probe((9, 1), TIGHT))
    memory.remember(tower, probe((5, 0), LOOSE))
    belief = LoosenessBelief.prior(tower)
    assert memory.recall(tower, belief) == [(5, 0), (9, 1)]
    probed = LoosenessBelief.prior(tower)
    probed.update(probe((9, 1), TIGHT))
    probed.update(probe((5, 0), LOOSE))
    assert belief.p_loose == probed.p_loose
    assert belief.probes == []            # this turn has probed nothing yet


def test_a_block_placed_on_top_far_above_keeps_the_finding_one_beside_it_does_not():
    tower = TowerState.fresh()
    memory = ProbeMemory()
    memory.remember(tower, probe((16, 1), TIGHT))
    memory.remember(tower, probe((17, 1), TIGHT))
    grown = tower.with_block(19, 1)
    assert memory.recall(grown, LoosenessBelief.prior(grown)) == [(16, 1), (17, 1)]
    grown = grown.with_block(18 + 1, 0)
    assert memory.recall(grown, LoosenessBelief.prior(grown)) == [(16, 1), (17, 1)]
    # a block taken from layer 16 changes the load on layers 15-17: both are forgotten for good
    taken = grown.without(16, 0)
    assert memory.recall(taken, LoosenessBelief.prior(taken)) == []
    assert memory.recall(grown, LoosenessBelief.prior(grown)) == []


def test_a_new_tower_forgets_everything():
    tower = TowerState.fresh()
    memory = ProbeMemory()
    memory.remember(tower, probe((8, 2), TIGHT))
    memory.clear()
    fresh = LoosenessBelief.prior(tower)
    assert memory.recall(tower, fresh) == [] and fresh.p_loose == LoosenessBelief.prior(tower).p_loose


def test_a_probe_this_turn_replaces_a_recalled_finding_instead_of_adding_to_it():
    tower = TowerState.fresh()
    memory = ProbeMemory()
    memory.remember(tower, probe((9, 1), LOOSE))
    belief = LoosenessBelief.prior(tower)
    memory.recall(tower, belief)
    assert belief.confident_loose((9, 1))
    # probed again, it gives way only near the limit: that says nothing either way, so the
    # block is back at its prior, not still confidently loose
    near_limit = dict(peak_force_n=0.45, travel_m=0.004, guard_tripped=False, threshold_n=0.5)
    assert belief.update(probe((9, 1), near_limit)) == pytest.approx(
        LoosenessBelief.prior(tower).p_loose[9, 1])
    # and a block found loose twice under the same load is no surer than once
    memory.remember(tower, probe((9, 1), LOOSE))
    memory.remember(tower, probe((9, 1), LOOSE))
    twice = LoosenessBelief.prior(tower)
    memory.recall(tower, twice)
    once = LoosenessBelief.prior(tower)
    once.update(probe((9, 1), LOOSE))
    assert twice.p_loose[9, 1] == pytest.approx(once.p_loose[9, 1])


def test_a_new_finding_under_another_load_replaces_the_old_one():
    tower = TowerState.fresh()
    memory = ProbeMemory()
    memory.remember(tower, probe((9, 1), TIGHT))
    changed = tower.without(10, 0)
    memory.remember(changed, probe((9, 1), LOOSE))
    belief = LoosenessBelief.prior(changed)
    memory.recall(changed, belief)
    alone = LoosenessBelief.prior(changed)
    alone.update(probe((9, 1), LOOSE))
    assert belief.p_loose[9, 1] == alone.p_loose[9, 1]


@st.composite
def towers_and_changes(draw):
    rows = [tuple(draw(st.booleans()) or s == 1 for s in SLOTS) for _ in range(17)]
    rows.append((True, True, True))
    tower = TowerState(tuple(rows))
    blocks = sorted(tower.blocks())
    key = draw(st.sampled_from(blocks))
    changed_layer = draw(st.integers(1, 18))
    changed_slot = draw(st.sampled_from(SLOTS))
    return tower, key, (changed_layer, changed_slot)


@settings(max_examples=300, deadline=None)
@given(towers_and_changes(), st.sampled_from([TIGHT, LOOSE]))
def test_a_finding_holds_exactly_while_its_layer_and_the_two_beside_it_are_unchanged(case, found):
    tower, key, (layer, slot) = case
    try:
        changed = tower.without(layer, slot) if tower.has_block(layer, slot) \
            else tower.with_block(layer, slot)
    except TowerError:
        assume(False)            # a layer left empty is no tower
    memory = ProbeMemory()
    memory.remember(tower, probe(key, found))
    recalled = memory.recall(changed, LoosenessBelief.prior(changed))
    touches = abs(layer - key[0]) <= 1 or not changed.has_block(*key)
    assert (recalled == []) == touches
    assert load_context(changed, key) != load_context(tower, key) or not touches
