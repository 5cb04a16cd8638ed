"""`jenga-robot bench --suite person`: the simulated person plays a solo game through the physics
and the benchmark reports it (one practised turn, to keep the suite short)."""

import json

from controller.cli import main


def test_the_person_benchmark_plays_and_reports_a_turn(tmp_path, capsys):
    out = tmp_path / "person.json"
    assert main(["bench", "--suite", "person", "--skills", "1.0", "--seeds", "1", "--first-seed", "2",
                 "--max-turns", "1", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    row = figures["policies"]["person 1"]
    (game,) = row["games_detail"]
    (turn,) = game["turns"]
    assert game["ended_by"] == "move cap" and turn["legal"] and not turn["fell"]
    assert row["extraction_success"] == 1.0 and row["probes_per_turn"] >= 1
    assert turn["time_s"] > 10.0              # the turn and its settling window, in world time
    assert "| person 1 |" in capsys.readouterr().out
