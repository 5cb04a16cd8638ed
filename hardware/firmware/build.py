"""Build the C firmware's host targets (`make -C hardware/firmware host`), once at a time: test
workers running in parallel share the build folder, so each builds under a lock."""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
BUILD = HERE / "build"


def build_host() -> Path:
    """The host build's folder, brought up to date; RuntimeError saying what is missing."""
    for tool in ("make", "gcc"):
        if shutil.which(tool) is None:
            raise RuntimeError(f"building the C firmware needs {tool} (Debian: build-essential)")
    BUILD.mkdir(exist_ok=True)
    with open(BUILD / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        result = subprocess.run(["make", "-s", "-C", str(HERE), "host"], capture_output=True,
                                text=True, timeout=600)
    if result.returncode != 0:
        raise RuntimeError(f"the C firmware did not build:\n{result.stdout}{result.stderr}")
    return BUILD / "host"
