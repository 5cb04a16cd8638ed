"""The game benchmark's full mode: a baseline policy plays through the product's whole pipeline
(`sim serve` in its own process, the serial pty, the camera streams, the controller's turn)."""

import pytest

from controller.bench.game import play_full_game
from hardware.cells import DEFAULT_CELL
from planning.strategy import LOWEST_LAYER

pytestmark = pytest.mark.hil


def test_middle_first_plays_a_legal_turn_through_the_real_pipeline():
    game = play_full_game(str(DEFAULT_CELL), 2, "middle-first", 1)
    assert game.mode == "full" and len(game.turns) == 1
    turn = game.turns[0]
    assert turn.legal and not turn.fell, game.ended_by
    # middle blocks first, from the highest legal layer down
    assert turn.probed[0] == [17, 1]
    assert all(slot == 1 and layer >= LOWEST_LAYER for layer, slot in turn.probed)
    assert turn.source in turn.probed
    assert game.blocks_moved == 1 and game.stories == "18 1/3"
    assert turn.time_s > 0
