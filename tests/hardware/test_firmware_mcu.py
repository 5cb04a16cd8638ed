"""The C firmware's microcontroller build (`build/mcu/jenga-firmware.elf`, Cortex-M4F) and the
board it runs on in QEMU (hardware/firmware/qemu.py). The conformance suite runs against it as
`--device qemu` (tests/conformance); these tests hold what is the board's own: the memory
budget, the boot id across resets, the stimulus channel and the control loop's figures."""

import time

import pytest

from firmware_bridge import messages as m
from hardware.firmware.build import build_mcu, memory_use
from hardware.firmware.qemu import QemuError, QemuFirmware
from tests.conformance.host import Host

ELF_MACHINE_ARM = 40


@pytest.fixture(scope="module")
def board():
    with QemuFirmware() as b:
        yield b


def test_the_binary_is_for_an_arm_core_and_fits_128_kb_of_flash_and_32_kb_of_ram():
    build = build_mcu()
    header = (build / "jenga-firmware.elf").read_bytes()[:20]
    assert header[:4] == b"\x7fELF" and int.from_bytes(header[18:20], "little") == ELF_MACHINE_ARM
    use = memory_use(build)
    # the link script enforces both limits; this holds the figures size.txt reports to them
    assert 10_000 < use["flash_bytes"] <= 128 * 1024
    assert 20_000 < use["ram_bytes"] <= 32 * 1024


def test_each_reset_is_a_new_boot_the_host_can_tell(board):
    ids = []
    for _ in range(3):
        board.reset()
        host = Host(board.link_path)
        try:
            ids.append(host.hello().boot_id)
        finally:
            host.close()
    assert len(set(ids)) == 3


def test_the_control_loop_ticks_at_1_khz_and_reports_its_figures(board):
    board.reset()
    first = board.stats()
    time.sleep(0.5)
    later = board.stats()
    rate = (later["ticks"] - first["ticks"]) / 0.5
    assert 700 < rate < 1300           # QEMU keeps the board's clock on the wall clock's
    assert later["worst_tick_ns"] > 0 and later["internal_errors"] == 0
    assert later["marked"] == 0 and later["engine_bytes"] > 16 * 1024


def test_the_stimulus_reaches_the_wrist_and_the_safety_input(board):
    board.reset()
    host = Host(board.link_path)
    try:
        host.hello()
        board.set_force([1.5, 0, -2.25, 0, 0.125, 0])
        board.set_presence(True)
        t = host.wait_for(lambda t: t.status & m.Status.PRESENCE, 1.0, host.mark(), m.Telemetry)
        assert t.wrench == pytest.approx([1.5, 0, -2.25, 0, 0.125, 0], abs=1e-6)
        board.set_force([0.0] * 6, beyond=(0, 5.0))
        board.set_presence(False)
        t = host.wait_for(lambda t: not t.status & m.Status.PRESENCE, 1.0, host.mark(),
                          m.Telemetry)
        assert t.wrench == pytest.approx([0.0] * 6)
    finally:
        host.close()


@pytest.mark.parametrize("line", ["force 6 0 0 0 0 0 0 0", "force 0 0 0 0", "force -1 0 0 0 0 0 0 x",
                                  "force 0 99999999999 0 0 0 0 0 0", "presence 2", "presence",
                                  "reboot"])
def test_the_stimulus_channel_refuses_what_it_does_not_understand(board, line):
    with pytest.raises(QemuError, match="refused"):
        board.command(line)
    assert board.command("presence 0") == "ok"          # and goes on
