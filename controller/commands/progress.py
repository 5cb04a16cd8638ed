"""Progress for long commands: a bar with the rate and an ETA (tqdm) on stderr, so stdout stays
machine-readable; quiet when stderr is not a terminal (a log, a pipe, CI)."""

from __future__ import annotations

import sys

from tqdm import tqdm


class Progress:
    """`Progress("checking")(done, total)`, called as work gets done: the bar appears with the
    first call and closes when `done` reaches `total`."""

    def __init__(self, label: str, stream=None):
        self.label = label
        self.stream = stream or sys.stderr
        self._bar: tqdm | None = None

    def __call__(self, done: int, total: int) -> None:
        if total <= 0:
            return
        if self._bar is None or self._bar.total != total:
            self.close()
            # disable=None: no bar unless the stream is a terminal
            self._bar = tqdm(total=total, desc=self.label, file=self.stream, disable=None,
                             unit="step", dynamic_ncols=True, leave=True)
        self._bar.update(done - self._bar.n)
        if done >= total:
            self.close()

    def close(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
