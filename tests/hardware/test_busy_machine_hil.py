"""A busy machine plays slower, never stops: the simulated cell in a process of its own (as `play`
starts it) and a host driving its arm through the pty, beside a CPU burner per core and a second
simulated cell. Every deadline of a simulated cell counts device time; the wall clock only finds a
process that is gone."""

import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tests.hardware.processes import Lines

pytestmark = pytest.mark.hil

STARVED_S = 2.0         # how long the machine keeps a process from running
SERVE = [sys.executable, "-u", "-m", "controller.cli", "sim", "serve", "--no-cameras"]


def _serve(seed: int) -> tuple[subprocess.Popen, str]:
    proc = subprocess.Popen(SERVE + ["--seed", str(seed)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"sim serve ended: {proc.stderr.read()}")
        match = re.match(r"serial: (\S+)", line.strip())
        if match:
            return proc, match.group(1)


@pytest.fixture
def busy():
    """A burner per core and a second simulated cell, for the test's length."""
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"])
               for _ in range(os.cpu_count() or 2)]
    second, _ = _serve(2)
    yield
    for proc in (*burners, second):
        proc.terminate()
        proc.wait(timeout=10)


def test_a_simulated_arm_beside_a_burner_per_core_and_a_second_cell_never_stops(busy):
    """Beside the load, the machine keeps the host from running for 2 s (as a busy machine did
    to `play`: "no answer to Heartbeat ... within 80 ms", the client's wall-clock backstop), then
    the simulated cell (as it did: "nothing from the device on /dev/pts/0 for 507 ms"). The world
    waits for its host, the host for its cell: the moves go on, slower."""
    cell, serial = _serve(1)
    host = subprocess.Popen([sys.executable, "-u", "-m", "tests.hardware.busy_host", serial],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = Lines(host)
        for moving, starved in ((2, host), (5, cell)):
            lines.wait_for(f"moving {moving}", timeout_s=120)
            time.sleep(0.3)                        # in the move
            os.kill(starved.pid, signal.SIGSTOP)
            time.sleep(STARVED_S)
            os.kill(starved.pid, signal.SIGCONT)
        lines.wait_for("done", timeout_s=120)
        assert host.wait(timeout=30) == 0
    finally:
        for proc in (host, cell):
            if proc.poll() is None:
                os.kill(proc.pid, signal.SIGCONT)
                proc.terminate()
                proc.wait(timeout=10)
