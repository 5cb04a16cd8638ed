"""The C firmware's microcontroller build (`build/mcu/jenga-firmware.elf`, Cortex-M4F) and the
board it runs on in QEMU (hardware/firmware/qemu.py). The conformance suite runs against it as
`--device qemu` (tests/conformance); these tests hold what is the board's own: the memory
budget, the boot id across resets, the stimulus channel and the control loop's figures."""

import time

import pytest

from firmware_bridge import messages as m
from hardware.firmware.build import build_mcu, memory_use
from hardware.firmware.qemu import QemuError, QemuFirmware
from tests.conformance.host import ANSWER_S, Host

ELF_MACHINE_ARM = 40


@pytest.fixture(scope="module")
def board():
    # QEMU's instruction count is the board's clock: a tick's time is its instructions, whatever
    # the load on this machine
    with QemuFirmware(instruction_clock=True) as b:
        yield b


def test_the_binary_is_for_an_arm_core_and_fits_128_kb_of_flash_and_32_kb_of_ram():
    build = build_mcu()
    header = (build / "jenga-firmware.elf").read_bytes()[:20]
    assert header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == ELF_MACHINE_ARM
    use = memory_use(build)
    # the link script enforces both limits; this holds the figures size.txt reports to them
    assert 10_000 < use["flash_bytes"] <= 128 * 1024
    assert 20_000 < use["ram_bytes"] <= 32 * 1024


def boot_id(board) -> int:
    host = Host(board.link_path)
    try:
        return host.hello().boot_id
    finally:
        host.close()


def test_each_reset_and_each_power_up_is_a_new_boot_the_host_can_tell(board):
    ids = []
    for _ in range(3):
        board.reset()
        ids.append(boot_id(board))
    assert len(set(ids)) == 3
    # two power-ups, whose RAM starts the same: only their seeds tell them apart
    firsts = []
    for _ in range(2):
        with QemuFirmware() as fresh:
            firsts.append(boot_id(fresh))
    assert firsts[0] != firsts[1]


def test_a_board_held_in_its_reset_sends_its_boot_event_first_to_a_host_that_opens_then():
    with QemuFirmware() as fresh:
        fresh.reset(hold=True)
        host = Host(fresh.link_path)
        try:
            fresh.release()
            host.wait_for(lambda t: True, ANSWER_S, 0, m.Telemetry)
            assert isinstance(host.received[0][1], m.Event)
            assert host.received[0][1].kind == m.EventKind.BOOT and host.corrupt == 0
        finally:
            host.close()


def test_the_control_loop_runs_on_its_own_clock_and_reports_its_figures(board):
    board.reset()
    first = board.stats()
    time.sleep(0.5)
    later = board.stats()
    # the board's clock is its instructions, so how many ticks half a second of this machine's
    # wall clock holds depends on the load beside it (not a test's to time; bench --suite link
    # --firmware qemu reports the worst tick and the late ones);
    # what is the board's own: the loop runs, and no tick came late by its own clock
    assert later["ticks"] > first["ticks"] and later["late_ticks"] == 0
    # a tick at rest is some thousands of instructions: far from the million of 1 ms at 1 GHz
    assert 0 < later["worst_tick_ns"] < 100_000 and later["internal_errors"] == 0
    assert later["marked"] == 0 and later["engine_bytes"] > 16 * 1024


def test_the_stimulus_reaches_the_wrist_and_the_safety_input(board):
    board.reset()
    host = Host(board.link_path)
    try:
        host.hello()
        board.set_force([1.5, 0, -2.25, 0, 0.125, 0])
        board.set_presence(True)
        t = host.wait_for(lambda t: t.status & m.Status.PRESENCE, ANSWER_S, host.mark(), m.Telemetry)
        assert t.wrench == pytest.approx([1.5, 0, -2.25, 0, 0.125, 0], abs=1e-6)
        board.set_force([2.0, 0, 0, 0, 0, 0], beyond=(0, 5.0))      # joint 1 is not past 5 rad
        board.set_presence(False)
        t = host.wait_for(lambda t: not t.status & m.Status.PRESENCE, ANSWER_S, host.mark(),
                          m.Telemetry)
        assert t.wrench == pytest.approx([0.0] * 6)
        board.set_force([2.0, 0, 0, 0, 0, 0], beyond=(0, -5.0))     # but it is past -5 rad
        time.sleep(0.05)
        assert host.telemetry().wrench == pytest.approx([2.0, 0, 0, 0, 0, 0])
    finally:
        host.close()


def test_a_bench_may_lengthen_the_watchdog_until_the_next_reset(board):
    """A link bench beside the parallel suite gives a late host's heartbeats the host's own
    slack (controller/bench/link_devices.py); a reset restores the product's 200 ms."""
    board.reset()
    assert board.command("watchdog 700") == "ok"
    host = Host(board.link_path)
    try:
        host.hello()
        assert 0.6 <= host.quiet_until_the_watchdog_s(timeout_s=3.0) <= 1.0
        board.reset()
        host.close()
        host = Host(board.link_path)
        host.hello()
        assert 0.15 <= host.quiet_until_the_watchdog_s(timeout_s=3.0) <= 0.5
    finally:
        host.close()


@pytest.mark.parametrize("line", ["force 6 0 0 0 0 0 0 0", "force 0 0 0 0", "force -1 0 0 0 0 0 0 x",
                                  "force 0 99999999999 0 0 0 0 0 0", "presence 2", "presence",
                                  "reboot", "line cut", "watchdog 5", "watchdog 0.5", "watchdog",
                                  "stats " + "9" * 120])
def test_the_stimulus_channel_refuses_what_it_does_not_understand(board, line):
    with pytest.raises(QemuError, match="too long" if len(line) > 95 else "refused"):
        board.command(line)
    assert board.command("presence 0") == "ok"          # and goes on
