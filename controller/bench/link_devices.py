"""The devices the link benchmark measures (controller/bench/link.py), each with the bench's hands
on it: boot it, inject a fault on its line, and run guarded pushes into a wall while its arm
records, at its hardware interface, when the force came and when the set-point stopped.

- `EngineBench`: a device engine in this process (the reference in Python, or the C firmware's
  through ctypes) behind a pty, driving an ideal arm; faults are made on the pty; times are
  device time.
- `QemuBench`: the C firmware's Cortex-M build in QEMU, driving its own simulated arm; faults are
  made by the board's UART driver on request (hardware/firmware/qemu.py); fault times are the
  host's wall time. QEMU counts instructions as the board's nanoseconds (`-icount shift=0`), so
  the board's worst control tick comes out in instructions, and its clock runs somewhat behind
  the wall clock.
"""

from __future__ import annotations

import dataclasses
import time

import numpy as np

from firmware_bridge import messages as m
from firmware_bridge.client import HANDSHAKE_TIMEOUT_S, ArmClient
from firmware_bridge.device.hardware import DeviceConfig
from firmware_bridge.device.ideal_arm import IdealArm
from firmware_bridge.device.runner import DeviceRunner
from hardware.firmware.build import memory_use
from hardware.firmware.qemu import QemuError, QemuFirmware

JOINTS = tuple(m.JointInfo(-6.0, 6.0, 3.0, 0.0) for _ in range(6))
FAULTS = ("corrupt", "drop", "stall", "port_closed", "reset")
PUSH = 0.5                  # rad of joint 1 in a guarded move, over 1 s
WALL = 0.3                  # rad from the move's start to the wall
THRESHOLD_N = 1.0
CONFIG = DeviceConfig(JOINTS, 0.04, 200.0)     # the product's limits, on the bench's joints


def host(path: str, slack_s: float | None = None) -> ArmClient:
    """The host's client on the device at `path`: the product's silence and ACK limits (80 ms),
    or `slack_s` for both, and then a handshake that may take 20 times that (a QEMU board that
    shared two loaded cores with the parallel suite once took longer than the product's 2 s).
    A device booted with `slack_s` (`boot`) gives the host's heartbeats as much: a QEMU board's
    200 ms watchdog once stopped a guarded push when the suite's other worker kept this process
    from running."""
    if slack_s is None:
        return ArmClient(path)
    return ArmClient(path, stall_s=slack_s, ack_timeout_s=slack_s,
                     handshake_timeout_s=max(HANDSHAKE_TIMEOUT_S, 20 * slack_s))


def watchdog_s(slack_s: float | None) -> float:
    """The device's watchdog for a host given `slack_s`: the product's, or the slack if longer."""
    return max(CONFIG.watchdog_s, slack_s or 0.0)


def ready(client: ArmClient) -> None:
    client.enable()
    client.home(timeout_s=10)
    client.tare()


def push_into_the_wall(client: ArmClient) -> np.ndarray:
    """A guarded move of joint 1 towards the wall; returns where it started."""
    q0 = np.array(client.telemetry().q)
    times = np.linspace(0.0, 1.0, 50)
    positions = q0 + np.outer(np.linspace(0, 1, 50), [PUSH, 0, 0, 0, 0, 0])
    client.follow(times, positions, guard=((0.0, 0.0, 1.0), THRESHOLD_N))
    return q0


def back_off(client: ArmClient, to: np.ndarray) -> None:
    here = np.array(client.telemetry().q)
    client.follow(np.linspace(0.0, 0.6, 30), here + np.outer(np.linspace(0, 1, 30), to - here))


class RecordingArm(IdealArm):
    """The ideal arm, noting what the firmware commanded and what the sensor read, per tick."""

    def __init__(self):
        super().__init__(np.zeros(6))
        self.trace: list[tuple[float, float]] = []   # (force read, set-point joint 1)
        self._last_force = 0.0

    def read(self):
        state = super().read()
        self._last_force = float(state.wrench[2])
        return state

    def command_joints(self, q):
        self.trace.append((self._last_force, float(q[0])))
        super().command_joints(q)


