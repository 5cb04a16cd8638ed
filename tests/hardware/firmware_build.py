"""The C firmware's host build, for the tests that hold it against the reference."""

from __future__ import annotations

import ctypes
from pathlib import Path

from hardware.firmware.build import build_host


def build(target: str) -> Path:
    """A target of the host build (`test_framing`, `libjrcore.so`), built if need be."""
    return build_host() / target


def core_library() -> ctypes.CDLL:
    return ctypes.CDLL(str(build("libjrcore.so")))
