"""Hardware in the loop: the tower falls while the arm is at work beside it. The safety monitor,
watching the camera streams, sees what stays in the workspace, looks, finds the tower down and
stops the arm's motion; the arm then retracts and goes home without once coming nearer the
tower."""

import threading
import time

import numpy as np
import pytest

from controller.cell_link import CellLink
from controller.commands.play_cmd import SIM_STALL_S
from controller.safety.retract import retract
from controller.safety.monitor import Level, SafetyMonitor
from firmware_bridge.client import MotionOutcome
from hardware.sim.ground_truth import GroundTruth
from hardware.sim.server import SimServer
from planning.kinematics import ArmModel
from planning.motion.planner import MotionPlanner

pytestmark = pytest.mark.hil


def _wait(predicate, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    pause = threading.Event()
    while not predicate():
        assert time.monotonic() < deadline, "timed out"
        pause.wait(0.05)


def _topple(world, engine) -> None:
    """Knock the upper half of the tower over, away from the arm."""
    truth = GroundTruth(world)
    away = -np.append(world.cell.arm.base_position[:2] - np.array(world.cell.tower.position), 0.0)
    away /= np.linalg.norm(away)
    for block in world.blocks:
        slot = truth.slot_of(block.index)
        if slot is not None and slot[0] >= 9:
            joint = world.model.body_jntadr[world.block_body[block.index]]
            dof = world.model.jnt_dofadr[joint]
            world.data.qvel[dof:dof + 3] = away * 0.8 * (slot[0] - 8) / 10


def test_a_fall_stops_the_arm_and_it_retracts_home_without_reaching_in(default_cell):
    planner = MotionPlanner(default_cell)
    with SimServer(default_cell, 1) as server, \
            CellLink(default_cell, server.serial_path, server.camera_urls(),
                     stall_s=SIM_STALL_S) as link:
        arm = link.arm
        seen = link.observe().observation
        push = planner.push(np.array(arm.telemetry().q_set), 12, 1, 0.005, tower_layers=19,
                            end=-planner.tower.front_end(12))
        monitor = SafetyMonitor(link, ArmModel(default_cell))
        with monitor:
            monitor.watch(seen.pose, seen.top_layer + 2)
            monitor.arm_at_work = True
            transit = push.step("transit").trajectory
            arm.follow(transit.times, transit.positions)
            # a slow turn of the wrist beside the tower's face: the arm at work, staying put
            q0 = np.array(arm.telemetry().q_set)
            times = np.linspace(0.0, 20.0, 60)
            goal = q0 + np.outer(np.linspace(0.0, 1.0, 60), [0, 0, 0, 0, 0, 1.0])
            handle = arm.follow(times, goal, wait=False)
            server.locked(_topple)
            result = arm.wait_motion(handle, timeout_s=60.0)
            assert monitor.fell_t is not None and result.outcome is MotionOutcome.STOPPED
            _wait(lambda: monitor.events and monitor.events[-1].kind == "fall", 5.0)
            assert monitor.level is Level.FALLEN
            assert server.truth.tower_fell()

            path = []
            arm.on_telemetry(lambda t: path.append(np.array(t.q)))
            done = retract(arm, planner, 20)
            assert done.endswith("went home"), done
            assert np.allclose(arm.telemetry().q, planner.arm.home, atol=0.02)
        # the tool backs away first, and never enters the column the tower stood in
        centre = np.array(default_cell.tower.position)
        half = default_cell.blocks.length.mean / 2 + 0.003
        top = 19 * default_cell.blocks.height.mean
        frames = ("grasp", *planner.arm.fingertip_frames)
        points = [[planner.tower.pose.inv() * planner.arm.fk(q, f).t for f in frames]
                  for q in path[::10]]
        inside = [p for sample in points for p in sample
                  if np.all(np.abs(p[:2]) < half) and p[2] < top]
        assert inside == []
        away = [float(np.linalg.norm(planner.arm.fk(q, "grasp").t[:2] - centre)) for q in path[::10]]
        backed = next(i for i, d in enumerate(away) if d > away[0] + 0.05)
        assert min(away[:backed]) > away[0] - 0.002
