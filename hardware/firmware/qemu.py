"""The C firmware's microcontroller build running in QEMU (`qemu-system-arm -M mps2-an386`): the
binary a lab would flash, its UART 0 on a pty for the protocol, its UART 1 on a second pty for
the stimulus channel to the simulated arm inside (sim/arm.h) and the control loop's figures.

    with QemuFirmware() as device:
        link = serial.Serial(device.link_path)        # the protocol, as to a board's UART
        device.set_presence(True)                     # the world acting on the arm
        device.stats()["worst_tick_ns"]

`instruction_clock=True` runs QEMU with `-icount shift=0`: the board's clock then advances one
nanosecond for each instruction the firmware executes, so a tick's time in the stats is its
instruction count (and the device's time runs a little behind the wall clock)."""

from __future__ import annotations

import json
import os
import re
import select
import secrets
import shutil
import socket
import subprocess
import tempfile
import termios
import time
import tty
from pathlib import Path
from typing import Sequence

import serial

from hardware.firmware.build import build_mcu
from planning.processes import stop_process

QEMU = "qemu-system-arm"
MACHINE = "mps2-an386"
# the boot record's seed word (boards/mps2_an386/link.ld .noinit): a power-up's entropy
BOOT_SEED = 0x20001000
_PTY = re.compile(r"char device redirected to (\S+) \(label serial(\d)\)")


class QemuError(RuntimeError):
    pass


# How long QEMU may take to start and open its ports: a backstop for a process that hangs, not a
# speed figure (one that exits is seen at once). Beside the loaded parallel suite on 2 cores, QEMU
# took more than 10 s to name its serial ports four times in one run.
START_TIMEOUT_S = 30.0


