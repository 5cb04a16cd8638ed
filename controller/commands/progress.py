"""Progress for long commands, on stderr so stdout stays machine-readable."""

from __future__ import annotations

import sys


class Progress:
    """`Progress("checking")(done, total)` redraws one line on a terminal and prints a line per
    tenth otherwise (logs)."""

    def __init__(self, label: str, stream=None):
        self.label = label
        self.stream = stream or sys.stderr
        self._tty = hasattr(self.stream, "isatty") and self.stream.isatty()
        self._last_tenth = -1

    def __call__(self, done: int, total: int) -> None:
        if total <= 0:
            return
        fraction = done / total
        if self._tty:
            width = 30
            filled = int(width * fraction)
            self.stream.write(f"\r{self.label} [{'#' * filled}{'.' * (width - filled)}] "
                              f"{done}/{total}")
            if done >= total:
                self.stream.write("\n")
        else:
            tenth = int(fraction * 10)
            if tenth != self._last_tenth:
                self._last_tenth = tenth
                self.stream.write(f"{self.label}: {done}/{total}\n")
        self.stream.flush()
