"""The surprises benchmark's bookkeeping: how a trial's one-turn game is called, and the table of
outcomes per kind, counting only the trials whose surprise happened."""

import json

from controller.bench.surprises import OUTCOMES, SurpriseFigures, Trial, classify
from controller.solo import SoloResult
from controller.turn.report import TurnReport


def test_a_trial_is_handled_conceded_fell_or_stopped():
    assert classify(SoloResult(turns=[TurnReport(1, legal=True)])) == "handled"
    assert classify(SoloResult(turns=[TurnReport(1, legal=False)])) == "conceded"
    assert classify(SoloResult(turns=[TurnReport(1, legal=True)], fell=True)) == "fell"
    assert classify(SoloResult(turns=[TurnReport(1)], error="turn 1: the arm faulted")) == "stopped"
    assert classify(SoloResult()) == "stopped"
    # a fall is a fall, whatever error came with it
    assert classify(SoloResult(turns=[TurnReport(1)], fell=True, error="turn 1: fell")) == "fell"


def test_the_table_counts_outcomes_of_the_trials_that_met_their_surprise():
    figures = SurpriseFigures([Trial("bump", 301, "handled", True), Trial("bump", 302, "fell", True),
                               Trial("nudge", 301, "handled", False),
                               Trial("nudge", 302, "stopped", True)])
    rows = {row["surprise"]: row for row in figures.table()}
    assert rows["bump"] == {"surprise": "bump", "trials": 2, "met": 2, "handled": 1,
                            "conceded": 0, "fell": 1, "stopped": 0}
    assert rows["nudge"]["met"] == 1 and rows["nudge"]["stopped"] == 1
    assert rows["nudge"]["handled"] == 0 and set(OUTCOMES) <= set(rows["nudge"])
    assert figures.to_json()["trials"][0]["kind"] == "bump"


def test_trials_kept_in_a_file_are_not_run_again(tmp_path, monkeypatch):
    """A two-hour run stopped part way loses nothing: a second run with the same file runs only
    the trials it does not hold, and a line a kill cut short is passed over."""
    import controller.bench.surprises as surprises
    from hardware.cells import DEFAULT_CELL
    ran = []

    def run_trial(cell_path, kind, seed):
        ran.append((kind, seed))
        if len(ran) == 3:
            raise KeyboardInterrupt             # the run is stopped during its third trial
        return Trial(kind, seed, "handled", True, what=f"{kind} on {seed}")
    monkeypatch.setattr(surprises, "run_trial", run_trial)
    kept = tmp_path / "trials.jsonl"
    try:
        surprises.measure(str(DEFAULT_CELL), ["bump", "slip"], 2, trials_path=str(kept))
    except KeyboardInterrupt:
        pass
    with kept.open("a") as out:
        out.write('{"settings": {"mode": "surp')           # cut by a kill
    figures = surprises.measure(str(DEFAULT_CELL), ["bump", "slip"], 2, trials_path=str(kept))
    assert ran == [("bump", 301), ("slip", 301), ("bump", 302), ("bump", 302), ("slip", 302)]
    assert [(t.kind, t.seed) for t in figures.trials] == [("bump", 301), ("slip", 301),
                                                          ("bump", 302), ("slip", 302)]
    assert figures.trials[0].what == "bump on 301"
    assert figures.trials_file == {"path": str(kept), "lines_unused": 1, "trials_taken": 2}
    # the line cut short stays apart from the one written after it
    lines = kept.read_text().splitlines()
    assert len(lines) == 5 and lines[2].endswith('"mode": "surp')
    assert [json.loads(lines[i])["trial"]["kind"] for i in (3, 4)] == ["bump", "slip"]
