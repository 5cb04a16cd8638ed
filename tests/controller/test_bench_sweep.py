"""A sweep keeps each game as it finishes (controller/bench/sweep.py): a sweep given the same
games file plays only what the file does not hold under the same settings, a line cut by a kill
or played under other settings is left unused, and the figures and the comparison come from
every game, kept or new."""

import json

from controller.bench import sweep
from controller.bench.engines import InProcess, Lost
from controller.bench.figures import compare, summarise_each
from controller.bench.game import GameRecord
from tests.controller import fake_games

SETTINGS = {"mode": "fast", "max_turns": None, "code": "c0de", "cell": "ce11"}


def key(job):
    return job[2], job[1]


def test_a_second_sweep_plays_only_the_games_the_file_lacks(tmp_path):
    path = tmp_path / "games.jsonl"
    work = [(str(tmp_path), seed, "ours") for seed in (1, 2, 3)]
    first, lost = sweep.run(InProcess(), fake_games.quick, work[:2], key,
                            sweep.GamesFile(path, SETTINGS))
    assert not lost and len(path.read_text().splitlines()) == 2
    seen = []
    games, _ = sweep.run(InProcess(), fake_games.quick, work, key,
                         sweep.GamesFile(path, SETTINGS), lambda done, total: seen.append(done))
    assert sorted(g.seed for g in games) == [1, 2, 3]
    assert [fake_games.attempts(tmp_path, s) for s in (1, 2, 3)] == [1, 1, 1]
    assert seen == [2, 3]                      # the kept games count as done from the start
    assert [g.outcome() for g in games[:2]] == [g.outcome() for g in first]


def test_lines_of_other_settings_or_cut_short_are_left_unused(tmp_path):
    path = tmp_path / "games.jsonl"
    game = fake_games.quick((str(tmp_path), 4, "ours"))
    sweep.GamesFile(path, {**SETTINGS, "code": "other"}).add(game)
    with path.open("a") as out:
        out.write(json.dumps({"settings": SETTINGS, "game": {"policy": "ours"}})[:30] + "\n")
    kept = sweep.GamesFile(path, SETTINGS)
    assert kept.kept == {} and kept.other == 2
    kept.add(game)
    again = sweep.GamesFile(path, SETTINGS)
    assert list(again.kept) == [("ours", 4)] and again.other == 2
    assert again.kept[("ours", 4)] == game


def test_a_game_added_after_a_line_cut_without_its_end_is_kept(tmp_path):
    path = tmp_path / "games.jsonl"
    path.write_text(json.dumps({"settings": SETTINGS, "game": {"policy": "ours"}})[:40])
    sweep.GamesFile(path, SETTINGS).add(fake_games.quick((str(tmp_path), 7, "ours")))
    kept = sweep.GamesFile(path, SETTINGS)
    assert list(kept.kept) == [("ours", 7)] and kept.other == 1


def test_a_record_reads_back_as_it_was_written():
    turn = {"number": 1, "source": [3, 0], "target": [18, 1], "probes": 2, "probed": [[3, 0]],
            "let_go": 0, "legal": True, "fell": False, "cause": None, "time_s": 12.5,
            "stories": "18 1/3", "taken_after_all": False, "wall_s": 3.0}
    data = {"policy": "ours", "seed": 9, "mode": "fast", "start_stories": "18", "turns": [turn],
            "stories": "18 1/3", "ended_by": "move cap", "wall_s": 4.0, "blocks_moved": 1}
    record = GameRecord.from_dict(data)
    assert record.blocks_moved == 1 and record.turns[0].probed == [[3, 0]]
    assert "wall_s" not in record.outcome() and "wall_s" not in record.outcome()["turns"][0]
    assert record.wall_s == 4.0 and record.turns[0].wall_s == 3.0


def test_the_figures_compare_policies_on_the_seeds_both_played(tmp_path):
    games = [fake_games.quick((str(tmp_path), seed, name)) for name in ("a", "b")
             for seed in range(12)]
    games = [g for g in games if not (g.policy == "b" and g.seed == 0)]   # b lost seed 0
    for g in games:
        if g.policy == "a":
            g.stories = "20"
    figures = summarise_each(games, ["a", "b", "c"])
    assert list(figures) == ["a", "b"] and figures["a"]["games"] == 12
    assert figures["a"]["ci95"]["stories_median"] == [20.0, 20.0]
    (pair,) = compare(games, ["a", "b", "c"])
    assert pair["policies"] == ["a", "b"] and pair["seeds"] == 11
    stories = pair["figures"]["stories_mean"]
    assert stories["difference"] == round(20 - (18 + 1 / 3), 3) and stories["decided"]
    assert pair["figures"]["probes_per_turn"]["difference"] == 0 and not \
        pair["figures"]["probes_per_turn"]["decided"]


def test_lost_games_are_named_and_left_out(tmp_path):
    died = "its worker process died 2 times (exit code -9)"
    lost = [Lost(("cell", 6, "ours", None), died), Lost(("cell", 5, "random", None), died),
            Lost(("cell", 5, "ours", None), died)]
    figures = sweep.report("fast", [5, 6], None, [], lost, ["ours", "random"], InProcess(), None,
                            1.0, lambda job: (job[2], job[1]))
    assert figures["policies"] == {} and figures["lost"] == [
        {"policy": "ours", "seed": 5, "reason": died}, {"policy": "ours", "seed": 6, "reason": died},
        {"policy": "random", "seed": 5, "reason": died}]
