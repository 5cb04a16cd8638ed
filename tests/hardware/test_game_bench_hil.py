"""The game benchmark's full mode brings up the product's whole pipeline (`sim serve` in its own
process, the serial pty, the camera streams, the homed arm) and records the game it plays. Here it
plays no turn: the turns of that pipeline are played, and their record checked, in
tests/hardware/test_robot_turns_hil.py (one real-time game serves both, to keep the suite short)."""

import pytest

from controller.bench.game import measure, play_full_game
from hardware.cells import DEFAULT_CELL
from planning.game.tower import TowerState

pytestmark = pytest.mark.hil


def test_the_full_mode_brings_the_pipeline_up_and_records_the_game():
    game = play_full_game(str(DEFAULT_CELL), 2, "random", 0)
    assert game.mode == "full" and game.policy == "random" and game.seed == 2
    assert game.turns == [] and game.ended_by == "move cap"
    assert game.start_stories == game.stories == TowerState.fresh().stories()
    assert game.wall_s > 0


def test_the_full_mode_will_not_play_the_oracle():
    with pytest.raises(ValueError, match="only in the fast mode"):
        measure(str(DEFAULT_CELL), [1], 1, full=True, policies=("ours", "oracle"))
