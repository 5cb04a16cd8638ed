"""`jenga-robot bench --suite link [--firmware python|c|qemu]` prints its figures and writes them as
JSON."""

import json

import pytest

from hardware.firmware.build import build_host


@pytest.mark.parametrize("firmware", ["python", "c"])
def test_link_benchmark_reports_every_figure(tmp_path, monkeypatch, capsys, firmware):
    """The command in this process with fewer runs of each measurement (the whole benchmark is
    `bench --suite link`). The device's engine runs in a thread of this process, which a test
    suite beside it can keep from running for longer than the product's 80 ms silence limit: the
    host here allows half a second (the stall fault's latency is then that)."""
    import functools

    import controller.bench.link as link
    from controller.cli import main
    if firmware == "c":
        build_host()
    monkeypatch.setattr(link, "measure", functools.partial(
        link.measure, rtt_samples=100, telemetry_s=1.0, guard_runs=5, fault_runs=4, slack_s=0.5))
    out = tmp_path / "link.json"
    assert main(["bench", "--suite", "link", "--firmware", firmware, "--json", str(out)]) in (0, None)
    printed = capsys.readouterr().out
    figures = json.loads(out.read_text())
    assert figures["firmware"] == firmware
    for key in ("rtt_ms_median", "rtt_ms_p99", "telemetry_hz", "guard_stop_ms",
                "frames_corrupt_detected"):
        assert key in figures and key in printed
    assert figures["frames_corrupt_detected"] == figures["frames_corrupt_injected"] == 4
    assert figures["telemetry_hz"] >= 250 * 0.95
    assert figures["guard_stop_ms"] <= 1.0
    assert set(figures["fault_detect_ms"]) == {"corrupt", "drop", "stall", "port_closed", "reset"}
    assert figures["fault_detect_ms"]["stall"]["median"] >= 450     # the host's limit, not 80 ms


def test_link_benchmark_of_the_c_binary_in_qemu_reports_the_board_too(tmp_path, monkeypatch,
                                                                      capsys):
    """The same command for the Cortex-M build in QEMU, in this process with fewer runs of each
    measurement (the whole benchmark is `bench --suite link --firmware qemu`), and the host's
    limits (and the board's watchdog) a second: QEMU is a third busy process on the suite's two
    cores, and a fresh clone's run once waited a second of wall time for a heartbeat's answer."""
    import functools

    import controller.bench.link as link
    from controller.cli import main
    monkeypatch.setattr(link, "measure", functools.partial(
        link.measure, rtt_samples=100, telemetry_s=1.0, guard_runs=3, fault_runs=2, slack_s=1.0))
    out = tmp_path / "link.json"
    assert main(["bench", "--suite", "link", "--firmware", "qemu", "--json", str(out)]) in (0, None)
    printed = capsys.readouterr().out
    figures = json.loads(out.read_text())
    assert figures["firmware"] == "qemu" and figures["clock"] == "host"
    assert figures["frames_corrupt_detected"] == figures["frames_corrupt_injected"] == 2
    # the guard stops in the tick that reads the force
    assert figures["telemetry_hz"] >= 250 * 0.95 and figures["guard_stop_ms_max"] == 0.0
    assert set(figures["fault_detect_ms"]) == {"corrupt", "drop", "stall", "port_closed", "reset"}
    # what the bytes or the port tell is found at once; a stalled line by the host's silence limit
    # (since the last frame, which came a little before the stall was asked for)
    assert all(0 <= v["median"] < 100 for kind, v in figures["fault_detect_ms"].items()
               if kind != "stall")
    assert figures["fault_detect_ms"]["stall"]["median"] >= 950
    board = figures["board"]
    assert 0 < board["worst_tick_instructions"] < 1_000_000      # within a tick at 1 GHz
    assert board["flash_bytes"] <= 128 * 1024 and board["ram_bytes"] <= 32 * 1024
    for key in ("worst_tick_instructions", "flash_bytes", "ram_bytes", "fault_detect_ms.stall"):
        assert key in printed
