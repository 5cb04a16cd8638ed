"""A match's report folder, drawn from its log alone: `summary.txt` (winner, score, each round,
the turns and their times), `probes-rR-tNN.png` (every probe's force trace of each robot turn) and
`tower-rR-tNN-PLAYER.png` (the tower after each turn). `jenga-robot report LOG` draws it again for
any log, a match cut short or resumed included.
"""

from __future__ import annotations

import datetime
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from controller.match.progress import MatchProgress
from controller.match.turns import LoggedTurn, logged_turns
from controller.turn.report import Recovery
from controller.match.plots import plot_probes, plot_tower
from controller.wording import plural


@dataclass
class Report:
    summary: str
    files: list[Path] = field(default_factory=list)


def write_report(folder: Path, events: list[dict[str, Any]], log_path: Path | None = None) -> Report:
    """Write the report of the match `events` (a whole log, header first) into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    turns = logged_turns(events)
    files = []
    for turn in turns:
        stem = f"r{turn.round}-t{turn.number:02d}"
        if turn.probes:
            files.append(plot_probes(turn, folder / f"probes-{stem}.png"))
        files.append(plot_tower(turn, folder / f"tower-{stem}-{turn.player}.png"))
    summary = summarise(events, turns, log_path or folder / "match.jsonl")
    path = folder / "summary.txt"
    path.write_text(summary + "\n")
    return Report(summary, [path] + files)


def summarise(events: list[dict[str, Any]], turns: list[LoggedTurn], log_path: Path) -> str:
    progress = MatchProgress.from_events(events)
    match = progress.match
    lines = [f"winner: {match.winner if progress.over else '(the match is not over)'}",
             "score: " + ", ".join(f"{side} {points}" for side, points in match.standings()),
             f"scoring: {progress.config.scoring.value}", _rounds(progress)]
    for n, result in enumerate(match.results, start=1):
        lines.append(f"  round {n}: {result.status.value}, loser {result.loser}, winner "
                     f"{result.winner} ({result.reason})")
    for turn in turns:
        took = f", {turn.duration_s:.0f} s" if turn.duration_s is not None else ""
        probes = f", {plural(len(turn.probes), 'probe')}" if turn.probes else ""
        ended = "" if turn.ended == "ended" else f" [{turn.ended}]"
        lines.append(f"  {turn.label} {turn.move}{probes}{took}{ended}")
        lines += [f"    referee: {v}" for v in turn.violations]
    robot = [t.duration_s for t in turns if t.duration_s is not None]
    if robot:
        lines.append(f"robot turns: {len(robot)}, median {statistics.median(robot):.1f} s")
    recoveries = robot_recoveries(events)
    if robot:
        # said when there were none too: a reader should not wonder whether they were counted
        lines.append(f"robot recoveries: {len(recoveries) or 'none'} (surprises its turns got "
                     f"over)")
        lines += [f"  {text}" for text in recoveries]
    resumed = sum(1 for e in events if e.get("event") == "note"
                  and str(e.get("text", "")).startswith("resumed"))
    if resumed:
        lines.append(f"resumed {resumed} time{'s' if resumed > 1 else ''} from the log")
    lines.append(f"match time (world): {world_span(events):.0f} s, wall clock: "
                 f"{wall_span(events):.0f} s")
    lines.append(f"log: {log_path}")
    return "\n".join(lines)


def robot_recoveries(events: list[dict[str, Any]]) -> list[str]:
    """Every surprise the robot's turns got over, as its notes told them (controller/turn/
    report.py Recovery), in the order they came."""
    kinds = tuple(f"robot: {kind}: " for kind in Recovery)
    return [str(e["text"])[len("robot: "):] for e in events
            if e.get("event") == "note" and str(e.get("text", "")).startswith(kinds)]


def _rounds(progress: MatchProgress) -> str:
    finished = len(progress.match.results)
    playing = f", round {progress.rounds_started} in play" if progress.in_round else ""
    return f"rounds: {finished} finished{playing}"


def world_span(events) -> float:
    """World seconds from the match's first timed event to its last."""
    times = [float(e["t"]) for e in events if "t" in e]
    return max(times) - min(times) if times else 0.0


def wall_span(events) -> float:
    """Wall-clock seconds from the match's first logged event to its last."""
    stamps = [datetime.datetime.fromisoformat(e["wall"]) for e in events if "wall" in e]
    return (max(stamps) - min(stamps)).total_seconds() if stamps else 0.0
