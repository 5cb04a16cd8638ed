import pytest

from planning.game.rules import (Fall, Phase, RoundReferee, RoundStatus, RuleInputError, RuleOptions,
                            Violation, ViolationCode)

AB = ["A", "B"]


def referee(players=AB, **options):
    return RoundReferee(players, RuleOptions(**options))


def test_window_closes_ten_seconds_after_release():
    r = referee()
    r.touch("A", 0.0)
    r.place("A", 5.0)
    assert r.phase is Phase.WINDOW and r.window_closes_at == 15.0
    r.advance_to(14.9)
    assert r.completed_turns == {"A": 0, "B": 0}
    r.advance_to(15.0)
    assert r.completed_turns == {"A": 1, "B": 0}
    assert r.current_player == "B" and r.phase is Phase.OPEN


def test_next_players_touch_closes_the_window_early():
    r = referee()
    r.place("A", 5.0)
    r.touch("B", 7.0)
    assert r.completed_turns["A"] == 1 and r.current_player == "B"


def test_fall_in_own_window_loses_for_the_placer():
    r = referee()
    r.place("A", 5.0)
    r.fall(Fall.TOWER, 9.0)
    res = r.result
    assert (res.status, res.loser, res.winner) == (RoundStatus.FELL, "A", None)


def test_fall_after_the_next_player_touched_belongs_to_the_next_player():
    r = referee()
    r.place("A", 5.0)
    r.touch("B", 7.0)
    r.fall(Fall.TOWER, 8.0)
    res = r.result
    assert (res.status, res.loser, res.winner) == (RoundStatus.FELL, "B", "A")


def test_fall_after_the_window_closed_untouched_belongs_to_the_open_turn():
    r = referee()
    r.place("A", 0.0)
    r.fall(Fall.TOWER, 12.0)
    assert (r.result.loser, r.result.winner) == ("B", "A")


def test_first_turn_toppling_the_starting_tower_has_no_winner():
    r = referee()
    r.touch("A", 1.0)
    r.fall(Fall.TOWER, 2.0)
    assert (r.result.loser, r.result.winner) == ("A", None)


def test_winner_is_the_last_player_who_completed_a_turn():
    r = referee(["A", "B", "C"])
    r.place("A", 0.0)
    r.place("B", 11.0)   # B's touch-and-place closes A's window first
    r.place("C", 30.0)   # B's window closed by time at 21
    r.fall(Fall.TOWER, 35.0)
    res = r.result
    assert (res.loser, res.winner) == ("C", "B")
    assert res.completed_turns == {"A": 1, "B": 1, "C": 0}


def test_only_the_moved_block_falling_changes_nothing():
    r = referee()
    r.touch("A", 1.0)
    r.fall(Fall.MOVED_ONLY, 2.0)
    r.place("A", 3.0)
    assert r.result.status is RoundStatus.IN_PLAY and r.phase is Phase.WINDOW


def test_outside_event_voids_the_round():
    r = referee()
    r.place("A", 0.0)
    r.fall(Fall.OUTSIDE, 20.0)
    res = r.result
    assert (res.status, res.loser, res.winner) == (RoundStatus.VOID, None, None)


def test_minor_fall_is_a_fall_in_strict_play():
    r = referee()
    r.fall(Fall.MINOR, 1.0, blocks=2)
    assert r.result.status is RoundStatus.FELL and r.result.loser == "A"


def test_continue_after_minor_fall_goes_on_when_few_blocks_dropped():
    r = referee(continue_after_minor_fall=True)
    r.fall(Fall.MINOR, 1.0, blocks=2)
    assert r.result.status is RoundStatus.IN_PLAY
    r.fall(Fall.MINOR, 2.0, blocks=10)
    assert r.result.status is RoundStatus.FELL


def test_interference_by_a_non_active_player_loses_for_that_player():
    r = referee(["A", "B", "C"])
    r.place("A", 0.0)
    r.touch("B", 11.0)
    r.fall(Fall.TOWER, 12.0, caused_by="C")
    assert (r.result.loser, r.result.winner) == ("C", "A")


def test_timed_turns_count_from_the_first_touch():
    r = referee(turn_limit_s=30.0)
    r.advance_to(100.0)  # choosing without touching is not timed
    assert r.result.status is RoundStatus.IN_PLAY
    r.touch("A", 100.0)
    r.place("A", 130.0)  # exactly at the limit: in time
    r.touch("B", 145.0)
    r.advance_to(175.5)
    res = r.result
    assert (res.status, res.loser, res.winner) == (RoundStatus.FORFEIT, "B", "A")


def test_reverse_direction_after_each_completed_top_layer():
    r = referee(["A", "B", "C"], reverse_direction=True)
    order = []
    t = 0.0
    for _ in range(6):
        order.append(r.current_player)
        r.place(r.current_player, t)
        t += 20.0
        r.advance_to(t)
    # A B C complete layer 19 -> reverse: B A C complete layer 20 -> reverse again
    assert order == ["A", "B", "C", "B", "A", "C"]
    assert r.current_player == "A"


def test_out_of_turn_touch_is_a_warning_not_a_turn():
    r = referee(["A", "B", "C"])
    r.place("A", 0.0)
    r.touch("C", 3.0)   # C is not next: the window stays open
    assert r.phase is Phase.WINDOW and r.current_player == "A"
    assert r.notes and r.notes[0].violation.code is ViolationCode.OUT_OF_TURN
    r.place("C", 4.0)   # nor may C place
    assert r.result.status is RoundStatus.IN_PLAY and r.completed_turns["C"] == 0


def test_strict_play_warns_first_and_rules_a_loss_on_repeat():
    r = referee()
    wrong = Violation(ViolationCode.WRONG_ORIENTATION, "block lies along y on an x layer")
    r.report_violation("A", wrong, 1.0)
    assert r.result.status is RoundStatus.IN_PLAY and len(r.notes) == 1
    r.report_violation("A", wrong, 2.0)
    assert (r.result.status, r.result.loser) == (RoundStatus.FORFEIT, "A")


def test_solo_player_has_no_winner():
    r = referee(["solo"])
    r.place("solo", 0.0)
    r.advance_to(10.0)
    r.place("solo", 20.0)
    r.fall(Fall.TOWER, 22.0)
    res = r.result
    assert (res.loser, res.winner, res.completed_turns) == ("solo", None, {"solo": 1})


def test_events_after_the_round_ended_change_nothing():
    r = referee()
    r.fall(Fall.TOWER, 1.0)
    r.place("B", 2.0)
    assert r.result.loser == "A" and r.result.completed_turns == {"A": 0, "B": 0}


@pytest.mark.parametrize("bad", [
    lambda r: r.touch("Z", 1.0),
    lambda r: (r.touch("A", 5.0), r.touch("A", 4.0)),
    lambda r: r.advance_to(float("nan")),
])
def test_events_a_referee_cannot_follow_are_refused(bad):
    with pytest.raises(RuleInputError):
        bad(referee())


def test_players_must_be_distinct():
    with pytest.raises(RuleInputError):
        RoundReferee(["A", "A"])