class QemuFirmware:
    def __init__(self, elf: Path | None = None, instruction_clock: bool = False,
                 start_timeout_s: float = START_TIMEOUT_S):
        self._elf = elf
        self._instruction_clock = instruction_clock
        self._start_timeout_s = start_timeout_s
        self._process: subprocess.Popen | None = None
        self._log = None
        self._stimulus: serial.Serial | None = None
        self._link_held: int | None = None
        self._qmp: socket.socket | None = None
        self._qmp_lines = None
        self._folder: tempfile.TemporaryDirectory | None = None
        self.link_path = ""
        self.stimulus_path = ""

    def __enter__(self) -> "QemuFirmware":
        self.start()
        return self

    def __exit__(self, *_exc) -> None:
        self.close()

    def start(self) -> None:
        if shutil.which(QEMU) is None:
            raise QemuError(f"running the firmware in QEMU needs {QEMU}: "
                            f"apt-get install qemu-system-arm")
        elf = self._elf or build_mcu() / "jenga-firmware.elf"
        # QEMU's machine protocol (QMP) on a socket: `system_reset` is the board's reset button
        self._folder = tempfile.TemporaryDirectory(prefix="jenga-qemu-")
        qmp_path = os.path.join(self._folder.name, "qmp")
        command = [QEMU, "-M", MACHINE, "-nographic", "-monitor", "none",
                   "-qmp", f"unix:{qmp_path},server=on,wait=off", "-kernel", str(elf),
                   "-serial", "pty", "-serial", "pty", "-device",
                   f"loader,addr={BOOT_SEED:#x},data={secrets.randbits(32):#x},data-len=4"]
        if self._instruction_clock:
            command += ["-icount", "shift=0,sleep=on"]
        # QEMU's messages go to a file, not a pipe no one drains once the ptys are known
        self._log = tempfile.NamedTemporaryFile("w+", prefix="jenga-qemu-", suffix=".log")
        self._process = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=self._log,
                                         stderr=subprocess.STDOUT)
        try:
            paths = self._wait_for_ptys()
            self._connect_qmp(qmp_path)
            self.link_path, self.stimulus_path = paths["0"], paths["1"]
            self._hold_link()
            self._stimulus = serial.Serial(self.stimulus_path, 1_000_000, timeout=2.0)
            self.stats()                  # the firmware is up and answers
        except BaseException:
            self.close()
            raise

    def _wait_for_ptys(self) -> dict[str, str]:
        deadline = time.monotonic() + self._start_timeout_s
        while time.monotonic() < deadline:
            self._log.seek(0)
            output = self._log.read()
            paths = {label: path for path, label in _PTY.findall(output)}
            if len(paths) == 2:
                return paths
            if self._process.poll() is not None:
                raise QemuError(f"{QEMU} stopped at start (exit {self._process.returncode}):\n"
                                f"{output}")
            time.sleep(0.02)
        raise QemuError(f"{QEMU} gave no serial ports within {self._start_timeout_s} s")

    def _connect_qmp(self, path: str) -> None:
        self._qmp = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._qmp.settimeout(self._start_timeout_s)
        self._qmp.connect(path)
        self._qmp_lines = self._qmp.makefile("rb")
        json.loads(self._qmp_lines.readline())              # the greeting
        self._qmp_call("qmp_capabilities")

    def _qmp_call(self, command: str):
        """One QMP command, done when QEMU returns from it (events on the way are skipped);
        what it returned."""
        if self._process is None or self._process.poll() is not None:
            raise QemuError("the firmware in QEMU is not running")
        self._qmp.sendall(json.dumps({"execute": command}).encode() + b"\n")
        try:
            while True:
                reply = json.loads(self._qmp_lines.readline() or b"null")
                if reply is None:
                    raise QemuError(f"QEMU closed its machine protocol during {command!r}")
                if "return" in reply:
                    return reply["return"]
                if "error" in reply:
                    raise QemuError(f"QEMU refused {command!r}: {reply['error']}")
        except (TimeoutError, socket.timeout):
            raise QemuError(f"QEMU did not return from {command!r} within "
                            f"{self._start_timeout_s} s; QEMU said:\n{self._said()}") from None

    def press_reset(self) -> None:
        """The reset button, as a host sees it: the board boots again while the host talks to
        it (nothing waits for the boot, nothing is dropped)."""
        self._qmp_call("system_reset")

    def reset(self, hold: bool = False) -> None:
        """A reset for the next test: the firmware boots again from flash (new RAM, a new boot
        id) on the same serial ports, and nothing the old boot sent is left to read. With
        `hold`, the board stays stopped before its first instruction until `release`, so that a
        host can open its port first and read everything the new boot sends (EVENT BOOT first)."""
        if not self._qmp_call("query-status")["running"]:
            self._qmp_call("cont")        # held by a reset no host released
        self.command("mark")
        self._qmp_call("stop")
        self._qmp_call("system_reset")
        termios.tcflush(self._link_held, termios.TCIFLUSH)
        self._stimulus.reset_input_buffer()
        if not hold:
            self.release()

    def release(self) -> None:
        """Let a board held by `reset(hold=True)` run, and see that it booted anew."""
        self._qmp_call("cont")
        deadline = time.monotonic() + self._start_timeout_s
        while self._marked() != 0:           # a boot clears the mark
            if time.monotonic() > deadline:
                raise QemuError(f"the firmware in QEMU did not boot again after a reset; "
                                f"QEMU said:\n{self._said()}")
            time.sleep(0.002)

    def _log_text(self) -> str:
        self._log.seek(0)
        return self._log.read()

    def _said(self) -> str:
        return self._log_text()[-2000:]

    def _marked(self) -> int:
        """The mark the stats show, or -1 for an answer cut or garbled by a reset (a line the
        reset cut is ended first)."""
        found = re.search(rb"^stats .* marked=(\d)", self._ask("stats"))
        return int(found.group(1)) if found else -1

    def _ask(self, line: str) -> bytes:
        """One line on the stimulus channel, and the raw answer (empty if none came in 2 s)."""
        # a late answer to an earlier line, or a line a reset cut, must not pass for this one's
        self._stimulus.reset_input_buffer()
        self._stimulus.write(b"\n" + line.encode() + b"\n")
        return self._stimulus.readline()

    def _hold_link(self) -> None:
        """Keep the link's pty open for the board's life. QEMU looks for a reader on a pty only
        once a second and meanwhile neither reads nor writes it, so a host that opened it just
        now would lose its first commands; with this end held, QEMU sees the port connected from
        the start. This end never reads: what the board sends waits for the host that opens the
        port (which may flush it as it opens: `reset(hold=True)` keeps the board still until
        then)."""
        self._link_held = os.open(self.link_path, os.O_RDWR | os.O_NOCTTY | os.O_NONBLOCK)
        tty.setraw(self._link_held)
        # the firmware talks as soon as QEMU connects the port: wait for its first bytes
        ready, _, _ = select.select([self._link_held], [], [], self._start_timeout_s)
        if not ready:
            raise QemuError(f"the firmware in QEMU sent nothing on its link within "
                            f"{self._start_timeout_s} s")
        termios.tcflush(self._link_held, termios.TCIFLUSH)

    def close(self) -> None:
        if self._link_held is not None:
            os.close(self._link_held)
            self._link_held = None
        if self._stimulus is not None:
            self._stimulus.close()
            self._stimulus = None
        if self._qmp_lines is not None:
            self._qmp_lines.close()
            self._qmp_lines = None
        if self._qmp is not None:
            self._qmp.close()
            self._qmp = None
        stop_process(self._process, timeout_s=5.0)
        self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._folder is not None:
            self._folder.cleanup()
            self._folder = None

    def command(self, line: str) -> str:
        """One line on the stimulus channel, and the firmware's answer."""
        if self._stimulus is None:
            raise QemuError("the firmware in QEMU is not running")
        answer = self._ask(line)
        if not answer.endswith(b"\n"):
            raise QemuError(f"the firmware in QEMU did not answer {line!r} within 2 s")
        text = answer.decode(errors="replace").strip()
        if text.startswith("error"):
            raise QemuError(f"the firmware refused {line!r}: {text}")
        return text

    def set_force(self, wrench: Sequence[float], beyond: tuple[int, float] | None = None) -> None:
        """The wrist's reading (N, N m, sensor frame): while joint `beyond[0]` is past
        `beyond[1]` rad, or always."""
        joint, q = beyond if beyond is not None else (-1, 0.0)
        milli = " ".join(str(round(v * 1000.0)) for v in wrench)
        self.command(f"force {joint} {round(q * 1e6)} {milli}")

    def set_presence(self, on: bool) -> None:
        self.command(f"presence {int(on)}")

    def set_watchdog(self, seconds: float) -> None:
        """The firmware's watchdog (0.2 s in the product) until the next reset: for a bench whose
        host shares a loaded machine, as a device in this process gets its `watchdog_s`."""
        self.command(f"watchdog {round(seconds * 1000)}")

    def line(self, fault: str) -> None:
        """A fault on the protocol's line from the board's side: `corrupt` (one byte of the next
        frame sent), `drop` (the next frame sent), `stall` (nothing passes either way), `ok`."""
        self.command(f"line {fault}")

    def contact_stop_ticks(self) -> int | None:
        """Control ticks from the first tick whose reading had the stimulus force to the first
        whose set-point for joint 0 stood still, as the simulated arm recorded them at its
        hardware interface; None while it has not stopped (`set_force` starts it anew)."""
        found = re.fullmatch(r"contact stop_ticks=(\d+)", self.command("contact"))
        return int(found.group(1)) if found else None

    def stats(self) -> dict[str, int]:
        """The control loop's figures: ticks run, the worst tick's time (ns of the board's
        clock), ticks that came late, bytes lost to receive overrun, internal errors, and the
        engine's size in RAM."""
        answer = self.command("stats")
        return {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", answer)}
