"""What every command shares: reading input files and failing with one clear line."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

EXIT_OK = 0
EXIT_FAILED = 1
EXIT_BAD_INPUT = 2


EXIT_TERMINATED = 143      # 128 + SIGTERM, as a shell reports a process the signal ended


class Terminated(KeyboardInterrupt):
    """SIGTERM (`timeout`, `kill`, a service manager) arrived: a command unwinds as it does for
    Ctrl-C, so the arm is left stopped and the match report is still drawn."""


def interruption(exc: KeyboardInterrupt) -> tuple[str, int]:
    """How a command was stopped, in words, and its exit status: SIGTERM or Ctrl-C."""
    if isinstance(exc, Terminated):
        return "terminated (SIGTERM)", EXIT_TERMINATED
    return "interrupted at the keyboard", 130


class CommandError(Exception):
    """Ends a command with one line on stderr and an exit code."""

    def __init__(self, message: str, exit_code: int = EXIT_BAD_INPUT):
        super().__init__(message)
        self.exit_code = exit_code


def read_json(path: str, what: str) -> Any:
    """Parse a JSON file, or raise CommandError saying which file and why."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise CommandError(f"cannot read {what} {path}: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise CommandError(f"{what} {path} is not JSON: {exc.msg} at line {exc.lineno} "
                           f"column {exc.colno}") from None


def print_json(obj: Any) -> None:
    json.dump(obj, sys.stdout)
    sys.stdout.write("\n")
    sys.stdout.flush()
