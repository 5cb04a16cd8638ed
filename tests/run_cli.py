"""Run `jenga-robot ARGS` inside the test's own process, with what it prints captured: the same
`controller.cli.main` the console script calls, without paying a Python start-up (seconds on a
busy machine) for a command that answers at once. Tests of what a separate process shows (the
console script, signals, start-up imports) start one."""

from __future__ import annotations

import contextlib
import io
import os
import signal
from dataclasses import dataclass


@dataclass(frozen=True)
class Ran:
    returncode: int
    stdout: str
    stderr: str


def jenga_robot(*args: str, cwd: str | os.PathLike | None = None) -> Ran:
    from controller.cli import main
    out, err = io.StringIO(), io.StringIO()
    sigterm = signal.getsignal(signal.SIGTERM)     # main() sets its own
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                contextlib.chdir(cwd or os.getcwd()):
            try:
                code = main([str(a) for a in args])
            except SystemExit as exc:              # argparse's refusals
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        signal.signal(signal.SIGTERM, sigterm)
    return Ran(code, out.getvalue(), err.getvalue())
