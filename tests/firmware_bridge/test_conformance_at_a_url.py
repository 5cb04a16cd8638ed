"""The conformance suite pointed at a device by URL, as a firmware author runs it at the bench:
here the reference engine behind a pty, given only by its path. Tests that need the suite's
hands on the arm are skipped, and those that move it run only with --allow-motion."""

import subprocess
import sys
from pathlib import Path

import numpy as np

from firmware_bridge.device.hardware import DeviceConfig
from firmware_bridge.device.ideal_arm import IdealArm
from firmware_bridge.device.runner import DeviceRunner
from tests.conformance.devices import JOINTS

ROOT = Path(__file__).resolve().parents[2]


def run_suite(url, *extra):
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist",
                           "-p", "no:cacheprovider", "tests/conformance", "--device-url", url,
                           *extra], cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_suite_checks_a_device_given_by_its_url():
    arm = IdealArm(np.array([j.q_home for j in JOINTS]))
    with DeviceRunner(DeviceConfig(JOINTS, 0.04, 100.0), arm) as runner:
        still = run_suite(runner.path)
        moving = run_suite(runner.path, "--allow-motion")
    assert still.returncode == 0, still.stdout[-3000:]
    assert "skipped" in still.stdout and "failed" not in still.stdout
    assert moving.returncode == 0, moving.stdout[-3000:]
    skipped = lambda out: int(out.split(" skipped")[0].split()[-1]) if " skipped" in out else 0
    assert skipped(moving.stdout) < skipped(still.stdout)
