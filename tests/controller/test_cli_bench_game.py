"""`jenga-robot bench --suite game` in its fast mode: each policy's figures in the JSON, the table
on stdout, the mode and the wall time said. (Two policies, the rule-based baseline and the oracle, one turn each, to keep the suite short;
the robot's own policy plays in tests/hardware/test_bench_hands.py's physics and the robot turns'
tests.)"""

import json
import subprocess
import sys

from tests.run_cli import jenga_robot

FIGURES = ("stories_median", "stories_max", "blocks_moved_median", "extraction_success",
           "probes_per_turn", "turn_time_s_median", "endings", "falls_by_cause")


def test_game_benchmark_reports_every_policy(tmp_path):
    out = tmp_path / "game.json"
    run = subprocess.run([sys.executable, "-m", "controller.cli", "bench", "--suite", "game",
                          "--seeds", "1", "--first-seed", "3", "--max-turns", "1",
                          "--policies", "oracle,middle-first",
                          "--json", str(out)],
                         capture_output=True, text=True, timeout=600)
    assert run.returncode == 0, run.stderr
    figures = json.loads(out.read_text())
    assert figures["mode"] == "fast" and figures["wall_s"] > 0 and figures["max_turns"] == 1
    assert list(figures["policies"]) == ["middle-first", "oracle"]
    for name, row in figures["policies"].items():
        assert all(key in row for key in FIGURES), name
        assert row["games"] == 1 and len(row["games_detail"][0]["turns"]) == 1
        assert 0.0 <= row["extraction_success"] <= 1.0
        assert sum(row["endings"].values()) == 1
        assert f"| {name} " in run.stdout
    assert "| oracle (knows the true loads; not the robot) |" in run.stdout
    assert figures["policies"]["oracle"]["probes_per_turn"] == 0.0
    assert figures["policies"]["middle-first"]["probes_per_turn"] >= 1.0
    # progress is a bar on a terminal; a pipe (as here) gets none
    assert "fast mode" in run.stdout and "bench game" not in run.stderr


def test_an_unknown_policy_is_refused_before_anything_runs():
    run = jenga_robot("bench", "--suite", "game", "--policies", "ours,cautious")
    assert run.returncode != 0 and "unknown policy cautious" in run.stderr


def test_the_oracle_is_refused_in_the_full_pipeline():
    run = jenga_robot("bench", "--suite", "game", "--full", "--policies", "oracle")
    assert run.returncode != 0 and "only in the fast mode" in run.stderr


def test_games_are_kept_and_a_second_run_takes_them_up(tmp_path):
    """`--games` keeps each game as it finishes, so the same command again plays nothing and gives
    the same figures."""
    games, first, second = tmp_path / "games.jsonl", tmp_path / "1.json", tmp_path / "2.json"
    common = ("bench", "--suite", "game", "--seeds", "2", "--first-seed", "4", "--max-turns", "1",
              "--policies", "oracle", "--jobs", "2", "--games", str(games))
    run = jenga_robot(*common, "--json", str(first))
    assert run.returncode == 0, run.stderr
    assert f"Games kept in {games}: 2" in run.stdout
    run = jenga_robot(*common, "--json", str(second))
    assert run.returncode == 0, run.stderr
    played, again = json.loads(first.read_text()), json.loads(second.read_text())
    assert played["engine"] == "2 local processes"
    assert played["policies"] == again["policies"] and again["wall_s"] < played["wall_s"]
    assert len(games.read_text().splitlines()) == 2


def test_a_ray_address_nobody_answers_is_refused_in_seconds():
    run = jenga_robot("bench", "--suite", "game", "--seeds", "1", "--ray", "127.0.0.1:1")
    assert run.returncode != 0 and "no Ray cluster answers at 127.0.0.1:1" in run.stderr
    run = jenga_robot("bench", "--suite", "game", "--full", "--ray", "local")
    assert run.returncode != 0 and "the full pipeline keeps real time" in run.stderr
