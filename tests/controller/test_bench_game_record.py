"""A solo game's record for the game benchmark (`game_record`): each turn's figures as the turn
reported them, read from a game the procedure played with scripted hands."""

from controller.bench.figures import summarise
from controller.bench.game import GameRecord, game_record
from controller.solo import play_game
from controller.turn.hands import GaveUp
from planning.game.tower import TowerState
from tests.controller.scripted_hands import Script
from tests.controller.test_turn_procedure import player


def test_each_turn_is_recorded_with_what_it_reported():
    pulls = []
    # the first pull drags, its block will not go back, and it is taken after all
    script = Script(pull=lambda source: (pulls.append(source), GaveUp.DRAG if len(pulls) == 1
                                         else None)[1], short=lambda source: 0.0305)
    p, _ = player(script=script)
    result = play_game(p, 2)
    game = game_record(result, "ours", 1, "fast", TowerState.fresh().stories(), False, 1.0)
    first, second = game.turns
    assert first.number == 1 and first.let_go == 1 and first.taken_after_all
    assert first.legal and not first.fell and first.source == list(pulls[0])
    assert second.let_go == 0 and not second.taken_after_all and second.legal
    assert first.probes == len(result.turns[0].probes) and first.time_s > 0
    assert game.blocks_moved == 2 and game.ended_by == "move cap"
    assert game.ending == "move cap"


def test_a_game_ending_is_counted_by_its_kind_without_its_detail():
    endings = ["fell: pull", "fell: pull (blocks rode along on the drawn one)",
               "no block would come out",
               "turn 4: the tower changed while a block was put back: slots layer 9 slot 2",
               "other slots changed during the turn: layer 21 slot 2 (seen empty)"]
    games = [GameRecord("ours", seed, "fast", "18", stories="19", ended_by=how)
             for seed, how in enumerate(endings)]
    assert [g.ending for g in games] == ["fell", "fell", "no block would come out",
                                         "stopped by a turn's error", "stopped by a turn's error"]
    assert summarise(games)["endings"] == {"fell": 2, "stopped by a turn's error": 2,
                                           "no block would come out": 1}
