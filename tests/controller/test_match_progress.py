"""A match rebuilt from its log stands exactly where the rules say: the same round results as a
referee fed the same events, the same score, whose turn, the tower, a turn cut short."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from controller.match.progress import MatchProgress, MatchProgressError
from planning.game.rules import MatchConfig, RuleOptions, Scoring, judge_round
from planning.game.rules.judge import Event
from planning.game.rules.round import Fall
from planning.game.tower import TowerState

PLAYERS = ("robot", "person")
FRESH = TowerState.fresh().to_json()


def _log(*events, config=None) -> list[dict]:
    config = config or MatchConfig(PLAYERS, Scoring.ROUND_WINS, target_points=2)
    head = [{"seq": 0, "event": "match", "config": config.to_json()}]
    return head + [dict(e, seq=i + 1) for i, e in enumerate(events)]


def _turn(player, number, t0, tower):
    return [{"event": "turn_start", "player": player, "turn": number, "t": t0},
            {"event": "touch", "player": player, "t": t0 + 1},
            {"event": "place", "player": player, "t": t0 + 20, "source": [5, 1], "target": [19, 0]},
            {"event": "advance", "t": t0 + 30},
            {"event": "turn_end", "player": player, "turn": number, "tower": tower}]


def test_match_configurations_survive_the_log():
    configs = [MatchConfig(PLAYERS), MatchConfig(PLAYERS, Scoring.SURVIVAL, rounds=2),
               MatchConfig(("a", "b", "c", "d"), Scoring.TEAM, teams=(("a", "c"), ("b", "d"))),
               MatchConfig(PLAYERS, Scoring.PENALTY_TOTAL,
                           options=RuleOptions.with_variants(["reverse_direction"], window_s=5.0))]
    for config in configs:
        assert MatchConfig.from_json(config.to_json()) == config
    with pytest.raises(ValueError, match="unknown rule options"):
        MatchConfig.from_json({"players": ["a"], "options": {"gravity": 0}})
    with pytest.raises(ValueError, match="needs 'players'"):
        MatchConfig.from_json({})


def test_a_round_replayed_from_its_log():
    after = TowerState.fresh().moved((5, 1), (19, 0)).to_json()
    events = _log({"event": "round_start", "tower": FRESH}, *_turn("robot", 1, 0.0, after),
                  {"event": "turn_start", "player": "person", "turn": 2, "t": 31.0},
                  {"event": "touch", "player": "person", "t": 40.0})
    progress = MatchProgress.from_events(events)
    assert progress.in_round and progress.referee.current_player == "person"
    assert progress.referee.completed_turns == {"robot": 1, "person": 0}
    assert progress.tower == TowerState.from_json(after)
    assert progress.open_turn.player == "person" and progress.open_turn.number == 2
    # the person's turn is cut short by a fall: the robot wins the round
    progress.apply({"seq": len(events), "event": "fall", "what": "tower", "t": 45.0})
    assert not progress.in_round and progress.open_turn is None
    assert progress.match.scores == {"robot": 1, "person": 0} and not progress.over
    assert progress.match.starting_player() == "person"       # the start rotates
    progress.apply({"seq": 0, "event": "round_end",
                    "result": progress.match.results[-1].to_json()})


def test_a_log_the_rules_disagree_with_is_refused():
    with pytest.raises(MatchProgressError, match="in robot's place"):
        MatchProgress.from_events(_log({"event": "round_start", "tower": FRESH},
                                       {"event": "turn_start", "player": "person", "turn": 1, "t": 0}))
    with pytest.raises(MatchProgressError, match="before the last event"):
        MatchProgress.from_events(_log({"event": "round_start", "tower": FRESH},
                                       {"event": "touch", "player": "robot", "t": 5.0},
                                       {"event": "touch", "player": "robot", "t": 4.0}))
    with pytest.raises(MatchProgressError, match="no round is in play"):
        MatchProgress.from_events(_log({"event": "touch", "player": "robot", "t": 5.0}))
    with pytest.raises(MatchProgressError, match="unknown kind"):
        MatchProgress.from_events(_log({"event": "teleport"}))
    with pytest.raises(MatchProgressError, match="round ended"):
        MatchProgress.from_events(_log({"event": "round_start", "tower": FRESH},
                                       {"event": "round_end", "result": {}}))
    with pytest.raises(MatchProgressError, match="lacks or garbles"):
        MatchProgress.from_events(_log({"event": "round_start"}))


def test_a_restarted_world_clock_is_carried_on_by_the_offset():
    events = _log({"event": "round_start", "tower": FRESH},
                  {"event": "touch", "player": "robot", "t": 100.0},
                  {"event": "clock", "world_t": 2.0, "match_t": 100.5})
    progress = MatchProgress.from_events(events)
    assert progress.match_time(3.0) == pytest.approx(101.5)


def test_a_match_runs_to_its_winner_and_the_log_must_agree():
    events = [{"event": "round_start", "tower": FRESH},
              *_turn("robot", 1, 0.0, FRESH),
              {"event": "fall", "what": "tower", "t": 35.0},        # the person's turn: robot 1
              {"event": "round_start", "tower": FRESH},
              {"event": "turn_start", "player": "person", "turn": 1, "t": 40.0},
              {"event": "fall", "what": "tower", "t": 45.0}]        # robot 1, person 0 still
    progress = MatchProgress.from_events(_log(*events))
    assert progress.match.scores == {"robot": 1, "person": 0}
    # nobody completed a turn before that fall: no point; the start rotates back to the robot
    events += [{"event": "round_start", "tower": FRESH}, *_turn("robot", 1, 50.0, FRESH),
               {"event": "fall", "what": "tower", "t": 85.0}]       # in the person's turn
    progress = MatchProgress.from_events(_log(*events))
    assert progress.match.scores == {"robot": 2, "person": 0} and progress.over
    with pytest.raises(MatchProgressError, match="winner"):
        progress.apply({"seq": 99, "event": "match_end", "winner": "person"})
    progress.apply({"seq": 99, "event": "match_end", "winner": "robot"})
    with pytest.raises(MatchProgressError, match="match is over"):
        progress.apply({"seq": 100, "event": "round_start", "tower": FRESH})


EVENT = st.one_of(
    st.tuples(st.just("touch"), st.sampled_from(PLAYERS)),
    st.tuples(st.just("place"), st.sampled_from(PLAYERS)),
    st.tuples(st.just("fall"), st.sampled_from(list(Fall))))


@settings(max_examples=200, deadline=None)
@given(steps=st.lists(st.tuples(st.floats(0.0, 15.0), EVENT), max_size=25))
def test_a_logged_round_ends_as_the_referee_rules_it(steps):
    t, logged, judged = 0.0, [{"event": "round_start", "tower": FRESH}], []
    for dt, (kind, arg) in steps:
        t += dt
        if kind == "fall":
            logged.append({"event": "fall", "what": arg.value, "t": t, "blocks": 2})
            judged.append(Event(t, "fall", what=arg, blocks=2))
        else:
            logged.append({"event": kind, "player": arg, "t": t})
            judged.append(Event(t, kind, player=arg))
    config = MatchConfig(PLAYERS, Scoring.SURVIVAL, rounds=1)
    expected, _ = judge_round(list(PLAYERS), judged)
    cut = next((i for i in range(1, len(judged) + 1)
                if judge_round(list(PLAYERS), judged[:i])[0].status.value != "in_play"), None)
    progress = MatchProgress.from_events(_log(*logged[:None if cut is None else cut + 1],
                                              config=config))
    if cut is None:
        assert progress.in_round and progress.referee.result == expected
    else:
        assert not progress.in_round and progress.match.results == [expected]


def test_the_tower_a_log_leaves_includes_a_move_placed_before_its_turn_ended():
    after = TowerState.fresh().moved((5, 1), (19, 0))
    turn = _turn("robot", 1, 0.0, after.to_json())
    placed = MatchProgress.from_events(_log({"event": "round_start", "tower": FRESH}, *turn[:3]))
    assert placed.tower == TowerState.fresh() and placed.expected_tower() == after
    ended = MatchProgress.from_events(_log({"event": "round_start", "tower": FRESH}, *turn))
    assert ended.placed is None and ended.expected_tower() == after
    # the person's move, as the referee saw it; one laid across the top is in no slot
    person = [{"event": "turn_start", "player": "person", "turn": 2, "t": 31.0},
              {"event": "place", "player": "person", "t": 40.0,
               "seen": {"source": [7, 0], "target": None, "laid_across": True}}]
    across = MatchProgress.from_events(_log({"event": "round_start", "tower": FRESH}, *turn,
                                            *person))
    assert across.placed == ((7, 0), None) and across.expected_tower() == after


def test_the_probes_of_a_turn_cut_short_count_with_its_restart():
    """The console's count of a resumed turn's probes agrees with the report's: both attempts."""
    probe = {"event": "probe", "turn": 1, "layer": 6, "slot": 1, "peak_force_n": 0.2,
             "travel_mm": 4.0, "threshold_n": 0.6}
    events = _log({"event": "round_start", "tower": FRESH},
                  {"event": "turn_start", "player": "robot", "turn": 1, "t": 0.0}, probe,
                  {"event": "note", "text": "resumed: round 1, robot's turn 1"}, dict(probe, slot=2))
    progress = MatchProgress.from_events(events)
    assert progress.open_turn.number == 1 and progress.open_turn.probes == 2


