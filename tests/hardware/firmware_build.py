"""Builds the C firmware's host targets for the tests, into a folder of the test session's own
(parallel workers must not write the same files)."""

from __future__ import annotations

import ctypes
import shutil
import subprocess
from pathlib import Path

FIRMWARE = Path(__file__).resolve().parents[2] / "hardware" / "firmware"


def build(target: str, into: Path) -> Path:
    """`make` the firmware's `target` (a path under the build folder) into `into`; its path."""
    if shutil.which("make") is None or shutil.which("gcc") is None:
        raise AssertionError("the C firmware's tests need make and gcc (Debian: build-essential)")
    result = subprocess.run(["make", "-s", "-C", str(FIRMWARE), f"BUILD={into}", f"{into}/{target}"],
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    return into / target


def core_library(into: Path) -> ctypes.CDLL:
    return ctypes.CDLL(str(build("host/libjrcore.so", into)))
