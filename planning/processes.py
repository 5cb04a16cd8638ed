"""Ending a child program (`subprocess.Popen`): asked first (SIGTERM), forced (SIGKILL) when it has
not ended within its time, reaped either way so no zombie is left. For the simulated cell's
`sim serve`, the viewer and QEMU alike."""

from __future__ import annotations

import subprocess


def stop_process(process: subprocess.Popen | None, timeout_s: float) -> None:
    """End `process` if it still runs: SIGTERM, up to `timeout_s` for it to end, then SIGKILL."""
    if process is None or process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
