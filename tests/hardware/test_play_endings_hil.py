"""Hardware in the loop: how `jenga-robot play` ends when it is stopped from outside. SIGTERM (from
`timeout`, `kill`, a service manager) ends a match as Ctrl-C does: the arm left stopped, the log
noted, the report drawn. A simulated cell killed in the middle of a turn leaves a result that
does not claim a tower nobody can see any more."""

import os
import signal
import subprocess
import sys

import pytest

from controller.match.log import read_events
from controller.viewer.recorder import paths
from tests.hardware.processes import Lines, children
from tests.recordings import read_recording, texts

pytestmark = pytest.mark.hil

PLAY = [sys.executable, "-u", "-m", "controller.cli", "play"]


def test_sigterm_in_a_match_leaves_the_log_noted_and_the_report_drawn(tmp_path):
    folder = tmp_path / "match"
    process = subprocess.Popen(PLAY + ["--seed", "2", "--report-dir", str(folder)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = Lines(process)
        lines.wait_for("person's turn: the robot waits and watches", timeout_s=300)
        process.send_signal(signal.SIGTERM)
        lines.rest(timeout_s=120)
        assert process.wait(timeout=60) == 143
    finally:
        if process.poll() is None:
            process.kill()
    stderr = process.stderr.read()
    assert "terminated (SIGTERM); resume with: jenga-robot play --resume" in stderr
    assert "Traceback" not in stderr
    events = read_events(folder / "match.jsonl")
    assert events[-1]["event"] == "note" and events[-1]["text"] == "stopped: terminated (SIGTERM)"
    summary = (folder / "summary.txt").read_text()
    assert "rounds: 0 finished, round 1 in play" in summary


def test_a_cell_killed_mid_turn_leaves_the_tower_unknown_not_standing(tmp_path):
    rrd = tmp_path / "game.rrd"
    process = subprocess.Popen(PLAY + ["--solo", "--turns", "1", "--seed", "3", "--records",
                                       str(tmp_path / "records.json"), "--rrd", str(rrd)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = Lines(process)
        lines.wait_for("turn 1: testing blocks", timeout_s=300)
        cell = children(process.pid)
        assert cell, "play started no simulated cell"
        for pid in cell:
            os.kill(pid, signal.SIGKILL)
        seen = lines.rest(timeout_s=120)
        assert process.wait(timeout=60) == 1
    finally:
        if process.poll() is None:
            process.kill()
    result = next(line for line in seen if line.startswith("result: "))
    assert "tower unknown (the cell stopped answering)" in result and "standing" not in result
    assert "Traceback" not in process.stderr.read()
    # `play --solo --rrd`: what was seen and felt up to the cell's end is recorded and closed
    assert any(line.startswith(f"recording: {rrd}; recording took ") for line in seen)
    entities = read_recording(rrd)
    force = entities["/" + paths.WRIST_FORCE]
    assert force.rows / force.span_s >= 200
    for camera in ("left", "right"):
        assert entities[f"/{paths.CAMERAS}/{camera}"].rows >= 1
    assert len(entities["/" + paths.TOWER].columns["Boxes3D:centers"][0]) == 54
    assert "turn 1: probe" in texts(entities["/" + paths.EVENTS])
