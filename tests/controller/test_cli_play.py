"""`jenga-robot play` refuses what it cannot do before it starts anything, and says why."""

import pytest

from controller.commands.common import Terminated
from tests.run_cli import jenga_robot


def play(*args, cwd=None):
    return jenga_robot("play", *args, cwd=cwd)


@pytest.mark.parametrize("args, why", [
    (["--serial", "/dev/null", "--person", "simulated"], "simulated person plays only"),
    (["--person-skill", "1.5"], "within 0..1"),
    (["--points", "0"], "at least 1"),
])
def test_a_match_that_cannot_be_played_is_refused(args, why, tmp_path):
    run = play(*args, "--report-dir", str(tmp_path / "r"))
    assert run.returncode == 2 and why in run.stderr, run.stderr


def test_a_report_folder_holding_a_match_is_not_overwritten(tmp_path):
    folder = tmp_path / "r"
    folder.mkdir()
    (folder / "match.jsonl").write_text('{"seq": 0, "event": "match", "version": 1}\n')
    run = play("--report-dir", str(folder))
    assert run.returncode == 2 and "already holds a match" in run.stderr
    assert (folder / "match.jsonl").read_text().count("\n") == 1


def test_resuming_a_log_that_is_not_there_or_is_damaged_says_so(tmp_path):
    run = play("--resume", str(tmp_path / "none.jsonl"))
    assert run.returncode == 2 and "no match log" in run.stderr
    damaged = tmp_path / "match.jsonl"
    damaged.write_text('{"seq": 0, "event": "match", "version": 1}\nnot json\n{"seq": 2}\n')
    run = play("--resume", str(damaged))
    assert run.returncode == 2 and "line 2" in run.stderr and "damaged" in run.stderr


def test_a_match_that_is_over_is_not_played_again_but_its_report_is_drawn(tmp_path):
    from controller.match.log import MatchLog
    from planning.game.rules import MatchConfig, Scoring
    from planning.game.tower import TowerState
    config = MatchConfig(("person", "robot"), Scoring.ROUND_WINS, target_points=1)
    path = tmp_path / "match.jsonl"
    after = TowerState.fresh().moved((5, 1), (19, 1))
    with MatchLog.create(path, {"config": config.to_json(), "opponent": "simulated",
                                "seed": 1}) as log:
        log.append("round_start", tower=TowerState.fresh().to_json())
        log.append("turn_start", player="person", turn=1, t=0.0)
        log.append("place", player="person", t=20.0, seen={"source": [5, 1], "target": [19, 1]})
        log.append("advance", t=30.0)
        log.append("turn_end", player="person", turn=1, tower=after.to_json())
        log.append("turn_start", player="robot", turn=2, t=30.0)
        log.append("fall", what="tower", t=35.0)
    run = play("--resume", str(path))
    assert run.returncode == 0, run.stderr
    assert "is over: person won" in run.stdout and "winner: person" in run.stdout
    assert (tmp_path / "summary.txt").exists() and (tmp_path / "tower-r1-t02-robot.png").exists()
    # the kill had torn the match's end off the log: the resume writes it, once
    from controller.match.log import read_events
    assert [e["event"] for e in read_events(path)][-1] == "match_end"
    assert play("--resume", str(path)).returncode == 0
    assert [e["event"] for e in read_events(path)].count("match_end") == 1


def test_a_simulated_match_cannot_be_resumed_at_a_real_cell(tmp_path):
    from controller.match.log import MatchLog
    from planning.game.rules import MatchConfig
    path = tmp_path / "match.jsonl"
    with MatchLog.create(path, {"config": MatchConfig(("person", "robot")).to_json(),
                                "opponent": "simulated"}):
        pass
    run = play("--resume", str(path), "--serial", "/dev/null")
    assert run.returncode == 2 and "leave out --serial" in run.stderr


def test_the_mistakes_the_command_offers_are_the_simulated_persons():
    from controller.commands.play_cmd import PERSON_MISTAKES
    from hardware.sim.person import MISTAKES
    assert PERSON_MISTAKES == MISTAKES


def test_team_scoring_makes_the_robot_and_the_person_a_team_each():
    import argparse
    from controller.commands.match_cmd import match_config
    args = argparse.Namespace(first="robot", scoring="team", points=2, rounds=3, variant=[],
                              turn_limit_s=None)
    config = match_config(args, "person")
    assert config.teams == (("robot",), ("person",)) and config.players == ("robot", "person")


