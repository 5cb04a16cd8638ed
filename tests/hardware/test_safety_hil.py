"""Hardware in the loop: the safety monitor watches the simulated cell's camera streams while the
arm moves; the simulated person's hand reaching into the workspace pauses the arm on the device,
and the motion goes on from where it paused once the hand has gone."""

import time

import numpy as np
import pytest

from controller.cell_link import CellLink
from controller.commands.play_cmd import SIM_STALL_S
from controller.safety.monitor import Level, SafetyMonitor
from firmware_bridge.client import MotionOutcome
from firmware_bridge.messages import Status
from hardware.sim.server import SimServer
from planning.kinematics import ArmModel

pytestmark = pytest.mark.hil


@pytest.fixture(scope="module")
def cell(default_cell):
    with SimServer(default_cell, 1) as server:
        with CellLink(default_cell, server.serial_path, server.camera_urls(),
                      stall_s=SIM_STALL_S) as link:
            yield server, link


def _wait(predicate, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_a_hand_in_the_workspace_pauses_the_arm_until_it_has_gone(cell, default_cell):
    server, link = cell
    seen = link.observe().observation
    with SafetyMonitor(link, ArmModel(default_cell)) as monitor:
        monitor.watch(seen.pose, seen.top_layer)
        _wait(lambda: monitor._thread is not None, 5.0)
        time.sleep(1.0)
        assert monitor.level is Level.CLEAR and monitor.events == []   # its own arm is not a hand
        # a slow turn of the wrist: the arm stays where it is, the joint moves for 8 s
        q0 = np.array(link.arm.telemetry().q_set)
        times = np.linspace(0.0, 8.0, 50)
        goal = q0 + np.outer(np.linspace(0.0, 1.0, 50), [0, 0, 0, 0, 0, 1.0])
        handle = link.arm.follow(times, goal, wait=False)
        x, y = default_cell.tower.position
        point = np.array([x, y - 0.10, 0.15])            # 5 cm off the tower's corner
        server.locked(lambda world, engine: server.person.start_reach(point, hold_s=2.0))
        _wait(lambda: monitor.level is Level.INSIDE, 20.0)
        paused = link.arm.wait_for(lambda t: Status.PAUSED in Status(t.status), 1.0)
        later = link.arm.wait_for(lambda t: t.device_time > paused.device_time + 1.0, 5.0)
        if server.person.state == "playing" and Status.PAUSED in Status(later.status):
            assert np.allclose(later.q_set, paused.q_set)   # held where it paused
        result = link.arm.wait_motion(handle)
        assert result.outcome is MotionOutcome.DONE and np.allclose(result.q, goal[-1], atol=0.01)
        kinds = [e.kind for e in monitor.events]
        assert "pause" in kinds and kinds[-1] == "resume", kinds
        pause = next(e for e in monitor.events if e.kind == "pause")
        entered = server.person.entered_t
        assert entered is not None and pause.device_t > entered
        assert pause.frame_t >= entered - 0.05                # seen in a frame after it came in


def test_a_hand_crossing_the_light_curtain_holds_the_arm_before_it_reaches_the_workspace(
        cell, default_cell):
    server, link = cell
    held = []
    link.arm.on_telemetry(lambda t: held.append(t.device_time)
                          if Status.PRESENCE in Status(t.status) else None)
    q0 = np.array(link.arm.telemetry().q_set)
    times = np.linspace(0.0, 8.0, 50)
    goal = q0 + np.outer(np.linspace(0.0, 1.0, 50), [0, 0, 0, 0, 0, -1.0])
    handle = link.arm.follow(times, goal, wait=False)    # no monitor: the device alone
    x, y = default_cell.tower.position
    point = np.array([x, y - 0.10, 0.20])
    server.locked(lambda world, engine: server.person.start_reach(point, hold_s=1.0))
    _wait(lambda: server.person.state != "playing", 30.0)
    entered = server.person.entered_t
    assert held and entered is not None and held[0] < entered     # held before it got there
    during = link.arm.wait_for(lambda t: t.device_time > held[0] + 0.2, 5.0)
    assert Status.PRESENCE in Status(during.status) and Status.PAUSED not in Status(during.status)
    result = link.arm.wait_motion(handle)
    assert result.outcome is MotionOutcome.DONE and np.allclose(result.q, goal[-1], atol=0.01)
    assert Status.PRESENCE not in Status(link.arm.telemetry().status)
