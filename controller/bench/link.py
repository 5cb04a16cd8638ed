"""Link benchmark: the serial protocol measured over a real pty against the device engine driving
an ideal arm (so the link, not the physics, is measured).

- rtt_ms_median / rtt_ms_p99: host wall time from writing a command to reading its ACK;
- telemetry_hz: telemetry messages per second of device time, sustained over a few seconds;
- guard_stop_ms: device time from the first control tick whose wrist reading is over the guard
  threshold to the first tick whose set-point no longer moves, over repeated guarded pushes into a
  virtual wall (recorded at the hardware interface, independently of the engine's own notes);
- frames_corrupt_detected: of `frames_corrupt_injected` frames corrupted on the way to the host
  (one per connection: a corrupt frame ends the connection), how many the host detected;
- fault_detect_ms: for each injected fault, host-observed device time from injection to the typed
  error (median and worst), which the design bounds at 100 ms.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from firmware_bridge import messages as m
from firmware_bridge.client import ArmClient
from firmware_bridge.device.engine import DeviceEngine
from firmware_bridge.device.hardware import DeviceConfig
from firmware_bridge.device.ideal_arm import IdealArm
from firmware_bridge.device.runner import DeviceRunner
from firmware_bridge.errors import LinkError

JOINTS = tuple(m.JointInfo(-6.0, 6.0, 3.0, 0.0) for _ in range(6))


@dataclass
class LinkFigures:
    rtt_ms_median: float = float("nan")
    rtt_ms_p99: float = float("nan")
    telemetry_hz: float = float("nan")
    guard_stop_ms: float = float("nan")
    guard_stop_ms_max: float = float("nan")
    frames_corrupt_injected: int = 0
    frames_corrupt_detected: int = 0
    fault_detect_ms: dict = field(default_factory=dict)


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


def _device(engine, arm=None) -> DeviceRunner:
    return DeviceRunner(DeviceConfig(JOINTS, 0.04, 200.0), arm or IdealArm(np.zeros(6)),
                        engine).start()


def _ready(client: ArmClient) -> None:
    client.enable()
    client.home(timeout_s=10)
    client.tare()


def measure(rtt_samples: int = 500, telemetry_s: float = 3.0, guard_runs: int = 20,
            fault_runs: int = 10, progress=None, engine=DeviceEngine) -> LinkFigures:
    """`engine`: the device's firmware, the reference engine or the C firmware's (with the same
    interface: hardware/firmware/c_engine.py), each behind the same pty and ideal arm."""
    figures = LinkFigures()
    steps = 5
    runner = _device(engine)
    try:
        with ArmClient(runner.path) as client:
            rtts = []
            for _ in range(rtt_samples):
                start = time.perf_counter()
                client._command(m.Heartbeat())
                rtts.append((time.perf_counter() - start) * 1000)
            figures.rtt_ms_median = round(statistics.median(rtts), 3)
            figures.rtt_ms_p99 = round(float(np.percentile(rtts, 99)), 3)
            if progress:
                progress(1, steps)
            count = [0]
            client.on_telemetry(lambda t: count.__setitem__(0, count[0] + 1))
            first = client.telemetry().device_time
            start_count = count[0]
            last = client.wait_for(lambda t: t.device_time >= first + telemetry_s, telemetry_s + 5)
            figures.telemetry_hz = round((count[0] - start_count) / (last.device_time - first), 1)
            if progress:
                progress(2, steps)
    finally:
        runner.stop()
    stops = _guard_stops(engine, guard_runs)
    figures.guard_stop_ms = round(statistics.median(stops), 3)
    figures.guard_stop_ms_max = round(max(stops), 3)
    if progress:
        progress(3, steps)
    figures.frames_corrupt_injected, figures.frames_corrupt_detected, corrupt_ms = \
        _corruption(engine, fault_runs)
    figures.fault_detect_ms["corrupt"] = _summary(corrupt_ms)
    if progress:
        progress(4, steps)
    for kind in ("drop", "stall", "port_closed", "reset"):
        figures.fault_detect_ms[kind] = _summary([_fault_latency(engine, kind)
                                                  for _ in range(max(1, fault_runs // 2))])
    if progress:
        progress(5, steps)
    return figures


def _summary(values_ms: list[float]) -> dict:
    return {"median": round(statistics.median(values_ms), 2), "max": round(max(values_ms), 2),
            "runs": len(values_ms)}


def _guard_stops(engine, runs: int) -> list[float]:
    """Guarded moves of joint 1 into a virtual wall; device-time stop latency of each, ms."""
    arm = RecordingArm()
    wall = 0.3
    arm.force_at = lambda q: np.array([0.0, 0.0, max(0.0, (q[0] - wall) * 200.0), 0.0, 0.0, 0.0])
    runner = _device(engine, arm)
    stops = []
    threshold = 1.0
    period = 1.0 / runner.engine.config.control_hz
    try:
        with ArmClient(runner.path) as client:
            _ready(client)
            for _ in range(runs):
                q0 = np.array(client.telemetry().q)
                times = np.linspace(0.0, 1.0, 50)
                positions = q0 + np.outer(np.linspace(0, 1, 50), [0.5, 0, 0, 0, 0, 0])
                arm.trace.clear()
                client.follow(times, positions, guard=((0.0, 0.0, 1.0), threshold))
                trace = list(arm.trace)
                crossing = next(i for i, (force, _) in enumerate(trace) if force > threshold)
                stop = next(i for i in range(max(crossing, 1), len(trace))
                            if trace[i][1] == trace[i - 1][1])
                stops.append((stop - crossing) * period * 1000)
                back = np.array(client.telemetry().q)
                home = q0.copy()
                retreat = back + np.outer(np.linspace(0, 1, 30), home - back)
                client.follow(np.linspace(0.0, 0.6, 30), retreat)
    finally:
        runner.stop()
    return stops


def _corruption(engine, runs: int) -> tuple[int, int, list[float]]:
    injected = detected = 0
    latencies = []
    runner = _device(engine)
    try:
        for _ in range(runs):
            state = {"armed": False, "at": None}

            def tap(data, state=state):
                if state["armed"] and data and state["at"] is None:
                    state["at"] = runner.now()
                    end = data.index(0)
                    corrupted = bytearray(data)
                    corrupted[max(0, end // 2)] ^= 0x24
                    return bytes(corrupted)
                return data
            runner.tap_out = tap
            client = ArmClient(runner.path)
            client.connect()
            state["armed"] = True
            injected += 1
            try:
                client.wait_for(lambda t: False, timeout_s=1.0)
            except LinkError:
                detected += 1
                latencies.append((runner.now() - state["at"]) * 1000)
            except Exception:
                pass
            runner.tap_out = None
            client.close()
    finally:
        runner.stop()
    return injected, detected, latencies


def _fault_latency(engine, kind: str) -> float:
    """Inject one fault of `kind` while the client waits; device time until its typed error, ms."""
    runner = _device(engine)
    try:
        client = ArmClient(runner.path)
        client.connect()
        start = [None]
        if kind == "drop":
            def tap(data):
                if start[0] is None and data:
                    start[0] = runner.now()
                    return data[data.index(0) + 1:]
                return data
            runner.tap_out = tap
        elif kind == "stall":
            start[0] = runner.now()
            runner.tap_out = lambda data: b""
            runner.tap_in = lambda data: b""
        elif kind == "port_closed":
            start[0] = runner.now()
            runner.port.close()
        else:
            start[0] = runner.now()
            runner.reset_device()
        try:
            client.wait_for(lambda t: False, timeout_s=2.0)
        except LinkError:
            pass
        latency = (runner.now() - start[0]) * 1000
        client.close()
        return latency
    finally:
        runner.stop()
