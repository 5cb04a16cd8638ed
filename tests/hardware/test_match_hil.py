"""Hardware in the loop: a whole match, robot against the simulated person, as `jenga-robot play`
runs it (the serial pty and the camera streams of a simulated cell it starts), killed in the
middle of the robot's first turn and resumed from its log with `play --resume`.

The person moves first and breaks a rule on every turn (a block from a forbidden layer): the robot,
refereeing, warns them the first time and rules the round lost the second (strict play), so the
match ends in a few turns with the robot the winner. The log shows the settling windows: the
person's first touch closes the robot's window early; the person's own window runs its full 10 s
before the robot touches the tower."""

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from controller.match.log import read_events
from controller.match.progress import MatchProgress
from controller.match.runner import ROBOT
from tests.hardware.processes import children

pytestmark = pytest.mark.hil

WINDOW_S = 10.0
PLAY = [sys.executable, "-m", "controller.cli", "play"]


def _wait_for_event(log: Path, process: subprocess.Popen, wanted, timeout_s: float) -> dict:
    """The first logged event `wanted` accepts, polling the log as the match writes it."""
    deadline = time.monotonic() + timeout_s
    pause = threading.Event()
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(f"the match ended first: {process.stdout.read()}")
        if log.exists():
            found = next((e for e in read_events(log) if wanted(e)), None)
            if found is not None:
                return found
        pause.wait(0.5)
    raise AssertionError(f"no such event in {timeout_s} s")


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    folder = tmp_path_factory.mktemp("match")
    log = folder / "match.jsonl"
    first = subprocess.Popen(PLAY + ["--seed", "1", "--person-skill", "0.8", "--person-mistake",
                                     "forbidden_layer", "--report-dir", str(folder)],
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        # killed mid-turn: the robot has made its first test push and is still at work
        _wait_for_event(log, first, lambda e: e["event"] == "probe", timeout_s=600)
        cell = children(first.pid)
        first.kill()
        first.wait(timeout=30)
    finally:
        if first.poll() is None:
            first.kill()
    at_kill = read_events(log)
    gone = threading.Event()
    for _ in range(60):                    # the simulated cell goes with its controller
        if not any(Path(f"/proc/{pid}").exists() for pid in cell):
            break
        gone.wait(0.5)
    cell_left = [pid for pid in cell if Path(f"/proc/{pid}").exists()]
    resumed = subprocess.run(PLAY + ["--resume", str(log)], capture_output=True, text=True,
                             timeout=900)
    return {"at_kill": at_kill, "cell": cell, "cell_left": cell_left, "resumed": resumed,
            "events": read_events(log), "folder": folder}


def _of(events, kind, **match):
    return [e for e in events if e["event"] == kind and all(e.get(k) == v for k, v in match.items())]


def test_the_match_runs_to_its_result_and_the_log_replays_to_it(played):
    resumed, events = played["resumed"], played["events"]
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "winner: robot" in resumed.stdout
    assert events[-1]["event"] == "match_end" and events[-1]["winner"] == ROBOT
    again = MatchProgress.from_events(events)
    assert again.over and again.match.winner == ROBOT and again.match.scores[ROBOT] == 1


def test_a_controller_killed_mid_turn_resumes_with_the_right_score_turn_and_tower(played):
    at_kill, events = played["at_kill"], played["events"]
    assert played["cell"] and not played["cell_left"]     # the cell did not outlive the kill
    cut = MatchProgress.from_events(at_kill)
    assert cut.in_round and cut.open_turn.player == ROBOT and cut.referee.phase.value == "open"
    assert events[:len(at_kill)] == at_kill                # nothing the kill left was lost
    after = events[len(at_kill):]
    note = next(e for e in after if e["event"] == "note" and e["text"].startswith("resumed"))
    assert note["text"] == f"resumed: round 1, robot's turn {cut.open_turn.number}, played again " \
                           f"from its start"
    # the same turn goes on, on the tower the person left: not started again, and the tower
    # it ends with is that tower with the robot's move
    assert not _of(after, "turn_start", player=ROBOT, turn=cut.open_turn.number)
    placed = _of(after, "place", player=ROBOT)[0]
    expected = cut.tower.moved(tuple(placed["source"]), tuple(placed["target"]))
    ended = _of(after, "turn_end", player=ROBOT)[0]
    assert ended["tower"]["layers"] == expected.to_json()["layers"]


def test_the_referee_warns_then_rules_the_round_on_a_repeated_violation(played):
    events = played["events"]
    called = _of(events, "violation", player="person", code="forbidden_layer")
    assert len(called) == 2
    result = MatchProgress.from_events(events).match.results[0]
    assert result.status.value == "forfeit" and result.loser == "person"


def test_the_log_holds_the_simulated_persons_own_account_of_each_turn(played):
    events = played["events"]
    accounts = _of(events, "person_tried", player="person")
    placed = _of(events, "place", player="person")
    assert placed and len(accounts) >= len(placed)
    for place in placed:
        account = [e for e in accounts if e["seq"] < place["seq"]][-1]["account"]
        assert account["tried"] and account["source"] == place["seen"]["source"]


def test_the_persons_first_touch_closes_the_robots_window_early(played):
    events = played["events"]
    placed = _of(events, "place", player=ROBOT)[0]
    after = [e for e in events if e["seq"] > placed["seq"]]
    first = next(e for e in after if e["event"] in ("touch", "advance"))
    assert first["event"] == "touch" and first["player"] == "person"
    assert placed["t"] <= first["t"] < placed["t"] + WINDOW_S


def test_the_robot_waits_out_the_persons_window(played):
    events = played["events"]
    placed = _of(events, "place", player="person")[0]
    after = [e for e in events if e["seq"] > placed["seq"]]
    closed = next(e for e in after if e["event"] in ("advance", "touch", "fall"))
    assert closed["event"] == "advance" and closed["t"] == pytest.approx(placed["t"] + WINDOW_S)
    robot = next(e for e in after if e["event"] == "touch" and e["player"] == ROBOT)
    assert robot["t"] >= closed["t"]


def test_the_report_plots_every_probe_and_maps_the_tower_after_every_turn(played):
    folder, events = played["folder"], played["events"]
    names = {p.name for p in folder.iterdir()}
    assert {"match.jsonl", "summary.txt"} <= names
    assert "probes-r1-t02.png" in names and _of(events, "probe", turn=2)
    turns = {(e["turn"], e["player"]) for e in _of(events, "turn_start")}
    assert {f"tower-r1-t{n:02d}-{p}.png" for n, p in turns} <= names
    assert "resumed 1 time" in (folder / "summary.txt").read_text()
    assert os.path.getsize(folder / "probes-r1-t02.png") > 10_000
