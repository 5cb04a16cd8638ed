"""The C firmware's host build (`build/host/jenga-firmware`): the engine serving the protocol on
a pty with a simulated arm of its own, as a board serves it on its UART. The conformance suite,
given only its port (as at a bench), passes; the tests that need the suite's hands on the arm
skip."""

import subprocess

from hardware.firmware.build import build_host
from tests.firmware_bridge.test_conformance_at_a_url import run_suite


def test_the_host_build_passes_the_conformance_suite_at_its_port():
    binary = build_host() / "jenga-firmware"
    device = subprocess.Popen([str(binary)], stdout=subprocess.PIPE, text=True)
    try:
        line = device.stdout.readline().strip()
        assert line.startswith("serial: /dev/"), line
        result = run_suite(line.split(": ", 1)[1], "--allow-motion")
    finally:
        device.terminate()
        out, _ = device.communicate(timeout=10)
    assert result.returncode == 0, result.stdout[-3000:]
    assert " passed" in result.stdout and "failed" not in result.stdout
    assert device.returncode == 0 and "stopped" in out
