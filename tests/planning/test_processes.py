"""A child program is ended (planning/processes.py): asked first, forced when it will not go,
reaped either way."""

import subprocess
import sys
import time

from planning.processes import stop_process


def _child(code: str) -> subprocess.Popen:
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert child.stdout.readline().strip() == "up"      # its signal handling is in place
    return child


def test_a_child_that_ends_when_asked_is_ended_by_sigterm():
    child = _child("import time; print('up', flush=True); time.sleep(60)")
    stop_process(child, timeout_s=5)
    assert child.returncode == -15


def test_a_child_that_ignores_sigterm_is_killed_after_its_time():
    child = _child("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
                   "print('up', flush=True); time.sleep(60)")
    started = time.monotonic()
    stop_process(child, timeout_s=0.5)
    assert child.returncode == -9 and 0.5 <= time.monotonic() - started < 10


def test_an_ended_child_or_none_is_left_as_it_is():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    stop_process(child, timeout_s=1)
    stop_process(None, timeout_s=1)
    assert child.returncode == 0
