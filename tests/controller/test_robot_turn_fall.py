"""A fall in the robot's turn is judged by the match's own cameras, whoever called it: a fall the
robot's hands called with the tower standing is not one (a resumed match's turn 16 stopped on
such a call, 0-0, "the match is not over"), and one the cameras see loses the robot the round.
The cell is faked as in test_person_turn_fall.py."""

from types import SimpleNamespace

import pytest

from controller.match import runner as runner_module
from controller.match.log import read_events
from controller.match.runner import ROBOT, MatchError
from controller.turn.report import TowerFellError
from tests.controller.test_person_turn_fall import FRESH, _fallen, _runner
from tests.controller.test_match_resume import _seen


def _robot_turn(tmp_path, default_cell, monkeypatch, sees, holding=False, dropped=False):
    runner, path = _runner(tmp_path, default_cell, sees, hand=lambda t: False, starter=ROBOT)
    retracted = []
    monkeypatch.setattr(runner_module, "retract", lambda arm, planner, layers, keep_held=False:
                        retracted.append(keep_held) or "went home")

    def play(number, blocks_moved, watch_window):
        runner.link.arm.t += 30.0
        if dropped:        # the block fell from the fingers on the way to the top
            return SimpleNamespace(target=None, error="the block fell from the gripper")
        raise TowerFellError("the tower fell as the block was pulled out")
    runner.robot = SimpleNamespace(play=play, hands=SimpleNamespace(planner=None, holding=holding))
    return runner, path, retracted


def test_a_fall_the_hands_called_with_the_tower_standing_is_not_one(tmp_path, default_cell,
                                                                     monkeypatch):
    runner, path, retracted = _robot_turn(tmp_path, default_cell, monkeypatch,
                                          lambda t: _seen(FRESH))
    with pytest.raises(MatchError, match="the tower stands: resume the match"):
        runner._robot_turn()
    kinds = [e["event"] for e in read_events(path)]
    assert "fall" not in kinds and "round_end" not in kinds
    assert retracted == [False]     # the arm was taken home before the match stopped


def test_a_block_held_when_the_turn_stopped_is_kept_in_the_fingers(tmp_path, default_cell,
                                                                     monkeypatch):
    runner, path, retracted = _robot_turn(tmp_path, default_cell, monkeypatch,
                                          lambda t: _seen(FRESH), holding=True)
    with pytest.raises(MatchError):
        runner._robot_turn()
    assert retracted == [True]      # not let go over the tower


def test_a_fall_the_cameras_see_in_the_robots_turn_loses_it_the_round(tmp_path, default_cell,
                                                                       monkeypatch):
    runner, path, retracted = _robot_turn(tmp_path, default_cell, monkeypatch,
                                          lambda t: _fallen(FRESH) if t > 10.0 else _seen(FRESH))
    runner._robot_turn()
    events = read_events(path)
    assert "fall" in [e["event"] for e in events] and retracted
    end = next(e for e in events if e["event"] == "round_end")
    assert end["result"]["loser"] == ROBOT


@pytest.mark.parametrize("knocked_down", [False, True])
def test_a_block_dropped_on_the_way_up_stops_the_match_unless_it_knocked_the_tower_down(
        tmp_path, default_cell, monkeypatch, knocked_down):
    """The arm cannot pick a dropped block up again: with the tower standing the match stops,
    resumable, saying so; a tower the block knocked down is the robot's fall."""
    sees = (lambda t: _fallen(FRESH) if t > 10.0 else _seen(FRESH)) if knocked_down \
        else (lambda t: _seen(FRESH))
    runner, path, retracted = _robot_turn(tmp_path, default_cell, monkeypatch, sees, dropped=True)
    if knocked_down:
        runner._robot_turn()
        end = next(e for e in read_events(path) if e["event"] == "round_end")
        assert end["result"]["loser"] == ROBOT
    else:
        with pytest.raises(MatchError, match="fell from the gripper.*resume the match"):
            runner._robot_turn()
    assert len(retracted) == 1
