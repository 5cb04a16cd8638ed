"""A solo game's record for the game benchmark (`game_record`): each turn's figures as the turn
reported them, read from a game the procedure played with scripted hands."""

from dataclasses import asdict

from controller.bench.figures import summarise
from controller.bench.game import ENDINGS, GameRecord, TurnRecord, game_record
from controller.solo import SoloResult, play_game
from controller.turn.hands import GaveUp
from controller.turn.report import Phase, Recovery, TurnReport
from controller.wording import MOVE_CAP
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
    # what the turn gave up on, in its words, as it told them
    assert any("let go" in note for note in first.notes) and first.notes == result.turns[0].notes
    assert game.blocks_moved == 2 and game.ended_by == "move cap"
    assert game.ending == "move cap"


def test_a_game_ending_is_counted_by_its_kind_without_its_detail():
    # the fast and full suites' words (SoloResult.ending), then the person suite's (a turn's cause)
    endings = [("fell: pull", True), ("fell: pull (blocks rode along on the drawn one)", True),
               ("no block would come out", False), ("move cap", False),
               ("turn 4: the tower changed while a block was put back: slots layer 9 slot 2", False),
               ("other slots changed during the turn: layer 21 slot 2 (seen empty)", False),
               ("the tower fell", True), ("not a legal move", False),
               ("the person's turn never ended", False)]
    games = [GameRecord("ours", seed, "fast", "18", [TurnRecord(1, fell=fell)], "19", how)
             for seed, (how, fell) in enumerate(endings)]
    assert [g.ending for g in games] == [
        "fell", "fell", "no block would come out", "move cap", "stopped by a turn's error",
        "stopped by a turn's error", "fell", "not a legal move", "stopped by a turn's error"]
    endings = summarise(games)["endings"]
    assert endings == {"fell": 3, "no block would come out": 1, "not a legal move": 1,
                       "stopped by a turn's error": 3, "move cap": 1}
    assert list(endings) == [kind for kind in ENDINGS if kind in endings]


def test_an_illegal_turn_is_counted_and_does_not_end_the_game():
    why = "the placed block is not seen at layer 19 slot 1"
    result = SoloResult(turns=[TurnReport(1, legal=True, stories="18 1/3"),
                               TurnReport(2, error=why, phase=Phase.SETTLE),
                               TurnReport(3, legal=True, stories="18 2/3")], stories="18 2/3")
    assert result.ending() == "played every turn asked for"
    game = game_record(result, "ours", 1, "fast", "18", False, 1.0)
    assert game.ended_by == MOVE_CAP and game.turns[1].cause is None and game.blocks_moved == 2
    # why it was illegal is kept, in its words
    assert game.turns[1].error == why and game.turns[0].error is None
    assert game.turns[1].phase == "settle"
    assert GameRecord.from_dict(asdict(game)).turns[1].error == why


def test_forced_moves_are_counted_by_how_they_ended():
    def turn(number, **kw):
        report = TurnReport(number, **kw)
        report.recovered(Recovery.FORCED_MOVE, "no block would come out")
        report.forced = True
        return report
    result = SoloResult(turns=[TurnReport(1, legal=True), turn(2, legal=True), turn(3)],
                        stories="18 2/3")
    result.fell = True
    result.turns[-1].fell = True
    game = game_record(result, "ours", 1, "fast", "18", False, 1.0)
    figures = summarise([game])
    assert figures["forced_moves"] == {"fell": 1, "taken": 1}
    assert figures["recoveries"] == {str(Recovery.FORCED_MOVE): 2}
