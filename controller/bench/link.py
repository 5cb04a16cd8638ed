"""Link benchmark: the serial protocol measured over a real pty against a device whose arm is
simulated, so that the link, not the physics, is measured. The devices (link_devices.py): the
reference engine or the C firmware's engine driving an ideal arm, or the C firmware's Cortex-M
build in QEMU driving its own.

- rtt_ms_median / rtt_ms_p99: host wall time from writing a command to reading its ACK;
- telemetry_hz: telemetry messages per second of device time, sustained over a few seconds;
- guard_stop_ms: control ticks (as ms) from the first tick whose wrist reading is over the guard
  threshold to the first tick whose set-point no longer moves, over repeated guarded pushes into a
  wall (recorded at the arm's hardware interface, independently of the firmware's own notes);
- frames_corrupt_detected: of `frames_corrupt_injected` frames corrupted on the way to the host
  (one per connection: a corrupt frame ends the connection), how many the host detected;
- fault_detect_ms: for each injected fault, the time from injection to the host's typed error
  (median and worst), which the design bounds at 100 ms: device time for an engine in this
  process, wall time for QEMU (`clock`);
- board: for the QEMU build, its worst control tick in instructions, ticks that came late, and
  its flash and RAM.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from controller.bench.link_devices import EngineBench, QemuBench, host
from firmware_bridge import messages as m
from firmware_bridge.device.engine import DeviceEngine
from firmware_bridge.errors import LinkError


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
    clock: str = "device"
    board: dict = field(default_factory=dict)


def device_for(firmware: str, engine=DeviceEngine):
    """`qemu`: the C binary in QEMU; anything else: `engine` in this process."""
    return QemuBench() if firmware == "qemu" else EngineBench(engine)


def measure(rtt_samples: int = 500, telemetry_s: float = 3.0, guard_runs: int = 20,
            fault_runs: int = 10, progress=None, engine=DeviceEngine, device=None,
            slack_s: float | None = None) -> LinkFigures:
    """`device`: what is measured (link_devices.py); by default `engine` (the reference engine,
    or the C firmware's with the same interface, hardware/firmware/c_engine.py) behind a pty
    driving an ideal arm. `slack_s`: the host's silence and ACK limits (link_devices.host), the
    product's unless a loaded machine (a test suite beside it) could keep the device or the host
    from running for longer; the stall fault's latency is then this limit."""
    device = device or EngineBench(engine)
    figures = LinkFigures(clock=device.clock)
    steps = 5
    try:
        with host(device.boot(slack_s), slack_s) as client:
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
        device.shutdown()
        stops = device.guard_stops_ms(guard_runs, slack_s)
        figures.guard_stop_ms = round(statistics.median(stops), 3)
        figures.guard_stop_ms_max = round(max(stops), 3)
        if progress:
            progress(3, steps)
        figures.frames_corrupt_injected, figures.frames_corrupt_detected, corrupt_ms = \
            _corruption(device, fault_runs, slack_s)
        figures.fault_detect_ms["corrupt"] = _summary(corrupt_ms)
        if progress:
            progress(4, steps)
        for kind in ("drop", "stall", "port_closed", "reset"):
            figures.fault_detect_ms[kind] = _summary([_fault_latency(device, kind, slack_s)
                                                      for _ in range(max(1, fault_runs // 2))])
        if progress:
            progress(5, steps)
    finally:
        device.close()
    figures.board = device.board_figures()
    return figures


def _summary(values_ms: list[float]) -> dict:
    return {"median": round(statistics.median(values_ms), 2), "max": round(max(values_ms), 2),
            "runs": len(values_ms)}


def _corruption(device, runs: int, slack_s: float | None) -> tuple[int, int, list[float]]:
    """One frame corrupted on the way to a connected host, `runs` times."""
    injected = detected = 0
    latencies = []
    path = device.boot(slack_s)
    try:
        for _ in range(runs):
            client = host(path, slack_s)
            client.connect()
            device.inject("corrupt")
            injected += 1
            try:
                client.wait_for(lambda t: False, timeout_s=1.0)
            except LinkError:
                detected += 1
                latencies.append((device.now() - device.injected_at()) * 1000)
            except Exception:
                pass
            device.inject("ok")
            client.close()
    finally:
        device.shutdown()
    return injected, detected, latencies


def _fault_latency(device, kind: str, slack_s: float | None) -> float:
    """Inject one fault of `kind` while the client waits; time until its typed error, ms."""
    path = device.boot(slack_s)
    try:
        client = host(path, slack_s)
        client.connect()
        device.inject(kind)
        try:
            client.wait_for(lambda t: False, timeout_s=max(2.0, 4 * (slack_s or 0.0)))
        except LinkError:
            pass
        # a fault that takes effect at the next frame is timed from there
        at = device.injected_at()
        if at is None:
            raise RuntimeError(f"the {kind} fault never took effect: no frame went to the host")
        latency = (device.now() - at) * 1000
        client.close()
        return latency
    finally:
        device.shutdown()
