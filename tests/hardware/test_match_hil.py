"""Hardware in the loop: a whole match, robot against the simulated person, through the serial pty
and the camera streams. The person moves first and breaks a rule twice (a block from a forbidden
layer): the robot, refereeing, warns them the first time and rules the round lost the second
(strict play), so the match ends in a few turns with the robot the winner. The log shows the
settling windows: the person's first touch closes the robot's window early; the person's own window
runs its full 10 s before the robot touches the tower."""

import pytest

from controller.cell_link import CellLink
from controller.commands.play_cmd import SIM_STALL_S
from controller.match_log import MatchLog, read_events
from controller.match_progress import MatchProgress
from controller.match_runner import ROBOT, MatchRunner
from controller.opponents import SimulatedPerson
from hardware.sim.server import SimServer
from planning.rules import MatchConfig, Scoring

pytestmark = pytest.mark.hil

WINDOW_S = 10.0


@pytest.fixture(scope="module")
def played(default_cell, tmp_path_factory):
    path = tmp_path_factory.mktemp("match") / "match.jsonl"
    config = MatchConfig(("person", ROBOT), Scoring.ROUND_WINS, target_points=1)
    progress = MatchProgress(config)
    with SimServer(default_cell, 1, person_skill=0.8) as server:
        base = server.camera_urls()["left"].rsplit("/", 1)[0]
        with CellLink(default_cell, server.serial_path, server.camera_urls(),
                      stall_s=SIM_STALL_S) as link, MatchLog.create(path, {"config": config.to_json()}) as log:
            person = SimulatedPerson(base)
            told = person.your_turn

            def your_turn():
                person.mistake = "forbidden_layer"        # every turn: warned, then the round lost
                told()
            person.your_turn = your_turn
            winner = MatchRunner(link, log, progress, person, on_line=print).run()
    return winner, read_events(path), progress


def _of(events, kind, **match):
    return [e for e in events if e["event"] == kind and all(e.get(k) == v for k, v in match.items())]


def test_the_match_runs_to_its_result_and_the_log_replays_to_it(played):
    winner, events, progress = played
    assert winner == ROBOT and progress.over
    assert events[-1]["event"] == "match_end" and events[-1]["winner"] == ROBOT
    again = MatchProgress.from_events(events)
    assert again.match.winner == ROBOT and again.match.scores == progress.match.scores


def test_the_referee_warns_then_rules_the_round_on_a_repeated_violation(played):
    _, events, progress = played
    called = _of(events, "violation", player="person", code="forbidden_layer")
    assert len(called) == 2
    result = progress.match.results[0]
    assert result.status.value == "forfeit" and result.loser == "person"


def test_the_persons_first_touch_closes_the_robots_window_early(played):
    _, events, _ = played
    placed = _of(events, "place", player=ROBOT)[0]
    after = [e for e in events if e["seq"] > placed["seq"]]
    first = next(e for e in after if e["event"] in ("touch", "advance"))
    assert first["event"] == "touch" and first["player"] == "person"
    assert placed["t"] <= first["t"] < placed["t"] + WINDOW_S


def test_the_robot_waits_out_the_persons_window(played):
    _, events, _ = played
    placed = _of(events, "place", player="person")[0]
    after = [e for e in events if e["seq"] > placed["seq"]]
    closed = next(e for e in after if e["event"] in ("advance", "touch", "fall"))
    assert closed["event"] == "advance" and closed["t"] == pytest.approx(placed["t"] + WINDOW_S)
    robot = next(e for e in after if e["event"] == "touch" and e["player"] == ROBOT)
    assert robot["t"] >= closed["t"]