def test_a_robot_that_finds_no_block_to_attempt_loses_the_round():
    """No passing: the robot's 'no block would come out' is a round-losing violation, and the
    match goes on to its next round instead of stopping."""
    one = TowerState.fresh().moved((5, 1), (19, 0))
    two = one.moved((6, 1), (19, 1))
    events = _log({"event": "round_start", "tower": FRESH},
                  *_turn("robot", 1, 0.0, one.to_json()), *_turn("person", 2, 30.0, two.to_json()),
                  {"event": "turn_start", "player": "robot", "turn": 3, "t": 60.0},
                  {"event": "violation", "player": "robot", "code": "no_move_attempted",
                   "message": "the robot found no block to attempt", "t": 90.0})
    progress = MatchProgress.from_events(events)
    assert not progress.in_round and not progress.over        # target_points=2: a round 2 comes
    assert progress.match.results[-1].loser == "robot"
    assert progress.match.scores == {"robot": 0, "person": 1}


def test_the_simulated_persons_account_changes_nothing_the_match_counts():
    after = TowerState.fresh().moved((5, 1), (19, 0)).to_json()
    turn = _turn("robot", 1, 0.0, after)
    account = {"event": "person_tried", "player": "robot",
               "account": {"tried": [{"source": [5, 1], "came_out": True}], "source": [5, 1],
                           "target": [19, 0]}}
    plain = MatchProgress.from_events(_log({"event": "round_start", "tower": FRESH}, *turn))
    told = MatchProgress.from_events(_log({"event": "round_start", "tower": FRESH}, *turn[:2],
                                          account, *turn[2:]))
    assert told.tower == plain.tower and told.match.scores == plain.match.scores
    assert told.referee.completed_turns == plain.referee.completed_turns
