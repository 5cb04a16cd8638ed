import pytest
from hypothesis import given, settings, strategies as st

from planning.game.rules import (RuleOptions, ViolationCode, check_move, check_no_testing,
                            check_tested_blocks, legal_sources, placement_target,
                            takeable_sources)
from planning.game.tower import TowerState

FRESH = TowerState.fresh()
TOP_TWO = RuleOptions(forbid_top_two=True)


def layers_of(sources):
    return sorted({layer for layer, _ in sources})


def test_start_layers_1_to_17_are_sources():
    assert layers_of(legal_sources(FRESH)) == list(range(1, 18))
    assert len(legal_sources(FRESH)) == 17 * 3


def test_worked_example_block_from_layer_7_goes_on_top():
    after = FRESH.moved((7, 1), (19, 0))
    assert after.top_layer == 19 and after.highest_complete_layer == 18
    assert layers_of(legal_sources(after)) == list(range(1, 18))
    assert (7, 1) not in legal_sources(after)
    target = placement_target(after)
    assert (target.layer, target.slots, target.axis) == (19, (1, 2), "x")


def test_layer_18_becomes_a_source_once_layer_19_is_full():
    full = FRESH.moved((7, 1), (19, 0)).moved((8, 1), (19, 1)).moved((9, 1), (19, 2))
    assert layers_of(legal_sources(full)) == list(range(1, 19))
    target = placement_target(full)
    assert (target.layer, target.slots, target.axis) == (20, (0, 1, 2), "y")


def test_top_layer_is_never_a_source_and_incomplete_top_shields_the_layer_under_it():
    partial = FRESH.moved((7, 1), (19, 0))
    sources = legal_sources(partial)
    assert not [s for s in sources if s[0] in (18, 19)]


def test_forbid_top_two_never_takes_from_the_two_topmost_layers():
    assert layers_of(legal_sources(FRESH, TOP_TWO)) == list(range(1, 17))
    partial = FRESH.moved((7, 1), (19, 0))
    assert layers_of(legal_sources(partial, TOP_TWO)) == list(range(1, 18))
    full = partial.moved((8, 1), (19, 1)).moved((9, 1), (19, 2))
    assert layers_of(legal_sources(full, TOP_TWO)) == list(range(1, 18))


def test_a_legal_move_has_no_violations():
    assert check_move(FRESH, (7, 1), (19, 0), "x") == []


@pytest.mark.parametrize("source, target, axis, code", [
    ((18, 1), (19, 0), "x", ViolationCode.FORBIDDEN_LAYER),
    ((7, 1), (19, 0), "y", ViolationCode.WRONG_ORIENTATION),
    ((7, 1), (7, 1), "x", ViolationCode.PUT_BACK),
])
def test_violations_on_a_fresh_tower(source, target, axis, code):
    assert [v.code for v in check_move(FRESH, source, target, axis)] == [code]


def test_new_layer_before_the_top_is_complete():
    partial = FRESH.moved((7, 1), (19, 0))
    codes = [v.code for v in check_move(partial, (6, 1), (20, 1), "y")]
    assert codes == [ViolationCode.NEW_LAYER_EARLY]
    codes = [v.code for v in check_move(partial, (6, 1), (19, 0), "x")]
    assert codes == [ViolationCode.WRONG_SLOT]


def test_taking_from_an_empty_slot():
    partial = FRESH.moved((7, 1), (19, 0))
    assert [v.code for v in check_move(partial, (7, 1), (19, 1))] == [ViolationCode.EMPTY_SLOT]


def test_tested_block_must_be_restored_within_tolerance():
    moved = {(5, 0): 0.8, (6, 1): 3.0, (7, 1): 30.0}
    found = check_tested_blocks(moved, taken=(7, 1))
    assert [v.code for v in found] == [ViolationCode.TESTED_BLOCK_DISPLACED]
    assert "layer 6 slot 1" in found[0].message
    assert check_tested_blocks(moved, (7, 1), RuleOptions(displaced_tolerance_mm=5)) == []


