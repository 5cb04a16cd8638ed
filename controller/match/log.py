"""The match log: one JSON object per line, appended and flushed to the disk before `append`
returns, so a controller killed at any moment leaves every event it had logged.

Each line is `{"seq": n, "event": kind, "wall": iso time, ...fields}`; the first is the `match`
header (log version, configuration, cell, opponent). World times (`"t"`) are in match time, the
world's own clock plus the offset the last `clock` event set (a restarted simulator's clock starts
again at 0; see controller/match/progress.py). A kill during a write can leave half a line at the
end: reading drops it (the event it held was never acted on), and resuming cuts it off the file
so later lines stay whole.
"""

from __future__ import annotations

import datetime
import json
import os
import threading
from pathlib import Path
from typing import Any

LOG_VERSION = 1


class MatchLogError(RuntimeError):
    """The log cannot be written or read back as a match."""


def _jsonable(value: Any) -> Any:
    if hasattr(value, "tolist"):          # numpy scalars and arrays
        return value.tolist()
    raise TypeError(f"cannot log a {type(value).__name__}")


def read_events(path: str | os.PathLike) -> list[dict[str, Any]]:
    """Every whole event in the log, in order. A torn last line is left out; a damaged line
    anywhere else is a MatchLogError naming it."""
    events, _ = _read(Path(path))
    return events


def _read(path: Path) -> tuple[list[dict[str, Any]], int]:
    """(events, length in bytes of the whole lines)."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise MatchLogError(f"no match log at {path}: give the log a match wrote "
                            f"(its report folder holds match.jsonl)") from None
    except OSError as exc:
        raise MatchLogError(f"cannot read the match log {path}: {exc.strerror}") from None
    events, good = [], 0
    lines = data.split(b"\n")
    for number, line in enumerate(lines, start=1):
        last = number == len(lines)
        if last and not line:
            break
        try:
            event = json.loads(line)
            if not isinstance(event, dict) or "event" not in event:
                raise ValueError("not an event")
        except ValueError:
            if last:           # torn by a kill mid-write: the event never happened
                break
            raise MatchLogError(f"line {number} of {path} is damaged (not a JSON event); the "
                                f"{number - 1} lines before it are intact: cut the file there "
                                f"to go on from them") from None
        if last:               # whole JSON, but the newline never made it to the disk
            break
        if event.get("seq") != len(events):
            raise MatchLogError(f"line {number} of {path} is event {event.get('seq')}, expected "
                                f"{len(events)}: lines are missing or out of order")
        events.append(event)
        good += len(line) + 1
    if events and events[0]["event"] != "match":
        raise MatchLogError(f"{path} does not start with a match header")
    if events and events[0].get("version") != LOG_VERSION:
        raise MatchLogError(f"{path} is a version {events[0].get('version')} match log; this "
                            f"program reads version {LOG_VERSION}")
    return events, good


def _taken(path: Path) -> str:
    return (f"{path} already holds a match; resume it with `jenga-robot play --resume {path}` or "
            f"choose another report folder")


class MatchLog:
    """An open log. `create` starts a new one (never over an existing match); `resume` opens one
    to go on appending, after the events already in it. Safe to append from several threads."""

    def __init__(self, path: Path, file, events: list[dict[str, Any]]):
        self.path = path
        self._file = file
        self._seq = len(events)
        self._lock = threading.Lock()
        # told of every event once it is on the disk (the viewer)
        self.listeners: list = []

    @staticmethod
    def check_free(path: str | os.PathLike) -> None:
        """Raise MatchLogError if `path` already holds a match (checked before a match starts;
        `create` checks again, atomically)."""
        if Path(path).exists():
            raise MatchLogError(_taken(Path(path)))

    @classmethod
    def create(cls, path: str | os.PathLike, header: dict[str, Any]) -> MatchLog:
        path = Path(path)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            file = open(path, "xb")
        except FileExistsError:
            raise MatchLogError(_taken(path)) from None
        except OSError as exc:
            raise MatchLogError(f"cannot create the match log {path}: {exc.strerror}") from None
        log = cls(path, file, [])
        log.append("match", version=LOG_VERSION, **header)
        return log

    @classmethod
    def resume(cls, path: str | os.PathLike) -> tuple[MatchLog, list[dict[str, Any]]]:
        """The log opened for appending, and the events already in it (a torn last line is cut
        off the file)."""
        path = Path(path)
        events, good = _read(path)
        if not events:
            raise MatchLogError(f"{path} holds no match header: nothing to resume")
        try:
            file = open(path, "r+b")
            file.truncate(good)
            file.seek(good)
        except OSError as exc:
            raise MatchLogError(f"cannot append to the match log {path}: {exc.strerror}") from None
        return cls(path, file, events), events

    def append(self, event: str, **fields: Any) -> dict[str, Any]:
        """Write one event and force it to the disk; returns it as written."""
        with self._lock:
            if self._file is None:
                raise MatchLogError(f"the match log {self.path} is closed")
            record = {"seq": self._seq, "event": event,
                      "wall": datetime.datetime.now().astimezone().isoformat(timespec="milliseconds"),
                      **fields}
            line = json.dumps(record, default=_jsonable, separators=(",", ":")) + "\n"
            try:
                self._file.write(line.encode())
                self._file.flush()
                os.fsync(self._file.fileno())
            except OSError as exc:
                raise MatchLogError(f"cannot write the match log {self.path}: {exc.strerror}; "
                                    f"the match stops so nothing goes unrecorded") from None
            self._seq += 1
            written = json.loads(line)
        for listener in self.listeners:
            listener(written)
        return written

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None

    def __enter__(self) -> MatchLog:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
