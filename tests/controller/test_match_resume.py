"""A match resumed from its log goes on where the log left it: the tower set up and checked, a
turn cut short played again under its number, a settling window watched to its end, a turn that
closed given its end; a tower that is not the one the log left stops the match, naming the
slots. The cell is faked: the arm's clock, and what the cameras see."""

from types import SimpleNamespace

import pytest

from controller.match.log import MatchLog, read_events
from controller.match.progress import MatchProgress
from controller.match.runner import MatchError, MatchRunner
from perception.observation import TowerObservation
from perception.pipeline import Perception
from planning.game.geometry import TowerPose
from planning.game.rules import MatchConfig, Scoring
from planning.game.tower import TowerState

FRESH = TowerState.fresh()
MOVED = FRESH.moved((5, 1), (19, 0))
CONFIG = MatchConfig(("robot", "person"), Scoring.ROUND_WINS, target_points=1)


class Arm:
    def __init__(self):
        self.t = 0.0

    def device_time(self) -> float:
        return self.t

    def on_telemetry(self, listener) -> None:
        pass                  # no telemetry flows: nothing moves

    def wait_for(self, predicate, timeout_s):
        while not predicate(SimpleNamespace(device_time=self.t)):
            self.t += 0.05
        return SimpleNamespace(device_time=self.t)


def _seen(tower: TowerState) -> TowerObservation:
    occupancy = {(layer, slot): tower.has_block(layer, slot)
                 for layer in range(1, tower.top_layer + 1) for slot in range(3)}
    return TowerObservation(0.0, TowerPose(0.5, 0.0, 0.785, 0.01484), 0.0, 0.1, [], occupancy)


class Person:
    name = "person"

    def __init__(self):
        self.calls = []

    def resume(self, tower):
        self.calls.append(("resume", tower))

    def your_turn(self):
        self.calls.append(("your_turn",))


def _resumed(tmp_path, default_cell, events, sees: TowerState):
    path = tmp_path / "match.jsonl"
    with MatchLog.create(path, {"config": CONFIG.to_json()}) as log:
        for event in events:
            log.append(event.pop("event"), **event)
    log, logged = MatchLog.resume(path)
    arm = Arm()
    link = SimpleNamespace(cell=default_cell, arm=arm, perception=Perception(default_cell),
                           observe=lambda after=None: SimpleNamespace(observation=_seen(sees)))
    person = Person()
    runner = MatchRunner(link, log, MatchProgress.from_events(logged), person, on_line=lambda _: None)
    runner.monitor.watch = lambda pose, layers: None          # no cameras to watch
    runner._emit("clock", world_t=0.0, match_t=runner.progress.time)
    return runner, person, path


def _robot_turn(placed=True):
    events = [{"event": "round_start", "tower": FRESH.to_json()},
              {"event": "turn_start", "player": "robot", "turn": 1, "t": 0.0}]
    if placed:
        events += [{"event": "touch", "player": "robot", "t": 1.0},
                   {"event": "place", "player": "robot", "t": 40.0, "source": [5, 1],
                    "target": [19, 0]}]
    return events


def test_a_turn_cut_short_is_played_again_under_its_number(tmp_path, default_cell):
    runner, person, path = _resumed(tmp_path, default_cell, _robot_turn(placed=False), FRESH)
    runner._resume_round()
    assert person.calls == [("resume", FRESH)]
    assert runner._turn_number("robot") == 1
    notes = [e["text"] for e in read_events(path) if e["event"] == "note"]
    assert notes == ["resumed: round 1, robot's turn 1, played again from its start"]
    assert not [e for e in read_events(path)[3:] if e["event"] == "turn_start"]


def test_a_settling_window_is_watched_to_its_end(tmp_path, default_cell):
    runner, person, path = _resumed(tmp_path, default_cell, _robot_turn(), MOVED)
    runner._resume_round()
    assert person.calls == [("resume", MOVED), ("your_turn",)]       # the move is on the tower
    tail = [e for e in read_events(path) if e["event"] in ("advance", "turn_end")]
    assert tail[0]["t"] == pytest.approx(50.0) and tail[1]["tower"] == MOVED.to_json()
    assert runner.progress.referee.current_player == "person"


def test_a_turn_that_closed_before_its_end_was_logged_gets_its_end(tmp_path, default_cell):
    events = _robot_turn() + [{"event": "advance", "t": 50.0}]
    runner, person, path = _resumed(tmp_path, default_cell, events, MOVED)
    runner._resume_round()
    logged = read_events(path)
    ended = [e for e in logged if e["event"] == "turn_end"]
    assert len(ended) == 1 and ended[0]["player"] == "robot"
    assert runner.progress.tower.layers == MOVED.layers and runner.progress.open_turn is None
    assert logged[-1]["text"] == "resumed: round 1, person's turn 2"


def test_a_tower_that_is_not_the_one_the_log_left_stops_the_match(tmp_path, default_cell):
    runner, _, _ = _resumed(tmp_path, default_cell, _robot_turn(), FRESH)
    with pytest.raises(MatchError, match=r"layer 5 slot 1 full, layer 19 slot 0 empty.*resume again"):
        runner._resume_round()