def test_top_blocks_left_out_are_no_tested_blocks():
    # 18 full layers: 18 is the highest complete one, no source, so nobody tests its blocks
    moved = {(17, 0): 2.5, (18, 1): 2.5}
    found = check_tested_blocks(moved, None, tower=FRESH)
    assert [v.message.split(" left")[0] for v in found] == ["tested block at layer 17 slot 0"]
    started = FRESH.with_block(19, 1)       # a layer begun above: 18 is still the highest complete
    moved[(19, 1)] = 4.0
    assert len(check_tested_blocks(moved, None, tower=started)) == 1
    assert len(check_tested_blocks(moved, None)) == 3


def test_allow_leave_displaced_only_when_restoring_would_topple():
    moved = {(6, 1): 3.0}
    leave = RuleOptions(allow_leave_displaced=True)
    assert check_tested_blocks(moved, None, leave, restoring_would_topple=frozenset({(6, 1)})) == []
    assert len(check_tested_blocks(moved, None, leave)) == 1
    assert len(check_tested_blocks(moved, None, RuleOptions(),
                                   restoring_would_topple=frozenset({(6, 1)}))) == 1


def test_no_testing_variant():
    assert check_no_testing([(5, 0), (7, 1)], (7, 1)) == []
    found = check_no_testing([(5, 0), (7, 1), (5, 0)], (7, 1), RuleOptions(no_testing=True))
    assert [v.code for v in found] == [ViolationCode.MOVED_BLOCK_NOT_TAKEN]
    assert check_no_testing([(7, 1)], (7, 1), RuleOptions(no_testing=True)) == []


def test_unknown_variant_is_refused():
    with pytest.raises(ValueError, match="unknown variant"):
        RuleOptions.with_variants(["forbid_top_three"])
    assert RuleOptions.with_variants(["forbid_top_two"]).forbid_top_two


@settings(max_examples=60, deadline=None)
@given(st.sampled_from([48, 54, 60]), st.booleans(), st.data())
def test_random_legal_games_keep_every_invariant(set_size, top_two, data):
    """Play random legal moves: each is judged legal, sources stay below the highest complete layer,
    the top layer fills before a new one starts, and the height grows by a third every move."""
    options = RuleOptions(forbid_top_two=top_two)
    tower = TowerState.fresh(set_size)
    for move in range(data.draw(st.integers(0, 40))):
        sources = [s for s in legal_sources(tower, options)
                   if _still_a_tower(tower, s)]
        if not sources:
            break
        source = data.draw(st.sampled_from(sources))
        assert source[0] < tower.highest_complete_layer
        target_spec = placement_target(tower.without(*source))
        slot = data.draw(st.sampled_from(target_spec.slots))
        assert check_move(tower, source, (target_spec.layer, slot), target_spec.axis, options) == []
        before = _thirds(tower.stories())
        tower = tower.moved(source, (target_spec.layer, slot))
        assert _thirds(tower.stories()) == before + 1
        assert tower.block_count == set_size and tower.blocks_moved == move + 1
        # The layer under an incomplete top is always complete in legal play.
        if not tower.top_is_complete:
            assert all(tower.row(tower.top_layer - 1))


def _still_a_tower(tower, source):
    try:
        tower.without(*source)
        return True
    except ValueError:
        return False


def _thirds(stories):
    whole, _, frac = stories.partition(" ")
    return int(whole) * 3 + (int(frac[0]) if frac else 0)


def test_the_last_block_of_a_layer_is_legal_but_never_taken():
    layers = [(True, True, True)] * 18
    layers[4] = (False, False, True)           # layer 5 holds one side block
    tower = TowerState(layers=tuple(layers))
    assert (5, 2) in legal_sources(tower)
    assert (5, 2) not in takeable_sources(tower)
    assert set(takeable_sources(tower)) == set(legal_sources(tower)) - {(5, 2)}
