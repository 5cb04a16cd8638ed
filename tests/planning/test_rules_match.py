import pytest

from planning.game.rules import Match, MatchConfig, RoundResult, RoundStatus, Scoring, team_relay_sequence


def fell(loser, winner, **turns):
    return RoundResult(RoundStatus.FELL, loser, winner, turns)


VOID = RoundResult(RoundStatus.VOID, None, None, {})


def test_round_wins_first_to_three_with_rotating_starter():
    m = Match(MatchConfig(("A", "B", "C"), Scoring.ROUND_WINS, target_points=3))
    starters = []
    for loser, winner in [("B", "A"), ("C", "B"), ("A", "C"), ("B", "A"), ("C", "A")]:
        starters.append(m.starting_player())
        m.record(fell(loser, winner))
    assert starters == ["A", "B", "C", "A", "B"]
    assert m.is_over and m.winner == "A"
    assert m.scores == {"A": 3, "B": 1, "C": 1}
    with pytest.raises(RuntimeError):
        m.record(fell("B", "A"))


def test_turn_sequence_passes_to_the_left_from_the_starter():
    m = Match(MatchConfig(("A", "B", "C")))
    m.record(fell("A", None))
    assert m.turn_sequence() == ["B", "C", "A"]


def test_void_round_is_replayed_with_the_same_starter():
    m = Match(MatchConfig(("A", "B")))
    m.record(VOID)
    assert m.starting_player() == "A"
    m.record(fell("A", "B"))
    assert m.starting_player() == "B"


def test_round_without_winner_scores_nothing_in_round_wins():
    m = Match(MatchConfig(("A", "B"), target_points=1))
    m.record(fell("A", None))
    assert not m.is_over and m.scores == {"A": 0, "B": 0}


def test_penalty_total_lowest_wins():
    m = Match(MatchConfig(("A", "B", "C"), Scoring.PENALTY_TOTAL, rounds=3))
    for loser in ("A", "B", "A"):
        m.record(fell(loser, None))
    assert m.is_over and m.winner == "C"
    assert m.standings()[0] == ("C", 0)


def test_penalty_tie_goes_to_a_playoff_among_the_tied():
    m = Match(MatchConfig(("A", "B", "C"), Scoring.PENALTY_TOTAL, rounds=2))
    m.record(fell("A", None))
    m.record(fell("A", None))
    assert not m.is_over and m.in_playoff
    assert m.participants() == ["B", "C"]
    m.record(fell("C", "B"))
    assert m.winner == "B"


def test_survival_counts_completed_turns_and_breaks_ties():
    m = Match(MatchConfig(("A", "B"), Scoring.SURVIVAL, rounds=2))
    m.record(fell("B", "A", A=5, B=4))
    m.record(fell("A", "B", A=3, B=4))
    assert m.scores == {"A": 8, "B": 8} and m.in_playoff and not m.is_over
    m.record(fell("A", "B", A=1, B=2))
    assert m.winner == "B"


def test_team_scoring_and_relay_order():
    teams = (("A1", "A2"), ("B1", "B2"))
    m = Match(MatchConfig(("A1", "A2", "B1", "B2"), Scoring.TEAM, target_points=2, teams=teams))
    assert m.turn_sequence() == ["A1", "B1", "A2", "B2"]
    m.record(fell("B2", "A2"))
    assert m.turn_sequence()[0] == "B1"  # the starting team rotates
    m.record(fell("A1", "B1"))
    m.record(fell("B1", "A1"))
    assert m.winner == "A1+A2" and m.scores == {"A1+A2": 2, "B1+B2": 1}


def test_team_relay_with_uneven_teams_alternates_teams_and_teammates():
    seq = team_relay_sequence([["A1", "A2"], ["B1", "B2", "B3"]])
    assert seq == ["A1", "B1", "A2", "B2", "A1", "B3", "A2", "B1", "A1", "B2", "A2", "B3"]


def test_new_round_uses_the_match_order():
    m = Match(MatchConfig(("A", "B")))
    m.record(fell("A", "B"))
    r = m.new_round()
    assert r.current_player == "B"


@pytest.mark.parametrize("kwargs", [
    dict(players=("A", "A")),
    dict(players=("A", "B"), scoring=Scoring.TEAM, teams=(("A",),)),
    dict(players=("A", "B"), teams=(("A",), ("B",))),
    dict(players=("A", "B"), rounds=0),
])
def test_bad_match_configs(kwargs):
    with pytest.raises(ValueError):
        MatchConfig(**kwargs)


def test_in_play_round_cannot_be_scored():
    with pytest.raises(ValueError):
        Match(MatchConfig(("A", "B"))).record(RoundResult(RoundStatus.IN_PLAY, None, None, {}))
