"""The referee reads a person's move from two observations and names every violation it can see."""

from controller.match.referee import calls_of_one_move, judge_seen_move
from perception.observation import TowerObservation
from perception.tower_estimator import BlockObservation
from planning.game.geometry import TowerPose
from planning.game.rules import RuleOptions, Violation, ViolationCode

POSE = TowerPose(0.5, 0.0, 0.785, 0.01499)


def seen(slots: dict[tuple[int, int], int], protrusions=None, out_of_place=(), fell=False,
         cameras=None, ends=None, across=None):
    """An observation: `slots` maps (layer, slot) to the block read there; `protrusions` in mm;
    where not both cameras read a slot's marker, of its +1 end, on its slot's line: `cameras`,
    `ends`, `across` (the position across the slot's axis, mm)."""
    protrusions, cameras, ends, across = protrusions or {}, cameras or {}, ends or {}, across or {}

    def position(layer, slot):
        side = across.get((layer, slot), 0.0) / 1000
        return (0.0, side, 0.0) if layer % 2 else (side, 0.0, 0.0)

    blocks = [BlockObservation(block, layer, slot, ends.get((layer, slot), 1), position(layer, slot),
                               0.0, protrusions.get((layer, slot), 0.0) / 1000,
                               cameras.get((layer, slot), ("left", "right")))
              for (layer, slot), block in slots.items()]
    return TowerObservation(0.0, POSE, 0.0, 0.1, blocks, {k: True for k in slots},
                            out_of_place=list(out_of_place), fell=fell)


FRESH = {(layer, slot): 3 * (layer - 1) + slot for layer in range(1, 19) for slot in range(3)}


def moved(slots, source, target):
    out = dict(slots)
    block = out.pop(source)
    if target is not None:
        out[target] = block
    return out


def codes(move):
    return [v.code for v in move.violations]


def test_a_legal_move_is_read_and_breaks_no_rule():
    move = judge_seen_move(seen(FRESH), seen(moved(FRESH, (5, 1), (19, 1))))
    assert move.source == (5, 1) and move.target == (19, 1) and move.block == FRESH[5, 1]
    assert move.complete and move.violations == [] and not move.fell


def test_a_block_from_a_forbidden_layer():
    move = judge_seen_move(seen(FRESH), seen(moved(FRESH, (18, 0), (19, 1))))
    assert codes(move) == [ViolationCode.FORBIDDEN_LAYER]


def test_a_new_layer_before_the_top_is_complete():
    started = moved(FRESH, (5, 1), (19, 1))
    move = judge_seen_move(seen(started), seen(moved(started, (6, 0), (20, 1))), blocks_moved=1)
    assert codes(move) == [ViolationCode.NEW_LAYER_EARLY]


def test_a_block_laid_the_wrong_way_on_top():
    block = FRESH[5, 1]
    move = judge_seen_move(seen(FRESH), seen(moved(FRESH, (5, 1), None), out_of_place=[block]))
    assert move.laid_across and move.complete
    assert codes(move) == [ViolationCode.WRONG_ORIENTATION]


def test_a_block_out_too_far_to_be_read_in_its_slot_is_not_one_laid_across():
    """Its marker is read in no slot, as that of a block laid across the top is, but along its
    slot's line: a block still being drawn, not a move made."""
    block = FRESH[5, 1]
    after = seen(moved(FRESH, (5, 1), None), out_of_place=[block])
    after.far_out[(5, 1)] = (block, 0.06)
    move = judge_seen_move(seen(FRESH), after)
    assert not move.laid_across and not move.complete and move.violations == []


def test_a_tested_block_left_out_and_the_tolerance_of_the_rules():
    after = seen(moved(FRESH, (5, 1), (19, 1)), protrusions={(7, 2): 3.5, (8, 0): 0.6})
    move = judge_seen_move(seen(FRESH), after)
    assert codes(move) == [ViolationCode.TESTED_BLOCK_DISPLACED] and move.displaced_mm == {(7, 2): 3.5}
    lenient = judge_seen_move(seen(FRESH), after, RuleOptions(displaced_tolerance_mm=5.0))
    assert lenient.violations == []


def test_a_fall_and_a_move_not_yet_made():
    assert judge_seen_move(seen(FRESH), seen(FRESH, fell=True)).fell
    waiting = judge_seen_move(seen(FRESH), seen(moved(FRESH, (5, 1), None)))
    assert waiting.source == (5, 1) and not waiting.complete and waiting.violations == []
    both = judge_seen_move(seen(FRESH), seen(moved(moved(FRESH, (5, 1), (19, 1)), (6, 0), None)))
    assert both.unclear and "2 slots emptied" in both.unclear
    dropped = moved(moved(moved(FRESH, (5, 1), (19, 1)), (18, 0), None), (18, 1), None)
    assert judge_seen_move(seen(FRESH), seen(dropped)).fell     # more slots emptied than a move empties


