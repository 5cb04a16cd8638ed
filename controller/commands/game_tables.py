"""The game and person suites' markdown: each policy's figures (with their 95 % intervals from
MIN_GAMES games), each pair of policies compared on the same seeds, and the games that did not
come back."""

from __future__ import annotations

from controller.bench.figures import MIN_GAMES

GAME_COLUMNS = ("stories_median", "stories_mean", "stories_max", "blocks_moved_median", "extraction_success",
                "probes_per_turn", "turn_time_s_median", "disturbed_mm_median", "taken_load_n_median",
                "endings", "falls_by_cause", "forced_moves")
PERSON_COLUMNS = ("stories_median", "stories_mean", "stories_max", "blocks_moved_median",
                  "extraction_success", "probes_per_turn", "turn_time_s_median", "ended_by")


def games_table(title: str, seeds: list[int], figures: dict, columns: tuple[str, ...],
                labels: dict[str, str]) -> str:
    """`title` opens a parenthesis that the seeds, the cap, the engine and the wall time close."""
    lines = [f"### {title}, seeds {seeds[0]}-{seeds[-1]}, "
             + (f"at most {figures['max_turns']} turns" if figures['max_turns'] else "whole games")
             + f", {figures['engine']}, wall {figures['wall_s']} s)", "",
             "| policy | " + " | ".join(columns) + " |",
             "| --- |" + " --- |" * len(columns)]
    for name, row in figures["policies"].items():
        intervals = row.get("ci95", {})
        lines.append(f"| {labels.get(name, name)} | "
                     + " | ".join(_cell(row[c], intervals.get(c)) for c in columns) + " |")
    if any("ci95" in row for row in figures["policies"].values()):
        lines += ["", "Brackets: 95 % interval, bootstrap over the seeds."]
    lines += _comparisons(figures["comparisons"], labels)
    lines += _lost(figures["lost"], figures.get("games_file"))
    return "\n".join(lines)


def _cell(value, interval: list | None) -> str:
    if isinstance(value, dict):
        return ", ".join(f"{k} {v}" for k, v in value.items()) or "none"
    return f"{value} [{interval[0]}, {interval[1]}]" if interval else str(value)


def _comparisons(comparisons: list[dict], labels: dict[str, str]) -> list[str]:
    if not comparisons:
        return []
    names = list(comparisons[0]["figures"])
    lines = ["", "Paired differences (first policy minus second, on the seeds both played; 95 % "
             f"interval, paired bootstrap over the seeds, from {MIN_GAMES} seeds; *settled*: the "
             "interval leaves 0 out):",
             "", "| policies | seeds | " + " | ".join(names) + " |",
             "| --- | --- |" + " --- |" * len(names)]
    for pair in comparisons:
        a, b = (labels.get(n, n).split(" (")[0] for n in pair["policies"])
        cells = []
        for name in names:
            figure = pair["figures"][name]
            if figure["ci95"] is None:
                cells.append(f"{figure['difference']:+g}")
                continue
            low, high = figure["ci95"]
            cells.append(f"{figure['difference']:+g} [{low:+g}, {high:+g}]"
                         + (" *settled*" if figure["decided"] else ""))
        lines.append(f"| {a} - {b} | {pair['seeds']} | " + " | ".join(cells) + " |")
    return lines


def _lost(lost: list[dict], games_file: dict | None) -> list[str]:
    lines = []
    if games_file:
        lines += ["", f"Games kept in {games_file['path']}: {games_file['games_kept']} under these "
                  f"settings" + (f", {games_file['lines_unused']} other lines not used"
                                 if games_file["lines_unused"] else "") + "."]
    if lost:
        lines += ["", f"**{len(lost)} games lost** (not in the figures; run again to play them"
                  + (", the games file keeps the others" if games_file else "") + "):"]
        lines += [f"- {g['policy']}, seed {g['seed']}: {g['reason']}" for g in lost]
    return lines
