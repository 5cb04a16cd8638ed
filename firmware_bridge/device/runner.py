"""Run a device engine in real time behind a pty: one control tick per period of the wall clock,
device time counted from the runner's start. Used with the ideal arm by the tests and the link
benchmark; the simulator has its own loop, paced by its physics."""

from __future__ import annotations

import threading
import time

from firmware_bridge.device.engine import DeviceEngine
from firmware_bridge.device.hardware import DeviceConfig, DeviceHardware
from firmware_bridge.device.pty_port import PtyPort


class DeviceRunner:
    """`engine`: what runs the protocol, the reference engine by default (the C firmware's binding,
    hardware/firmware/c_engine.py, has the same interface)."""

    def __init__(self, config: DeviceConfig, hardware: DeviceHardware, engine=DeviceEngine):
        self.port = PtyPort()
        self.engine = engine(config, hardware)
        self._period = 1.0 / config.control_hz
        self._stop = threading.Event()
        self._start = 0.0
        self._lock = threading.Lock()
        self.tap_out = None    # optional function(bytes) -> bytes on the way to the host
        self.tap_in = None     # optional function(bytes) -> bytes on the way to the device
        self._thread = threading.Thread(target=self._loop, name="device-runner", daemon=True)

    @property
    def path(self) -> str:
        return self.port.path

    def start(self) -> DeviceRunner:
        self._start = time.monotonic()
        self._thread.start()
        return self

    def now(self) -> float:
        return time.monotonic() - self._start

    def reset_device(self) -> None:
        """Power-cycle the device mid-whatever (fault injection)."""
        with self._lock:
            self.engine.boot(self.now())

    def run_locked(self, fn):
        """Run fn(engine) between ticks."""
        with self._lock:
            return fn(self.engine)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=2.0)
        self.port.close()

    def __enter__(self) -> DeviceRunner:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _loop(self) -> None:
        next_tick = time.monotonic()
        while not self._stop.is_set():
            with self._lock:
                data = self.port.read()
                if data and self.tap_in is not None:
                    data = self.tap_in(data)
                self.engine.receive(data)
                self.engine.tick(self.now())
                out = self.engine.take_output()
                if out and self.tap_out is not None:
                    out = self.tap_out(out)
                self.port.write(out)
            next_tick += self._period
            delay = next_tick - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            elif delay < -0.05:
                next_tick = time.monotonic()   # fell behind: do not try to catch up in a burst
