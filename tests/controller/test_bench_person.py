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


@pytest.mark.parametrize("after", [
    _tower((5, 1, False)),                                   # taken, never placed
    _tower((5, 1, False), (19, 0, True), (6, 0, False)),     # a second block went too
    _tower((18, 1, False), (19, 0, True)),                   # from the top (complete) layer
    _tower(),                                                # nothing moved
])
def test_anything_else_is_not(after):
    assert _illegal(_tower(), after)


def test_skills_out_of_range_are_refused(capsys):
    from controller.cli import main
    assert main(["bench", "--suite", "person", "--skills", "0.5,1.2"]) != 0
    assert "within 0..1" in capsys.readouterr().err
    assert main(["bench", "--suite", "person", "--skills", "high"]) != 0
    assert "numbers 0..1" in capsys.readouterr().err

