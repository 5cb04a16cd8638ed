"""The game benchmarks' figures (the game and person suites): each policy's over its games, with
95 % intervals (bootstrap over seeds), and each pair of policies compared on the seeds both
played (paired), so "ours beats random" is a claim with a margin, not two medians.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import asdict
from itertools import combinations

import numpy as np

from controller.bench import stats
from controller.bench.game import ENDINGS, GameRecord, stories_value

# Fewer games than this get no interval: below it the bootstrap's 95 % interval held the truth
# less than 94 times in 100 (docs/benchmarks.md).
MIN_GAMES = 10
# The figures given with an interval: each a statistic of the per-game columns below.
INTERVAL_FIGURES: dict[str, stats.Statistic] = {
    "stories_median": stats.median_of("stories"),
    "stories_mean": stats.mean_of("stories"),
    "blocks_moved_median": stats.median_of("blocks_moved"),
    # the turns that moved a block (TurnRecord.moved_a_block) over all turns, pooled
    "extraction_success": stats.ratio_of("blocks_moved", "turns"),
    "probes_per_turn": stats.ratio_of("probes", "turns"),
}


def columns(games: list[GameRecord]) -> dict[str, np.ndarray]:
    """Each game's numbers the figures are made of, one entry per game, in the order given."""
    return {
        "stories": np.array([stories_value(g.stories) for g in games]),
        "blocks_moved": np.array([g.blocks_moved for g in games], float),
        "turns": np.array([len(g.turns) for g in games], float),
        "probes": np.array([sum(t.probes for t in g.turns) for g in games], float),
    }


def summarise(games: list[GameRecord]) -> dict:
    """The figures of one policy over its games; from MIN_GAMES games, `ci95`: each interval
    figure's 95 % interval, resampling the games."""
    table = columns(games)
    turns = [t for g in games for t in g.turns]
    good = [t for t in turns if t.moved_a_block]
    causes = Counter(t.cause for t in turns if t.fell)
    endings = Counter(g.ending for g in games)
    out = {"games": len(games)}
    out.update({name: round(stats.point(statistic, table), 3)
                for name, statistic in INTERVAL_FIGURES.items()})
    out.update({
        "stories_max": round(float(max(table["stories"])), 2),
        "turn_time_s_median": round(float(np.median([t.time_s for t in good])), 1) if good else None,
        # what the truth says the turns that moved a block did (controller/bench/witness.py)
        "disturbed_mm_median": _median([t.disturbed_mm for t in good]),
        "taken_load_n_median": _median([t.taken_load_n for t in good]),
        "endings": {kind: endings[kind] for kind in ENDINGS if endings[kind]},
        "falls_by_cause": dict(sorted(causes.items())),
        "ended_by": dict(sorted(Counter(g.ended_by for g in games).items())),
        # forced moves (no block seemed to come out) by how they ended: taken, fell, illegal
        "forced_moves": dict(sorted(Counter(t.forced_end for t in turns if t.forced).items())),
        "recoveries": dict(sorted(Counter(kind for t in turns for kind in t.recoveries).items())),
    })
    if len(games) >= MIN_GAMES:
        out["ci95"] = {name: _pair(stats.interval(statistic, table))
                       for name, statistic in INTERVAL_FIGURES.items()}
    out["games_detail"] = [{**asdict(g), "blocks_moved": g.blocks_moved} for g in games]
    return out


def summarise_each(games: list[GameRecord], names) -> dict:
    """The figures of each policy of `names` over its games, in seed order (a policy with no game
    left out)."""
    out = {}
    for name in names:
        mine = sorted((g for g in games if g.policy == name), key=lambda g: g.seed)
        if mine:
            out[name] = summarise(mine)
    return out


def compare(games: list[GameRecord], names) -> list[dict]:
    """Each pair of policies of `names` (in that order: the first minus the second) on the seeds
    both played: each interval figure's difference with its paired 95 % interval (from MIN_GAMES
    seeds; None below), and whether the interval settles the difference's sign."""
    by_policy = {name: {g.seed: g for g in games if g.policy == name} for name in names}
    out = []
    for a, b in combinations([n for n in names if by_policy[n]], 2):
        seeds = sorted(set(by_policy[a]) & set(by_policy[b]))
        if not seeds:
            continue
        first = columns([by_policy[a][s] for s in seeds])
        second = columns([by_policy[b][s] for s in seeds])
        figures = {}
        for name, statistic in INTERVAL_FIGURES.items():
            if len(seeds) < MIN_GAMES:
                value = stats.point(statistic, first) - stats.point(statistic, second)
                figures[name] = {"difference": round(value, 3), "ci95": None, "decided": False}
                continue
            difference = stats.paired(statistic, first, second).rounded()
            figures[name] = {"difference": difference.value, "ci95": [difference.low, difference.high],
                             "decided": difference.decided}
        out.append({"policies": [a, b], "seeds": len(seeds), "figures": figures})
    return out


def _median(values: list[float | None]) -> float | None:
    """The median of the values that were measured; None when none was."""
    known = [v for v in values if v is not None]
    return round(float(np.median(known)), 2) if known else None


def _pair(interval: stats.Interval) -> list[float]:
    rounded = interval.rounded()
    return [rounded.low, rounded.high]
