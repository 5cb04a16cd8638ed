"""`jenga-robot play` refuses what it cannot do before it starts anything, and says why."""

import subprocess
import sys

import pytest


def play(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "controller.cli", "play", *args],
                          capture_output=True, text=True, timeout=120, cwd=cwd)


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
