"""The person benchmark's judgement of a turn (pure) and its command-line options."""

import pytest

from controller.bench.person import _illegal
from planning.game.tower import TowerState


def _tower(*changes) -> TowerState:
    rows = [[True] * 3 for _ in range(18)]
    for layer, slot, present in changes:
        while len(rows) < layer:
            rows.append([False] * 3)
        rows[layer - 1][slot] = present
    return TowerState(tuple(tuple(r) for r in rows))


def test_one_block_from_below_to_the_top_is_legal():
    before = _tower()
    assert _illegal(before, _tower((5, 1, False), (19, 0, True))) is None


@pytest.mark.parametrize("after,reason", [
    (_tower((5, 1, False)), "slots emptied [layer 5 slot 1], filled []"),            # never placed
    (_tower((5, 1, False), (19, 0, True), (6, 0, False)),
     "slots emptied [layer 5 slot 1, layer 6 slot 0], filled [layer 19 slot 0]"),    # a second went too
    (_tower((18, 1, False), (19, 0, True)), "the highest complete layer"),            # from the top
    (_tower(), "slots emptied [], filled []"),                                        # nothing moved
])
def test_anything_else_is_not_and_says_why(after, reason):
    assert reason in _illegal(_tower(), after)


def test_skills_out_of_range_are_refused(capsys):
    from controller.cli import main
    assert main(["bench", "--suite", "person", "--skills", "0.5,1.2"]) != 0
    assert "within 0..1" in capsys.readouterr().err
    assert main(["bench", "--suite", "person", "--skills", "high"]) != 0
    assert "numbers 0..1" in capsys.readouterr().err

