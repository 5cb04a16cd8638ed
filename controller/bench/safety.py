"""Safety benchmark: how soon a hand in the workspace has the arm held, on the simulated cell
served as hardware (pty and camera streams), with the safety monitor watching the streams and
the cell's light curtain on the controller's safety input.

- pause_ms_*: world time from the simulated hand first coming into the workspace (the simulator's
  ground truth) to the first device reading with the arm held (PRESENCE or PAUSED), over `runs`
  reaches from the players' side; negative: held before the hand got there;
- curtain_ms_median: the same, to the first reading held by the curtain (PRESENCE);
- camera_pause_ms_median: the same, to the first reading paused by the cameras' monitor (RATE 0);
- seen_to_pause_ms_median: from the world time of the frame that showed the hand to that reading
  (the monitor's own share: comparing the frame and commanding the pause);
- resumed: reaches after which the arm went back to full pace once the hand had gone;
- false_pauses: holds or pauses while the arm moved in and out of the tower's workspace with no
  hand there.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import numpy as np

from controller.turn.arm_moves import ArmMoves
from controller.cell_link import CellLink
from controller.safety.monitor import Level, SafetyMonitor
from firmware_bridge.messages import Status
from hardware.sim.server import SimServer
from planning.game.cell.model import Cell
from planning.kinematics import ArmModel
from planning.motion.planner import MotionPlanner
from planning.motion.plans import MoveStep
from planning.motion.trajectory import JointTrajectory

HOLD_S = 1.5
REACH_OUT_M = 0.10          # the hand stops this far from the tower's centre


@dataclass
class SafetyFigures:
    runs: int = 0
    pause_ms_median: float = float("nan")
    pause_ms_p95: float = float("nan")
    pause_ms_max: float = float("nan")
    seen_to_pause_ms_median: float = float("nan")
    curtain_ms_median: float = float("nan")
    camera_pause_ms_median: float = float("nan")
    resumed: int = 0
    missed: int = 0
    false_pauses: int = 0
    pause_ms: list[float] = field(default_factory=list)


def _wait(predicate, timeout_s: float) -> bool:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.01)
    return True


def measure(cell: Cell, runs: int = 10, seed: int = 1, stall_s: float = 0.5,
            progress=None) -> SafetyFigures:
    figures = SafetyFigures(runs=runs)
    seen_ms, curtain_ms, camera_ms = [], [], []
    with SimServer(cell, seed) as server, \
            CellLink(cell, server.serial_path, server.camera_urls(), stall_s=stall_s) as link:
        seen = link.observe().observation
        planner = MotionPlanner(cell)
        held = _HeldReadings()
        link.arm.on_telemetry(held)
        with SafetyMonitor(link, ArmModel(cell)) as monitor:
            monitor.watch(seen.pose, seen.top_layer)
            # the arm alone, in and out of the workspace: nothing should pause it
            q = np.array(link.arm.telemetry().q_set)
            probe = planner.push(q, 9, 1, 0.0, tower_layers=seen.top_layer)
            moves = ArmMoves(link.arm, planner)
            moves.follow(probe.step("transit"))     # transit and approach, stopping short of the block
            approach = probe.step("approach")
            moves.follow(approach)
            moves.follow(MoveStep("back", JointTrajectory(approach.trajectory.times,
                                                          approach.trajectory.positions[::-1])))
            moves.transit(np.array(cell.arm.home), seen.top_layer)
            figures.false_pauses = sum(e.kind == "pause" for e in monitor.events) \
                + (held.first(Status.PRESENCE) is not None)
            x, y = cell.tower.position
            for i in range(runs):
                angle = -np.pi / 2 + (i - runs / 2) * np.pi / (2 * runs)     # from the person's side
                z = 0.05 + 0.25 * (i % 3) / 2
                point = np.array([x + REACH_OUT_M * np.cos(angle), y + REACH_OUT_M * np.sin(angle), z])
                before = len(monitor.events)
                held.reset()
                server.locked(lambda world, engine: server.person.start_reach(point, HOLD_S))
                paused = _wait(lambda: any(e.kind == "pause" for e in monitor.events[before:]), 15.0)
                _wait(lambda: server.person.state != "playing", 30.0)
                figures.resumed += _wait(lambda: monitor.level is Level.CLEAR, 15.0)
                entered = server.person.entered_t
                pause = next((e for e in monitor.events[before:] if e.kind == "pause"), None)
                first_held = held.first(Status.PRESENCE | Status.PAUSED)
                curtain = held.first(Status.PRESENCE)
                if entered is None or first_held is None:
                    figures.missed += 1
                else:
                    figures.pause_ms.append(round((first_held - entered) * 1000, 1))
                if entered is not None and curtain is not None:
                    curtain_ms.append((curtain - entered) * 1000)
                if paused and pause is not None and entered is not None:
                    camera_ms.append((pause.device_t - entered) * 1000)
                    seen_ms.append((pause.device_t - pause.frame_t) * 1000)
                if progress:
                    progress(i + 1, runs)
    if figures.pause_ms:
        ordered = sorted(figures.pause_ms)
        figures.pause_ms_median = round(statistics.median(ordered), 1)
        figures.pause_ms_p95 = round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 1)
        figures.pause_ms_max = ordered[-1]
    for name, values in (("seen_to_pause_ms_median", seen_ms), ("curtain_ms_median", curtain_ms),
                         ("camera_pause_ms_median", camera_ms)):
        if values:
            setattr(figures, name, round(statistics.median(values), 1))
    return figures


class _HeldReadings:
    """The device time of the first telemetry reading with given status bits, since `reset`."""

    def __init__(self):
        self._first: dict[int, float] = {}

    def reset(self) -> None:
        self._first = {}

    def __call__(self, telemetry) -> None:
        for bit in (Status.PRESENCE, Status.PAUSED):
            if telemetry.status & bit and int(bit) not in self._first:
                self._first[int(bit)] = telemetry.device_time

    def first(self, bits: Status) -> float | None:
        times = [t for bit, t in self._first.items() if bit & bits]
        return min(times) if times else None
