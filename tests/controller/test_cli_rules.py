"""`jenga-robot rules legal|judge` as a user runs them: a process, files in, JSON out."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.run_cli import jenga_robot


def run(*args):
    return jenga_robot(*args)


def write(tmp_path, obj, name="in.json"):
    path = tmp_path / name
    path.write_text(obj if isinstance(obj, str) else json.dumps(obj))
    return str(path)


def test_console_script_is_installed():
    script = Path(sys.executable).parent / "jenga-robot"
    assert script.exists()
    out = subprocess.run([str(script), "--help"], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "rules" in out.stdout


def test_legal_on_a_fresh_tower(tmp_path):
    out = run("rules", "legal", "--state", write(tmp_path, {"layers": [[1, 1, 1]] * 18}))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["highest_complete_layer"] == 18
    assert result["sources"] == [[layer, slot] for layer in range(1, 18) for slot in range(3)]
    assert result["place"] == {"layer": 19, "slots": [0, 1, 2], "axis": "x"}
    assert result["stories"] == "18"


def test_legal_with_a_partial_top_layer(tmp_path):
    layers = [[1, 1, 1]] * 18 + [[0, 1, 0]]
    layers[6] = [1, 0, 1]
    out = run("rules", "legal", "--state", write(tmp_path, {"layers": layers}))
    result = json.loads(out.stdout)
    assert result["highest_complete_layer"] == 18
    assert [7, 1] not in result["sources"] and [17, 2] in result["sources"]
    assert not [s for s in result["sources"] if s[0] >= 18]
    assert result["place"] == {"layer": 19, "slots": [0, 2], "axis": "x"}
    assert result["stories"] == "18 1/3"


def test_legal_forbid_top_two(tmp_path):
    state = write(tmp_path, {"layers": [[1, 1, 1]] * 18})
    result = json.loads(run("rules", "legal", "--state", state, "--variant", "forbid_top_two").stdout)
    assert max(layer for layer, _ in result["sources"]) == 16


@pytest.mark.parametrize("layers, words", [
    ([[1, 1, 1], [1, 1, 2]], ["layer 2", "0/1"]),
    ([[1, 1, 1], [1, 1]], ["layer 2", "0/1"]),
    ([[1, 1, 1], [0, 0, 0], [1, 1, 1]], ["layer 2", "empty"]),
    ([[1, 0, 1], [1, 1, 0]], ["no complete layer"]),
])
def test_not_a_tower_exits_2_with_one_line(tmp_path, layers, words):
    out = run("rules", "legal", "--state", write(tmp_path, {"layers": layers}))
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1
    for word in words:
        assert word in lines[0]


def test_unreadable_or_malformed_state_file(tmp_path):
    missing = run("rules", "legal", "--state", str(tmp_path / "nope.json"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    broken = run("rules", "legal", "--state", write(tmp_path, "{not json"))
    assert broken.returncode == 2 and "not JSON" in broken.stderr


def test_an_empty_layer_is_called_empty_not_missing(tmp_path):
    out = run("rules", "legal", "--state", write(tmp_path, {"layers": [[0, 0, 0]]}))
    assert out.returncode == 2 and out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "layer 1 is empty" in lines[0] and "no layers" not in lines[0]


def judge(tmp_path, events, players=("A", "B"), *extra):
    path = write(tmp_path, {"players": list(players), "events": events}, "events.json")
    return run("rules", "judge", "--events", path, *extra)


def test_judge_fall_in_the_window(tmp_path):
    events = [{"t": 0, "type": "touch", "player": "A"}, {"t": 20, "type": "place", "player": "A"},
              {"t": 25, "type": "touch", "player": "B"}, {"t": 40, "type": "place", "player": "B"},
              {"t": 45, "type": "fall", "what": "tower"}]
    out = judge(tmp_path, events)
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"status": "fell", "loser": "B", "winner": "A",
                                      "completed_turns": {"A": 1, "B": 0}}


def test_judge_window_length_is_an_option(tmp_path):
    events = [{"t": 0, "type": "place", "player": "A"}, {"t": 6, "type": "fall", "what": "tower"}]
    assert json.loads(judge(tmp_path, events).stdout)["loser"] == "A"
    assert json.loads(judge(tmp_path, events, ("A", "B"), "--window-s", "5").stdout)["loser"] == "B"


def test_judge_in_play_counts_turns_completed_by_the_last_event(tmp_path):
    events = [{"t": 0, "type": "place", "player": "A"}, {"t": 12, "type": "place", "player": "B"},
              {"t": 15, "type": "fall", "what": "moved_only"}]
    assert json.loads(judge(tmp_path, events).stdout) == {
        "status": "in_play", "loser": None, "winner": None, "completed_turns": {"A": 1, "B": 0}}


def test_judge_outside_fall_voids(tmp_path):
    events = [{"t": 0, "type": "place", "player": "A"}, {"t": 3, "type": "fall", "what": "outside"}]
    assert json.loads(judge(tmp_path, events).stdout)["status"] == "void"


def test_judge_first_turn_fall_has_no_winner(tmp_path):
    events = [{"t": 0, "type": "touch", "player": "A"}, {"t": 3, "type": "fall", "what": "tower"}]
    assert json.loads(judge(tmp_path, events).stdout) == {
        "status": "fell", "loser": "A", "winner": None, "completed_turns": {"A": 0, "B": 0}}


@pytest.mark.parametrize("events, words", [
    ([{"t": 5, "type": "touch", "player": "A"}, {"t": 4, "type": "touch", "player": "A"}],
     ["event 1", "time order"]),
    ([{"t": 0, "type": "touch", "player": "Z"}], ["event 0", "'Z'"]),
    ([{"t": 0, "type": "jump", "player": "A"}], ["event 0", "type"]),
    ([{"t": "soon", "type": "touch", "player": "A"}], ["event 0", "t"]),
    ([{"t": 0, "type": "fall", "what": "sideways"}], ["event 0", "sideways"]),
])
def test_judge_bad_events_exit_2(tmp_path, events, words):
    out = judge(tmp_path, events)
    assert out.returncode == 2
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1
    for word in words:
        assert word in lines[0]
