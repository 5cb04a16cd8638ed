"""The game benchmark's full mode: a baseline policy plays through the product's whole pipeline
(`sim serve` in its own process, the serial pty, the camera streams, the controller's turn), and
the game's record says what happened."""

import pytest

from controller.bench.game import play_full_game, summarise
from hardware.cells import DEFAULT_CELL
from planning.strategy import LOWEST_LAYER

pytestmark = pytest.mark.hil


def test_the_random_policy_plays_a_turn_through_the_real_pipeline():
    game = play_full_game(str(DEFAULT_CELL), 2, "random", 1)
    assert game.mode == "full" and len(game.turns) == 1
    turn = game.turns[0]
    assert turn.probed == []                  # the random policy does not test
    assert turn.source is not None and turn.source[0] >= LOWEST_LAYER
    assert turn.time_s > 0
    if turn.legal and not turn.fell:
        assert game.blocks_moved == 1 and game.stories == "18 1/3" and game.ended_by == "move cap"
    else:
        assert game.ended_by != "move cap" and turn.cause
    figures = summarise([game])
    assert figures["probes_per_turn"] == 0.0 and figures["games"] == 1
