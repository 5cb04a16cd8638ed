"""A match's report, drawn from its log: the summary names the winner, the score and every turn;
each robot turn's probes are plotted; the tower is mapped after every turn, the slot taken from
ringed in red and the one filled in green."""

import argparse
import json

import cv2
import numpy as np

from controller.commands.report_cmd import run_report
from controller.match.report import write_report
from controller.match.turns import logged_turns
from controller.match.plots import PLACED, TAKEN
from planning.game.rules import MatchConfig, Scoring
from planning.game.tower import TowerState

FRESH = TowerState.fresh()
CONFIG = MatchConfig(("robot", "person"), Scoring.ROUND_WINS, target_points=1)


def _probe(layer, slot, t0, peak):
    trace = [[t0 + 0.004 * i, peak * min(1.0, i / 100)] for i in range(200)]
    return {"event": "probe", "turn": 1, "layer": layer, "slot": slot, "block": 3 * layer + slot,
            "threshold_n": 0.6, "peak_force_n": peak, "travel_mm": 4.5, "p_loose": 0.8,
            "trace": trace}


def _events():
    after = FRESH.moved((6, 1), (19, 0))
    events = [{"event": "match", "version": 1, "config": CONFIG.to_json()},
              {"event": "round_start", "round": 1, "tower": FRESH.to_json()},
              {"event": "turn_start", "player": "robot", "turn": 1, "t": 0.0},
              _probe(5, 1, 2.0, 1.2), _probe(6, 1, 8.0, 0.15),
              {"event": "touch", "player": "robot", "t": 2.0},
              {"event": "place", "player": "robot", "t": 40.0, "source": [6, 1], "target": [19, 0],
               "phases_s": {"probe": 20.0, "pull": 10.0, "place": 12.0}},
              {"event": "touch", "player": "person", "t": 45.0},
              {"event": "turn_end", "player": "robot", "turn": 1, "tower": after.to_json()},
              {"event": "turn_start", "player": "person", "turn": 2, "t": 45.0},
              {"event": "place", "player": "person", "t": 60.0,
               "seen": {"source": [18, 0], "target": [19, 1], "laid_across": False}},
              {"event": "violation", "player": "person", "code": "forbidden_layer",
               "message": "layer 18 is not a source", "t": 61.0},
              {"event": "fall", "what": "tower", "t": 65.0}]
    return [dict(e, seq=i, wall=f"2026-12-01T10:00:{i:02d}.000+00:00") for i, e in enumerate(events)]


def _pixels_like(image, hex_colour, tolerance=30):
    rgb = np.array([int(hex_colour[i:i + 2], 16) for i in (1, 3, 5)])
    return int(np.sum(np.all(np.abs(image[..., ::-1].astype(int) - rgb) < tolerance, axis=-1)))


def test_the_log_reads_back_as_its_turns():
    robot, person = logged_turns(_events())
    assert (robot.player, robot.source, robot.target, robot.ended) == ("robot", (6, 1), (19, 0), "ended")
    assert [p.peak_force_n for p in robot.probes] == [1.2, 0.15] and robot.duration_s == 42.0
    assert robot.tower.top_layer == 19 and robot.before == FRESH
    assert (person.source, person.target, person.ended) == ((18, 0), (19, 1), "fell")
    assert person.violations == ["layer 18 is not a source"]


def test_a_turn_started_again_after_a_resume_is_the_same_turn():
    events = _events()
    again = dict(events[2], seq=99)         # the robot's turn_start, logged again on resume
    turns = logged_turns(events[:3] + [again] + events[3:])
    assert [t.player for t in turns] == ["robot", "person"]


def test_the_report_holds_the_summary_the_probe_plots_and_a_tower_map_per_turn(tmp_path):
    report = write_report(tmp_path, _events())
    names = sorted(p.name for p in report.files)
    assert names == ["probes-r1-t01.png", "summary.txt", "tower-r1-t01-robot.png",
                     "tower-r1-t02-person.png"]
    assert "winner: robot" in report.summary and "score: robot 1, person 0" in report.summary
    assert "round 1, turn 2: person layer 18 slot 0 -> layer 19 slot 1 [fell]" in report.summary
    assert "referee: layer 18 is not a source" in report.summary
    probes = cv2.imread(str(tmp_path / "probes-r1-t01.png"))
    assert probes.shape[:2] == (400, 700)
    # both traces are drawn, in matplotlib's first two colours
    assert _pixels_like(probes, "#1f77b4") > 200 and _pixels_like(probes, "#ff7f0e") > 200
    tower = cv2.imread(str(tmp_path / "tower-r1-t01-robot.png"))
    assert _pixels_like(tower, PLACED, 10) > 500 and _pixels_like(tower, TAKEN, 10) > 50


def test_the_report_command_draws_it_again_from_the_log(tmp_path, capsys):
    log = tmp_path / "match.jsonl"
    log.write_text("".join(json.dumps(e) + "\n" for e in _events()))
    assert run_report(argparse.Namespace(log=str(log), out=None)) == 0
    assert "winner: robot" in capsys.readouterr().out
    assert (tmp_path / "tower-r1-t02-person.png").exists()


def test_a_match_in_its_first_round_is_not_reported_as_having_no_rounds(tmp_path):
    events = _events()[:7]          # round 1 is still being played
    summary = write_report(tmp_path, events).summary
    assert "rounds: 0 finished, round 1 in play" in summary
    assert "rounds: 1 finished" in write_report(tmp_path, _events()).summary


def test_a_damaged_log_is_named_without_talk_of_resuming(tmp_path):
    import pytest
    from controller.commands.common import CommandError
    log = tmp_path / "match.jsonl"
    lines = [json.dumps(e) for e in _events()]
    log.write_text("\n".join(lines[:3] + ["{torn"] + lines[4:]) + "\n")
    with pytest.raises(CommandError) as err:
        run_report(argparse.Namespace(log=str(log), out=None))
    assert "line 4" in str(err.value) and "damaged" in str(err.value)
    assert "resume" not in str(err.value)


def test_the_summary_names_every_surprise_the_robots_turns_got_over(tmp_path):
    events = _events()
    notes = [{"event": "note", "t": 10.0, "text": "robot: looked again: the look read no tower"},
             {"event": "note", "t": 12.0, "text": "robot: layer 5 slot 1 put back"},
             {"event": "note", "t": 30.0,
              "text": "robot: placed elsewhere: layer 19 slot 1: the block met something 7 mm"}]
    assert "robot recoveries: none" in write_report(tmp_path, events).summary
    events = events[:5] + [dict(n, seq=90 + i, wall=events[4]["wall"]) for i, n in enumerate(notes)] \
        + events[5:]
    summary = write_report(tmp_path, events).summary
    assert "robot recoveries: 2 (surprises its turns got over)" in summary
    assert "  looked again: the look read no tower" in summary
    assert "  placed elsewhere: layer 19 slot 1" in summary and "put back\n" not in summary
