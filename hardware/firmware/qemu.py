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

import os
import re
import select
import shutil
import subprocess
import tempfile
import termios
import time
import tty
from pathlib import Path
from typing import Sequence

import serial

from hardware.firmware.build import build_mcu

QEMU = "qemu-system-arm"
MACHINE = "mps2-an386"
_PTY = re.compile(r"char device redirected to (\S+) \(label serial(\d)\)")


class QemuError(RuntimeError):
    pass


class QemuFirmware:
    def __init__(self, elf: Path | None = None, instruction_clock: bool = False,
                 start_timeout_s: float = 10.0):
        self._elf = elf
        self._instruction_clock = instruction_clock
        self._start_timeout_s = start_timeout_s
        self._process: subprocess.Popen | None = None
        self._log = None
        self._stimulus: serial.Serial | None = None
        self._link_held: int | None = None
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
        # the monitor on stdin: `system_reset` is the board's reset button
        command = [QEMU, "-M", MACHINE, "-nographic", "-monitor", "stdio", "-kernel", str(elf),
                   "-serial", "pty", "-serial", "pty"]
        if self._instruction_clock:
            command += ["-icount", "shift=0,sleep=on"]
        # QEMU's messages go to a file, not a pipe no one drains once the ptys are known
        self._log = tempfile.NamedTemporaryFile("w+", prefix="jenga-qemu-", suffix=".log")
        self._process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=self._log,
                                         stderr=subprocess.STDOUT)
        try:
            paths = self._wait_for_ptys()
            self.link_path, self.stimulus_path = paths["0"], paths["1"]
            self._hold_link()
            self._stimulus = serial.Serial(self.stimulus_path, 115200, timeout=2.0)
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

    def reset(self) -> None:
        """Press the board's reset button: the firmware boots again from flash (new RAM, a new
        boot), on the same serial ports, and whatever the old boot had sent is dropped."""
        if self._process is None or self._process.poll() is not None:
            raise QemuError("the firmware in QEMU is not running")
        self.command("mark")
        self._process.stdin.write(b"system_reset\n")
        self._process.stdin.flush()
        deadline = time.monotonic() + self._start_timeout_s
        while self._marked() != 0:           # a boot clears the mark
            if time.monotonic() > deadline:
                raise QemuError(f"the firmware in QEMU did not boot again after a reset; "
                                f"QEMU said:\n{self._said()}")
            time.sleep(0.002)
        termios.tcflush(self._link_held, termios.TCIFLUSH)

    def _said(self) -> str:
        self._log.seek(0)
        return self._log.read()[-2000:]

    def _marked(self) -> int:
        """The mark the stats show, or -1 for an answer cut or garbled by a reset (a line the
        reset cut is ended first)."""
        self._stimulus.reset_input_buffer()
        self._stimulus.write(b"\nstats\n")
        found = re.search(rb"^stats .* marked=(\d)", self._stimulus.readline())
        return int(found.group(1)) if found else -1

    def _hold_link(self) -> None:
        """Keep the link's pty open for the board's life. QEMU looks for a reader on a pty only
        once a second and meanwhile neither reads nor writes it, so a host that opened it just
        now would lose its first commands; with this end held, QEMU sees the port connected from
        the start. This end never reads: the host that opens the port gets every byte."""
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
        if self._process is not None:
            self._process.stdin.close()
            self._process.terminate()
            try:
                self._process.wait(timeout=5.0)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None

    def command(self, line: str) -> str:
        """One line on the stimulus channel, and the firmware's answer."""
        if self._stimulus is None:
            raise QemuError("the firmware in QEMU is not running")
        self._stimulus.write(line.encode() + b"\n")
        answer = self._stimulus.readline()
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

    def stats(self) -> dict[str, int]:
        """The control loop's figures: ticks run, the worst tick's time (ns of the board's
        clock), ticks that came late, bytes lost to receive overrun, internal errors, and the
        engine's size in RAM."""
        answer = self.command("stats")
        return {key: int(value) for key, value in re.findall(r"(\w+)=(\d+)", answer)}
