"""What the truth says each benchmark turn did (controller/bench/witness.py): how far the blocks not
taken moved, the true load on the block taken; and the game record and figures that carry them."""

import json

from controller.bench.figures import summarise
from controller.bench.game import game_record
from controller.bench.witness import Witness, Witnessed, turn_figures
from controller.cell_http import CellUnreachable
from controller.solo import play_game
from planning.game.tower import TowerState
from tests.controller.test_turn_procedure import player


def _document(positions: dict, slots: dict, loads: dict | None = None) -> dict:
    document = {"blocks": {b: {"position": list(p), "slot": list(slots[b]) if slots.get(b) else None}
                           for b, p in positions.items()}}
    if loads is not None:
        document["loads"] = loads
    return document


BEFORE = _document({0: (0.0, 0.0, 0.0075), 1: (0.025, 0.0, 0.0075), 2: (0.0, 0.0, 0.0225)},
                   {0: (1, 1), 1: (1, 2), 2: (2, 1)}, {"1,1": 0.4, "1,2": 1.5, "2,1": 0.0})


def test_the_block_taken_is_not_a_disturbance_and_its_load_is_the_one_before_the_turn():
    # block 1 taken from 1.2 and carried to the top; block 2 moved 3 mm, block 0 4 mm
    after = _document({0: (0.004, 0.0, 0.0075), 1: (0.0, 0.0, 0.2), 2: (0.0, 0.003, 0.0225)},
                      {0: (1, 1), 1: (3, 0), 2: (2, 1)}, {"1,1": 9.9})
    seen = turn_figures(BEFORE, after, (1, 2))
    assert seen == Witnessed(disturbed_mm=4.0, taken_load_n=1.5)


def test_a_turn_that_took_nothing_counts_every_block_and_has_no_load():
    after = _document({0: (0.0, 0.0, 0.0075), 1: (0.0, 0.0, 0.2), 2: (0.0, 0.0, 0.0225)},
                      {0: (1, 1), 2: (2, 1)})
    assert turn_figures(BEFORE, after, None) == Witnessed(disturbed_mm=194.12, taken_load_n=None)


def test_without_loads_in_the_truth_the_load_is_not_made_up():
    before = {"blocks": BEFORE["blocks"]}
    assert turn_figures(before, before, (1, 2)) == Witnessed(disturbed_mm=0.0, taken_load_n=None)


def test_the_witness_reads_the_truth_before_the_game_and_after_each_turn():
    documents = iter([BEFORE, BEFORE, _document({0: (0.0, 0.0, 0.0075), 2: (0.0, 0.002, 0.0225)},
                                                {0: (1, 1), 2: (2, 1)})])
    witness = Witness(lambda: next(documents))
    witness.turn_ended((1, 2))
    witness.turn_ended((1, 1))
    # the second turn is measured from the first turn's end: block 1 is gone, block 0 taken
    assert witness.turns == [Witnessed(0.0, 1.5), Witnessed(2.0, 0.4)]


def test_a_source_the_truth_saw_empty_is_no_disturbance_of_hundreds_of_millimetres():
    # the block in 1.2 was tilted out of its slot as the turn began, then carried away
    before = json.loads(json.dumps(_document(
        {0: (0.0, 0.0, 0.0075), 1: (0.025, 0.0, 0.0075)}, {0: (1, 1), 1: None})))
    after = json.loads(json.dumps(_document(
        {0: (0.0, 0.0, 0.0075), 1: (0.0, 0.0, 0.2)}, {0: (1, 1), 1: (3, 0)})))
    assert turn_figures(before, after, (1, 2)) == Witnessed(None, None)


def test_the_truth_as_the_cell_serves_it_over_http_is_read_alike():
    # JSON keys are strings: blocks are still compared with themselves
    served = json.loads(json.dumps(BEFORE))
    after = json.loads(json.dumps(_document(
        {0: (0.004, 0.0, 0.0075), 1: (0.0, 0.0, 0.2), 2: (0.0, 0.003, 0.0225)},
        {0: (1, 1), 1: (3, 0), 2: (2, 1)})))
    assert turn_figures(served, after, (1, 2)) == Witnessed(disturbed_mm=4.0, taken_load_n=1.5)


def test_a_truth_that_cannot_be_read_leaves_the_turn_unwitnessed_and_the_game_going():
    answers = iter([BEFORE, CellUnreachable("the cell is gone"), BEFORE, BEFORE])

    def read():
        answer = next(answers)
        if isinstance(answer, Exception):
            raise answer
        return answer
    witness = Witness(read)
    witness.turn_ended((1, 2))       # unread
    witness.turn_ended((1, 2))       # read, but nothing to compare it with
    witness.turn_ended(None)         # read, and compared with the one before
    assert witness.turns == [Witnessed(None, None), Witnessed(None, None), Witnessed(0.0, None)]


def test_the_game_record_and_its_figures_carry_what_was_witnessed():
    p, _ = player()
    result = play_game(p, 2)
    seen = [Witnessed(1.25, 0.5), Witnessed(3.75, None)]
    game = game_record(result, "ours", 1, "fast", TowerState.fresh().stories(), False, 1.0,
                       witnessed=seen)
    assert [(t.disturbed_mm, t.taken_load_n) for t in game.turns] == [(1.25, 0.5), (3.75, None)]
    figures = summarise([game])
    assert figures["disturbed_mm_median"] == 2.5 and figures["taken_load_n_median"] == 0.5
    unwitnessed = summarise([game_record(result, "ours", 1, "full", "18", False, 1.0)])
    assert unwitnessed["disturbed_mm_median"] is None and unwitnessed["taken_load_n_median"] is None