def test_a_shift_the_cameras_cannot_be_sure_of_is_not_called():
    # each protrusion is measured to 0.54 mm (95th percentile): a 1.5 mm shift at a 1 mm
    # tolerance may be the cameras', a 2 mm one is the player's
    after = seen(moved(FRESH, (5, 1), (19, 1)), protrusions={(7, 2): 1.5, (8, 0): 2.0})
    move = judge_seen_move(seen(FRESH), after)
    assert move.displaced_mm == {(8, 0): 2.0} and codes(move) == [ViolationCode.TESTED_BLOCK_DISPLACED]


def test_a_shift_read_by_other_cameras_in_the_two_looks_is_noted_not_called():
    # one camera alone misreads a block lying beside its slot's line by millimetres; the same
    # cameras both times cancel that, a change of cameras does not
    before = seen(FRESH, cameras={(7, 2): ("right",), (9, 1): ("right",)})
    after = seen(moved(FRESH, (5, 1), (19, 1)), protrusions={(7, 2): 5.0, (9, 1): 4.0},
                 cameras={(9, 1): ("right",)})
    move = judge_seen_move(before, after)
    assert move.unsure_mm == {(7, 2): 5.0} and move.displaced_mm == {(9, 1): 4.0}
    assert codes(move) == [ViolationCode.TESTED_BLOCK_DISPLACED]
    assert move.to_json()["unsure_mm"] == {"7.2": 5.0}


def test_a_one_camera_reading_on_another_plane_or_of_the_other_end_is_not_compared():
    # perception places a one-camera marker on a plane moved across to where both cameras last
    # saw it; a look between the two may have moved that plane, and the reading with it
    one = ("right",)
    before = seen(FRESH, cameras={(7, 2): one, (9, 1): one}, across={(7, 2): 1.0, (9, 1): 1.0})
    after = seen(moved(FRESH, (5, 1), (19, 1)), protrusions={(7, 2): 5.0, (9, 1): 4.0, (11, 0): 3.0},
                 cameras={(7, 2): one, (9, 1): one}, across={(7, 2): 5.0, (9, 1): 1.2},
                 ends={(11, 0): -1})
    move = judge_seen_move(before, after)
    assert move.unsure_mm == {(7, 2): 5.0, (11, 0): 3.0} and move.displaced_mm == {(9, 1): 4.0}


def test_top_blocks_are_not_tested_blocks():
    # the top layer and the highest complete one are no source: a block set down on them may
    # shove them, and a player may align them
    started = moved(FRESH, (5, 1), (19, 1))
    after = seen(moved(started, (6, 0), (19, 0)), protrusions={(18, 2): 3.0, (19, 1): 3.0, (17, 0): 3.0})
    move = judge_seen_move(seen(started), after, blocks_moved=1)
    assert move.displaced_mm == {(17, 0): 3.0, (18, 2): 3.0, (19, 1): 3.0}
    assert [v.message for v in move.violations] == [
        "tested block at layer 17 slot 0 left 3.0 mm out of position (tolerance 1 mm)"]
    strict = judge_seen_move(seen(started), after, RuleOptions(no_testing=True), blocks_moved=1)
    assert [v.message.split(" was")[0] for v in strict.violations
            if v.code is ViolationCode.MOVED_BLOCK_NOT_TAKEN] == ["block at layer 17 slot 0"]


def test_under_no_testing_a_block_moved_and_not_taken_is_called():
    after = seen(moved(FRESH, (5, 1), (19, 1)), protrusions={(7, 2): 3.0})
    move = judge_seen_move(seen(FRESH), after, RuleOptions(no_testing=True))
    assert codes(move) == [ViolationCode.TESTED_BLOCK_DISPLACED, ViolationCode.MOVED_BLOCK_NOT_TAKEN]


def test_one_move_is_one_incident_and_a_round_losing_call_always_counts():
    after = seen(moved(FRESH, (18, 0), (19, 1)), protrusions={(7, 2): 3.0, (9, 1): 4.0})
    move = judge_seen_move(seen(FRESH), after)
    calls = calls_of_one_move(move.violations)
    assert [(v.code, counts) for v, counts in calls] == [
        (ViolationCode.FORBIDDEN_LAYER, True), (ViolationCode.TESTED_BLOCK_DISPLACED, False),
        (ViolationCode.TESTED_BLOCK_DISPLACED, False)]
    losing = Violation(ViolationCode.TURN_TIME_EXCEEDED, "over the limit")
    calls = calls_of_one_move(move.violations[:1] + [losing])
    assert [(v.code, counts) for v, counts in calls] == [
        (ViolationCode.TURN_TIME_EXCEEDED, True), (ViolationCode.FORBIDDEN_LAYER, False)]
