"""Running `jenga-robot` as a user does, in tests: its child processes, and its output line by
line with a deadline."""

from __future__ import annotations

import queue
import subprocess
import threading
from pathlib import Path


def children(pid: int) -> list[int]:
    """The processes `pid` started (the simulated cell of a `play`)."""
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry.name))
    return out


class Lines:
    """A process's stdout, read in a thread so a wait can give up."""

    def __init__(self, process: subprocess.Popen):
        self.process = process
        self.seen: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, text: str, timeout_s: float) -> str:
        """The first line holding `text`; AssertionError if the output ends or time runs out."""
        while True:
            try:
                line = self._queue.get(timeout=timeout_s)
            except queue.Empty:
                raise AssertionError(f"no line with {text!r} in {timeout_s} s: {self.seen[-5:]}")
            if line is None:
                raise AssertionError(f"the output ended before {text!r}: {self.seen[-10:]}")
            self.seen.append(line)
            if text in line:
                return line

    def rest(self, timeout_s: float) -> list[str]:
        """Every line until the output ends."""
        while True:
            line = self._queue.get(timeout=timeout_s)
            if line is None:
                return self.seen
            self.seen.append(line)
