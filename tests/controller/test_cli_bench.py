"""`jenga-robot bench --suite link [--firmware python|c]` prints its figures and writes them as
JSON."""

import json
import subprocess
import sys

import pytest

from hardware.firmware.build import build_host


@pytest.mark.parametrize("firmware", ["python", "c"])
def test_link_benchmark_reports_every_figure(tmp_path, firmware):
    if firmware == "c":
        build_host()
    out = tmp_path / "link.json"
    run = subprocess.run([sys.executable, "-m", "controller.cli", "bench", "--suite", "link",
                          "--firmware", firmware, "--json", str(out)], capture_output=True,
                         text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    figures = json.loads(out.read_text())
    assert figures["firmware"] == firmware
    for key in ("rtt_ms_median", "rtt_ms_p99", "telemetry_hz", "guard_stop_ms",
                "frames_corrupt_detected"):
        assert key in figures and key in run.stdout
    assert figures["frames_corrupt_detected"] == figures["frames_corrupt_injected"] > 0
    assert figures["telemetry_hz"] >= 250 * 0.95
    assert figures["guard_stop_ms"] <= 1.0
    assert set(figures["fault_detect_ms"]) == {"corrupt", "drop", "stall", "port_closed", "reset"}