class EngineBench:
    clock = "device"

    def __init__(self, engine):
        self._engine = engine
        self._runner: DeviceRunner | None = None
        self._at: float | None = None

    def _start(self, arm, slack_s: float | None) -> DeviceRunner:
        config = dataclasses.replace(CONFIG, watchdog_s=watchdog_s(slack_s))
        return DeviceRunner(config, arm, self._engine).start()

    def boot(self, slack_s: float | None = None) -> str:
        self.shutdown()
        self._runner = self._start(IdealArm(np.zeros(6)), slack_s)
        return self._runner.path

    def shutdown(self) -> None:
        if self._runner is not None:
            self._runner.stop()
            self._runner = None

    def close(self) -> None:
        self.shutdown()

    def now(self) -> float:
        return self._runner.now()

    def inject(self, kind: str) -> None:
        """A fault on the way between device and host, from now (corrupt and drop: from the
        next frame the device sends); `ok` takes the taps away."""
        runner = self._runner
        self._at = None
        if kind == "corrupt":
            def tap(data):
                if data and self._at is None:
                    self._at = runner.now()
                    end = data.index(0)
                    corrupted = bytearray(data)
                    corrupted[max(0, end // 2)] ^= 0x24
                    return bytes(corrupted)
                return data
            runner.tap_out = tap
        elif kind == "drop":
            def tap(data):
                if data and self._at is None:
                    self._at = runner.now()
                    return data[data.index(0) + 1:]
                return data
            runner.tap_out = tap
        elif kind == "stall":
            self._at = runner.now()
            runner.tap_out = lambda data: b""
            runner.tap_in = lambda data: b""
        elif kind == "port_closed":
            self._at = runner.now()
            runner.port.close()
        elif kind == "reset":
            self._at = runner.now()
            runner.reset_device()
        elif kind == "ok":
            runner.tap_out = runner.tap_in = None
        else:
            raise ValueError(f"no fault named {kind!r}")

    def injected_at(self) -> float | None:
        return self._at

    def guard_stops_ms(self, runs: int, slack_s: float | None = None) -> list[float]:
        """Guarded moves of joint 1 into a wall that pushes back 200 N/rad."""
        arm = RecordingArm()
        wall = WALL
        arm.force_at = lambda q: np.array([0.0, 0.0, max(0.0, (q[0] - wall) * 200.0), 0, 0, 0])
        self.shutdown()
        self._runner = self._start(arm, slack_s)
        stops = []
        try:
            with host(self._runner.path, slack_s) as client:
                ready(client)
                for _ in range(runs):
                    arm.trace.clear()
                    q0 = push_into_the_wall(client)
                    trace = list(arm.trace)
                    crossing = next(i for i, (force, _) in enumerate(trace) if force > THRESHOLD_N)
                    stop = next(i for i in range(max(crossing, 1), len(trace))
                                if trace[i][1] == trace[i - 1][1])
                    stops.append((stop - crossing) * 1000.0 / client.info.control_hz)
                    back_off(client, q0)
        finally:
            self.shutdown()
        return stops

    def board_figures(self) -> dict:
        return {}


class QemuBench:
    clock = "host"

    def __init__(self):
        self._make = lambda: QemuFirmware(instruction_clock=True)
        self._board = None
        self._at: float | None = None
        self._worst_tick_instructions = 0
        self._late_ticks = 0

    def boot(self, slack_s: float | None = None) -> str:
        if self._board is None:
            board = self._make()
            board.start()                 # closes what it started if it fails
            self._board = board
        else:
            self._note_stats()
            self._board.reset()
        watchdog = watchdog_s(slack_s)
        if watchdog != CONFIG.watchdog_s:
            self._board.set_watchdog(watchdog)
        return self._board.link_path

    def _note_stats(self) -> None:
        stats = self._board.stats()
        # under -icount shift=0 the board's nanosecond is one instruction
        self._worst_tick_instructions = max(self._worst_tick_instructions, stats["worst_tick_ns"])
        self._late_ticks += stats["late_ticks"]

    def shutdown(self) -> None:
        """The board lives on to the next boot, which resets it."""

    def close(self) -> None:
        board, self._board = self._board, None
        if board is not None:
            try:
                self._board = board
                self._note_stats()
            except QemuError:
                pass                     # a board that does not answer: no figures from it
            finally:
                self._board = None
                board.close()

    def now(self) -> float:
        return time.monotonic()

    def inject(self, kind: str) -> None:
        """As EngineBench's: timed from when the fault acts. The board answers `line corrupt`
        and `line drop` as the frame they spoil goes (its answer travels on the other UART, so
        the origin is good to a fraction of a millisecond); the others act as they are asked."""
        if kind in ("corrupt", "drop"):
            self._board.line(kind)
            self._at = time.monotonic()
            return
        if kind in ("port_closed", "reset"):
            self._note_stats()           # the board's figures so far, before they go
        self._at = time.monotonic()
        if kind in ("stall", "ok"):
            self._board.line(kind)
        elif kind == "port_closed":
            board, self._board = self._board, None
            board.close()                 # QEMU gone: its end of the pty closes
        elif kind == "reset":
            self._board.press_reset()
        else:
            raise ValueError(f"no fault named {kind!r}")

    def injected_at(self) -> float | None:
        return self._at

    def guard_stops_ms(self, runs: int, slack_s: float | None = None) -> list[float]:
        """Guarded moves of joint 1 into a wall that pushes back 3 N as soon as it is passed."""
        stops = []
        with host(self.boot(slack_s), slack_s) as client:
            ready(client)
            for _ in range(runs):
                q_start = client.telemetry().q[0]
                self._board.set_force([0, 0, 3.0, 0, 0, 0], beyond=(0, q_start + WALL))
                q0 = push_into_the_wall(client)
                ticks = self._board.contact_stop_ticks()
                if ticks is None:
                    raise QemuError("the board's arm met the wall but its set-point never "
                                    "stopped")
                stops.append(ticks * 1000.0 / client.info.control_hz)
                self._board.set_force([0.0] * 6)
                back_off(client, q0)
        return stops

    def board_figures(self) -> dict:
        return {"worst_tick_instructions": self._worst_tick_instructions,
                "late_ticks": self._late_ticks, **memory_use()}
