"""A sweep of games (the game and person suites): every game given to an engine
(controller/bench/engines.py), each kept as it finishes, so a long sweep loses nothing when it is
stopped and can be taken up again. The surprises bench keeps its trials the same way (`KeptFile`).

`--games FILE` keeps each finished game as a JSON line with the settings it was played under
(the suite's mode, the move cap, the cell file's and the code's digests). A sweep given the same
file plays only the games the file does not hold under the same settings; lines played under
other settings stay in the file, unused.
"""

from __future__ import annotations

import hashlib
import json
import time
from dataclasses import asdict
from pathlib import Path
from typing import Callable

from controller.bench.engines import Engine, InProcess, Lost, code_fingerprint
from controller.bench.figures import compare, summarise_each
from controller.bench.game import GameRecord

Key = Callable[[tuple], tuple[str, int]]      # a job's policy (or skill) and seed


def settings(mode: str, cell_path: str, max_turns: int | None) -> dict:
    """What a game's result depends on besides its seed and policy."""
    return {"mode": mode, "max_turns": max_turns, "code": code_fingerprint(),
            "cell": hashlib.sha256(Path(cell_path).read_bytes()).hexdigest()[:16]}


class KeptFile:
    """Finished runs of a long benchmark, one JSON line each: {"settings": ..., `name`: ...}, read
    back by `read` and told apart by `key`. Lines of other settings are left, unused."""

    def __init__(self, path: str | Path, settings: dict, read: Callable[[dict], object],
                 key: Callable[[object], tuple], name: str):
        self.path = Path(path)
        self.settings, self._key, self._name = settings, key, name
        self.kept: dict[tuple, object] = {}
        self.other = 0          # lines of other settings, or unreadable (a line cut by a kill)
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    entry = json.loads(line)
                    kept = read(entry[name]) if entry["settings"] == settings else None
                except (ValueError, KeyError, TypeError):
                    kept = None
                if kept is None:
                    self.other += bool(line.strip())
                else:
                    self.kept[key(kept)] = kept

    def add(self, kept) -> None:
        self.kept[self._key(kept)] = kept
        with self.path.open("a") as out:
            if out.tell() and not self._ends_a_line():
                out.write("\n")        # after a line a kill cut short, not onto it
            out.write(json.dumps({"settings": self.settings, self._name: asdict(kept)}) + "\n")

    def _ends_a_line(self) -> bool:
        with self.path.open("rb") as file:
            file.seek(-1, 2)
            return file.read(1) == b"\n"


class GamesFile(KeptFile):
    """Finished games, keyed by policy (or skill) and seed."""

    def __init__(self, path: str | Path, settings: dict):
        super().__init__(path, settings, GameRecord.from_dict, lambda g: (g.policy, g.seed), "game")


def measure(mode: str, cell_path: str, seeds: list[int], max_turns: int | None, names,
            play: Callable, work: list[tuple], key: Key, engine: Engine | None = None,
            games_path: str | None = None,
            progress: Callable[[int, int], None] | None = None) -> dict:
    """The game and person suites' one procedure: every job of `work` played by `engine` (this
    process if None), kept in `games_path` if given, and the sweep's JSON."""
    engine = engine or InProcess()
    started = time.monotonic()
    games_file = GamesFile(games_path, settings(mode, cell_path, max_turns)) if games_path else None
    games, lost = run(engine, play, work, key, games_file, progress)
    return report(mode, seeds, max_turns, games, lost, names, engine, games_file,
                  time.monotonic() - started, key)


def run(engine: Engine, play: Callable, work: list[tuple], key: Key,
        games_file: GamesFile | None = None,
        progress: Callable[[int, int], None] | None = None) -> tuple[list[GameRecord], list[Lost]]:
    """Every job of `work` (`key(job)`: its policy and seed) played by `engine`, but those
    `games_file` already holds; each game kept in the file as it finishes. Returns the games
    (those from the file first, then in the order they finished) and the games lost."""
    held = games_file.kept if games_file else {}
    games = [held[key(job)] for job in work if key(job) in held]
    todo = [job for job in work if key(job) not in held]
    lost: list[Lost] = []
    if progress and games:
        progress(len(games), len(work))
    for outcome in engine.run(play, todo):
        if isinstance(outcome, Lost):
            lost.append(outcome)
        else:
            games.append(outcome)
            if games_file:
                games_file.add(outcome)
        if progress:
            progress(len(games) + len(lost), len(work))
    return games, lost


def report(mode: str, seeds: list[int], max_turns: int | None, games: list[GameRecord],
           lost: list[Lost], names, engine: Engine, games_file: GamesFile | None, wall_s: float,
           key: Key) -> dict:
    """A sweep's JSON: the same whichever engine ran it, but for where and how long."""
    return {"mode": mode, "seeds": seeds, "max_turns": max_turns,
            "policies": summarise_each(games, names),
            "comparisons": compare(games, names),
            "lost": sorted(({"policy": key(one.job)[0], "seed": key(one.job)[1],
                             "reason": one.reason} for one in lost),
                           key=lambda one: (list(names).index(one["policy"]), one["seed"])),
            "engine": engine.description,
            "games_file": {"path": str(games_file.path), "games_kept": len(games_file.kept),
                           "lines_unused": games_file.other} if games_file else None,
            "wall_s": round(wall_s, 1)}
