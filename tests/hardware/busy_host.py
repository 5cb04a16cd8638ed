"""A host for tests/hardware/test_busy_machine_hil.py, in a process of its own so the test can
keep it from running: it drives the simulated arm on the pty given back and forth, saying
`moving N` before each move and `done` at the end; any error ends it with its words and exit 1."""

import sys

import numpy as np

from controller.commands.cell_cmd import load
from controller.commands.play_cmd import SIM_STALL_S
from firmware_bridge.client import ArmClient, MotionOutcome
from firmware_bridge.errors import ArmError
from hardware.cells import DEFAULT_CELL
from planning.motion.planner import MotionPlanner

MOVES = 8


def main(serial: str) -> int:
    planner = MotionPlanner(load(DEFAULT_CELL))
    try:
        with ArmClient(serial, stall_s=SIM_STALL_S) as arm:
            arm.enable()
            arm.home(timeout_s=30)
            q0 = np.array(arm.telemetry().q)
            goal = q0 + np.radians([15, -10, 10, 10, -15, 20])
            for n in range(MOVES):
                a, b = (q0, goal) if n % 2 == 0 else (goal, q0)
                print(f"moving {n}", flush=True)
                trajectory = planner.transit(a, b, tower_layers=18).moves[0].trajectory
                outcome = arm.follow(trajectory.times, trajectory.positions).outcome
                if outcome is not MotionOutcome.DONE:
                    print(f"move {n} ended {outcome}", flush=True)
                    return 1
            if arm.telemetry().fault:
                print("the arm faulted", flush=True)
                return 1
    except ArmError as exc:
        print(f"error: {type(exc).__name__}: {exc}", flush=True)
        return 1
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