@pytest.mark.parametrize("args, words", [
    (["--turns", "3"], "--turns: for --solo play (add --solo), not for a match"),
    (["--solo", "--points", "2"], "--points: for a match, not for --solo play"),
    (["--solo", "--person-skill", "0.3"], "--person-skill: for a match"),
    (["--resume", "match.jsonl", "--seed", "5"], "--seed: a resumed match keeps the settings in its log"),
    (["--resume", "match.jsonl", "--scoring", "survival", "--first", "robot"],
     "--scoring, --first: a resumed match keeps the settings in its log; leave them out"),
])
def test_an_option_that_does_not_apply_is_refused_not_ignored(args, words, tmp_path):
    run = play(*args, cwd=tmp_path)
    assert run.returncode == 2 and run.stdout == ""
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jenga-robot: error: ") and words in lines[0]
    assert not (tmp_path / "reports").exists()


def test_a_serial_port_that_does_not_open_leaves_no_report_and_no_resume_hint(tmp_path):
    run = play("--serial", str(tmp_path / "ttyACM9"), "--person", "console",
               "--camera", "left=http://127.0.0.1:9/left.mjpg",
               "--camera", "right=http://127.0.0.1:9/right.mjpg", "--report-dir", str(tmp_path / "r"))
    assert run.returncode == 1
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("jenga-robot: error: the match could not start: ")
    assert "cannot open serial port" in lines[0] and "--resume" not in run.stderr
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("stop, status, how", [
    (KeyboardInterrupt, 130, "interrupted at the keyboard"),
    (Terminated, 143, "terminated (SIGTERM)"),
])
def test_a_solo_game_stopped_midway_still_writes_its_report(tmp_path, monkeypatch, stop, status,
                                                             how):
    """The report is written as each turn ends, and once more when Ctrl-C or SIGTERM stops the
    game in its second turn, with the turns played and how it stopped. The game is the product's
    own (`play_game`), with scripted hands in place of the cell."""
    import json

    import controller.cell_link as cell_link
    import controller.solo as solo
    from controller.turn.procedure import Player
    from planning.game.tower import TowerState
    from planning.policies import Policy
    from planning.stability import BlockDims
    from tests.controller.scripted_hands import ScriptedHands

    class StandInCell:
        serial, camera_urls = "loop://", {}

        def __init__(self, *args):
            pass

        def close(self):
            pass

    class StandInLink:
        def __init__(self, *args, **kwargs):
            pass

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    written = []

    def scripted_game(link, turns, on_turn=None, result=None, **kwargs):
        hands = ScriptedHands(TowerState.fresh())
        pulls, pull = [], hands.pull

        def pull_then_stop(source):
            pulls.append(source)
            if len(pulls) == 2:
                raise stop()
            return pull(source)
        hands.pull = pull_then_stop

        def turn_done(report):
            on_turn(report)
            written.append(json.loads((tmp_path / "game.json").read_text()))

        player = Player(hands, BlockDims(0.075, 0.025, 0.015, 0.0135), policy=Policy("ours"))
        return solo.play_game(player, turns, turn_done, result)

    monkeypatch.setattr(cell_link, "SimulatedCell", StandInCell)
    monkeypatch.setattr(cell_link, "CellLink", StandInLink)
    monkeypatch.setattr(solo, "play_solo", scripted_game)
    run = play("--solo", "--report", str(tmp_path / "game.json"),
               "--records", str(tmp_path / "records.json"))
    assert run.returncode == status, run.stderr
    # written as the first turn ended, saying so
    assert len(written) == 1 and len(written[0]["turns"]) == 1
    assert written[0]["ended"] == "not yet: turn 1 done" and written[0]["stories"] == "18 1/3"
    report = json.loads((tmp_path / "game.json").read_text())
    assert len(report["turns"]) == 2 and report["legal_turns"] == 1
    assert report["error"] == f"turn 2: {how}" and report["stories"] == "18 1/3"
    assert how in run.stdout and "18 1/3" in run.stdout
    assert not (tmp_path / "game.json.partial").exists()


def test_a_report_that_cannot_be_written_is_refused_before_the_game(tmp_path):
    run = play("--solo", "--report", str(tmp_path / "no" / "such" / "game.json"))
    assert run.returncode == 2 and "cannot write the report" in run.stderr
