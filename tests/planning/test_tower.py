import pytest
from hypothesis import given, strategies as st

from planning.game.tower import (SLOTS, STANDARD_SET_SIZES, TowerError, TowerState, format_stories, layer_axis,
                           parse_stories)


def tower(*rows):
    return TowerState(tuple(tuple(bool(v) for v in r) for r in rows))


@pytest.mark.parametrize("set_size, layers", sorted(STANDARD_SET_SIZES.items()))
def test_standard_sets_start_as_complete_layers(set_size, layers):
    t = TowerState.fresh(set_size)
    assert t.top_layer == layers
    assert t.highest_complete_layer == layers
    assert t.block_count == set_size
    assert t.stories() == str(layers)
    assert t.blocks_moved == 0


def test_other_editions_are_parameters_not_constants():
    assert TowerState.fresh(27).top_layer == 9  # the 27-block "pass" tower
    for bad in (0, -3, 53):
        with pytest.raises(TowerError, match="multiple of 3"):
            TowerState.fresh(bad)


def test_odd_layers_along_x_even_along_y():
    assert [layer_axis(n) for n in (1, 2, 3, 18, 19)] == ["x", "y", "x", "y", "x"]
    with pytest.raises(ValueError):
        layer_axis(0)


def test_stories_as_rules_md_writes_them():
    fresh = TowerState.fresh()
    assert fresh.stories() == "18"
    one = fresh.moved((7, 1), (19, 0))
    assert one.stories() == "18 1/3"
    two = one.moved((7, 0), (19, 1))
    assert two.stories() == "18 2/3"
    assert two.moved((5, 1), (19, 2)).stories() == "19"
    assert format_stories(40, 2) == "40 2/3"


def test_ideal_tower_reaches_52_layers_with_54_blocks():
    rows = [(0, 1, 0)] * 51 + [(1, 1, 1)]
    t = tower(*rows)
    assert t.block_count == 54 and t.stories() == "52"


def test_layer_numbers_never_change_when_a_low_layer_empties_partly():
    t = TowerState.fresh().moved((1, 0), (19, 0)).moved((1, 2), (19, 1))
    assert t.row(1) == (False, True, False)
    assert t.top_layer == 19 and t.highest_complete_layer == 18


def test_blocks_moved_counts_moves_not_starting_blocks():
    t = TowerState.fresh()
    for n, (src, dst) in enumerate([((3, 1), (19, 0)), ((4, 1), (19, 1)), ((5, 1), (19, 2))], 1):
        t = t.moved(src, dst)
        assert t.blocks_moved == n
    assert t.block_count == 54


def test_json_round_trip():
    t = TowerState.fresh(48).moved((2, 1), (17, 2))
    assert TowerState.from_json(t.to_json()) == t
    assert t.to_json()["layers"][16] == [0, 0, 1]


@pytest.mark.parametrize("obj, where", [
    ({"layers": [[1, 1, 1], [1, 2, 1]]}, "layer 2"),
    ({"layers": [[1, 1, 1], [1, 1]]}, "layer 2"),
    ({"layers": [[1, 1, 1], "111"]}, "layer 2"),
    ({"layers": [[1, 1, 1], [True, 1, 1]]}, "layer 2"),
    ({"layers": [[1, 1, 1], [0, 0, 0], [1, 0, 0]]}, "layer 2"),
    ({"layers": [[1, 0, 1], [0, 1, 0]]}, "no complete layer"),
    ({"layers": []}, "no layers"),
    ({"layers": [[0, 0, 0]]}, "layer 1 is empty: a tower needs at least one layer of three"),
    ({"layers": [[0, 0, 0], [0, 0, 0]]}, "all 2 layers are empty"),
    ({"rows": []}, "layers"),
    ([], "layers"),
])
def test_a_state_that_is_not_a_tower_names_the_layer_and_problem(obj, where):
    with pytest.raises(TowerError, match=where):
        TowerState.from_json(obj)


def test_trailing_empty_layers_are_no_layers():
    t = TowerState.from_json({"layers": [[1, 1, 1], [0, 0, 0]]})
    assert t.top_layer == 1


def test_changes_refuse_impossible_moves():
    t = TowerState.fresh()
    with pytest.raises(TowerError, match="no block"):
        t.moved((3, 1), (19, 0)).without(3, 1)
    with pytest.raises(TowerError, match="already holds"):
        t.with_block(18, 1)
    with pytest.raises(TowerError, match="cannot hold"):
        t.with_block(20, 1)


@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 1), st.integers(0, 1)), max_size=30))
def test_any_parsed_tower_satisfies_its_invariants(rows):
    try:
        t = TowerState.from_json({"layers": [list(r) for r in rows]})
    except TowerError:
        trimmed = list(rows)
        while trimmed and not any(trimmed[-1]):
            trimmed.pop()
        assert (not any(all(r) for r in trimmed)) or any(not any(r) for r in trimmed)
        return
    assert all(any(r) for r in t.layers)
    assert all(t.row(t.highest_complete_layer))
    assert t.block_count == sum(map(sum, rows))


@given(st.integers(0, 60), st.integers(0, 2))
def test_heights_read_back_as_they_are_written(layers, extra):
    assert parse_stories(format_stories(layers, extra)) == (layers, extra)


@pytest.mark.parametrize("text", ["", "18 3/3", "a", "18 1/2", "18 1/3 x", "-1"])
def test_a_height_that_is_not_one_is_refused(text):
    with pytest.raises(ValueError, match="not a height"):
        parse_stories(text)


def test_the_block_across_an_end_is_the_side_block_above_it_at_that_end():
    tower = TowerState.fresh().moved((16, 0), (19, 1))      # layer 19 holds its middle only
    for slot in SLOTS:
        assert tower.across_end(5, slot, +1) == (6, 2) and tower.across_end(5, slot, -1) == (6, 0)
        assert tower.across_end(18, slot, 1) is None       # only the middle of layer 19 is there
        assert tower.across_end(19, slot, 1) is None       # nothing above the top
    assert tower.across_end(15, 1, -1) is None             # layer 16's slot 0 was taken
