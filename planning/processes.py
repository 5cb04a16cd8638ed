"""Child processes: ending a child program (`subprocess.Popen`), asked first (SIGTERM), forced
(SIGKILL) when it has not ended within its time, reaped either way so no zombie is left (the
simulated cell's `sim serve`, the viewer, QEMU); and a worker process's signals (the planning
workers, the benchmark's games)."""

from __future__ import annotations

import signal
import subprocess


def leave_signals_to_parent() -> None:
    """In a worker process: Ctrl-C is the parent's to handle (it stops its workers and unwinds),
    and SIGTERM, which the parent sends to stop a worker, just ends it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


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
