"""Running motion plans on the arm: each move joined to where the arm is (a guarded stop leaves it
a little off), its force guard handed to the firmware, and before and after every move a check
that the turn need not stop (the safety monitor saw the tower fall). And the watch on a pulled
block in the fingers."""

from __future__ import annotations

import functools
from typing import Callable

import numpy as np

from controller.turn.report import HeldDropped, HeldTurned, TurnError
from firmware_bridge.client import ArmClient, MotionResult
from firmware_bridge.errors import ArmError, DeviceFault
from planning.motion.planner import MotionPlanner
from planning.motion.plans import GripStep, MotionPlan, MoveStep
from planning.motion.trajectory import JointTrajectory, time_path

# Stand still this long before taring, so the reading is the tool's weight only: after a robot
# turn's moves in the simulated cell the wrist reading is back within its noise (0.04-0.06 N at
# most over 50 ms) 0.15 s after the arm stops, and still off by up to 0.09 N 0.10-0.15 s after.
DWELL_S = 0.2
# A move starts from where the arm stands when it is this close to the move's start (rad, the
# largest joint); up to JOIN_MAX_RAD off, a tiny joint move joins the two first. Farther off is
# not a guarded stop's slack: a plan that must start elsewhere is planned again from here.
AT_START_RAD = 1e-3
JOIN_MAX_RAD = 0.05


def works_block(skill):
    """A block skill of the hands (`skill(self, source, ...)`): every move it plans may go where
    that block sticks out, and none where another does (planning/motion/planner.py
    `working_on`)."""
    @functools.wraps(skill)
    def working(self, source, *args, **kwargs):
        with self.planner.working_on(*source):
            return skill(self, source, *args, **kwargs)
    return working


class ArmMoves:
    """Runs plans on the arm: the turn's, the retract's after a fall, the safety benchmark's.
    `halted()` says why the moves must stop now, if they must."""

    def __init__(self, arm: ArmClient, planner: MotionPlanner,
                 halted: Callable[[], str | None] = lambda: None):
        self.arm, self.planner, self._halted = arm, planner, halted
        # each move, grip and tare as it ends: {"move", "start_s", "end_s"} in device time (the
        # gaps between them are the controller's own time: planning, choosing, looking), while a
        # turn has it noted (None: not noted)
        self.timeline: list[dict] | None = None

    def _timed(self, label: str, start: float) -> None:
        if self.timeline is not None:
            self.timeline.append({"move": label, "start_s": round(start, 3),
                                  "end_s": round(self.arm.device_time(), 3)})

    def push_direction(self, plan: MotionPlan, prefix: str = "") -> np.ndarray:
        """The way a push plan goes into the tower: from its approach's start, which stands well
        out, to the push's end (a push itself may be short)."""
        a = self.planner.arm.fk(plan.step(prefix + "approach").trajectory.start, plan.frame).t
        b = self.planner.arm.fk(plan.step(prefix + "push").trajectory.end, plan.frame).t
        return (b - a) / np.linalg.norm(b - a)

    def force_along(self, direction) -> float:
        return float(np.asarray(self.arm.telemetry().wrench[:3]) @ np.asarray(direction, float))

    def q(self) -> np.ndarray:
        """Where the arm is commanded to be: plans start here (the firmware insists)."""
        return np.array(self.arm.telemetry().q_set)

    def transit(self, goal: np.ndarray, layers: int | None) -> None:
        layers = layers or self.planner.cell.blocks.layers + 1
        self.run(self.planner.transit(self.q(), goal, tower_layers=layers))

    def run(self, plan: MotionPlan) -> None:
        for step in plan.steps:
            if isinstance(step, GripStep):
                self.grip(step)
            else:
                self.follow(step)

    def open_fully(self) -> None:
        start = self.arm.device_time()
        self.arm.gripper(self.planner.cell.tool.stroke, 1.0)
        self._timed("open", start)

    def grip(self, step: GripStep) -> float:
        """Open or close the fingers as a plan's step says; the opening they stopped at (m)."""
        start = self.arm.device_time()
        width = self.arm.gripper(step.width_m, max(step.force_n, 1.0))
        self._timed(step.label, start)
        return width

    def follow(self, step: MoveStep,
               during: Callable[[float, JointTrajectory], None] | None = None) -> MotionResult:
        """Run one move from wherever the arm is: a tiny joint move first joins the arm to the
        move's start if a guarded stop left it a little off. `during(start, trajectory)` runs
        while the move does (`start`: its device time); it may stop the arm."""
        start = self.arm.device_time()
        q = self.q()
        traj = step.trajectory
        gap = self.gap(traj, q)
        if gap > AT_START_RAD:
            if gap > JOIN_MAX_RAD:
                raise TurnError(f"{step.label}: the arm is {np.degrees(gap):.1f} deg from where the "
                                f"move starts")
            cell = self.planner.cell.arm
            join = time_path(np.array([q, traj.start]), cell.speed_max, cell.accel_max, 0.2)
            self.arm.follow(join.times, join.positions)
        guard = None
        if step.guard is not None:
            guard = (step.guard.direction, step.guard.threshold_n)
        self.check_halted(step.label)
        try:
            if during is None:
                result = self.arm.follow(traj.times, traj.positions, guard=guard)
            else:
                handle = self.arm.follow(traj.times, traj.positions, guard=guard, wait=False)
                try:
                    during(self.arm.device_time(), traj)
                except BaseException:
                    try:
                        self.arm.stop()    # nothing moves on that nobody watches
                    except ArmError:
                        pass               # the link's own failure is the one to tell
                    raise
                result = self.arm.wait_motion(handle)
        except DeviceFault as fault:
            raise DeviceFault(fault.fault, self._where(step.label)) from None
        self._timed(step.label, start)
        self.check_halted(step.label)
        return result

    def gap(self, trajectory: JointTrajectory, q: np.ndarray | None = None) -> float:
        """How far (rad, the largest joint) the arm (at `q`, or where it stands) is from where
        `trajectory` starts."""
        return float(np.max(np.abs(trajectory.start - (self.q() if q is None else q))))

    def _where(self, label: str) -> str:
        """The move a fault stopped, and what the wrist read then (N, tool frame): what to look
        into when a fault stops a turn."""
        try:
            force = np.asarray(self.arm.telemetry().wrench[:3], float)
        except ArmError:
            return f"the move '{label}'"
        return (f"the move '{label}' (the wrist read {np.linalg.norm(force):.0f} N: "
                f"{', '.join(f'{v:.0f}' for v in force)} in the tool's x, y, z)")

    def check_halted(self, label: str) -> None:
        reason = self._halted()
        if reason is not None:
            raise TurnError(f"{label}: {reason}")

    def dwell_and_tare(self) -> None:
        """Stand still a moment, then zero the wrist: the reading is the tool's weight only."""
        start = self.arm.device_time()
        self.arm.wait_for(lambda t: t.device_time >= start + DWELL_S, timeout_s=DWELL_S + 5)
        self.arm.tare()
        self._timed("tare", start)

    def come_to_face(self, push: MotionPlan) -> None:
        """Bring the fingertip to just short of a block's face and zero the wrist there, so the
        push that follows reads contact force only."""
        self.follow(push.step("transit"))
        self.follow(push.step("approach"))
        self.dwell_and_tare()


class HeldBlockWatch:
    """The fingers on a pulled block: closed on nothing, or opening or closing on the way to the
    top, the block is not held as planned and the turn stops rather than place air or set a
    turned block across the tower."""

    SLIP_M = 0.0015         # the fingers' opening may change this much while a block is carried

    def __init__(self, arm: ArmClient, block_width: float):
        self.arm, self.block_width = arm, block_width
        self.width: float | None = None      # the fingers' opening on the block after the pull

    def holds(self, width_m: float) -> bool:
        """Whether fingers stopped at this opening are on a block, not closed on air."""
        return width_m >= self.block_width / 2

    def check_held(self) -> bool:
        """After a pull the gripper must hold a block: closed on nothing means the block did not
        come out where planned (it slipped out), and carrying on would place air."""
        width = self.arm.telemetry().gripper_width_m
        if not self.holds(width):
            return False
        self.width = width
        return True

    def check_still_held(self) -> None:
        """Before the set-down: a block that turned in the fingers on the way up (seen in the
        simulated cell: turned over, the fingers 3.6 mm further apart) is not set down as
        planned: `HeldTurned`, the block still held over the tower. Fingers closed on nothing:
        `HeldDropped`, the block fell out of them."""
        if self.width is None:
            return
        width = self.arm.telemetry().gripper_width_m
        if not self.holds(width):
            raise HeldDropped(f"the block fell from the gripper on the way to the top (the fingers "
                              f"closed from {self.width * 1000:.1f} to {width * 1000:.1f} mm apart)")
        if abs(width - self.width) > self.SLIP_M:
            raise HeldTurned(f"the block turned in the gripper on the way to the top (the fingers "
                             f"went from {self.width * 1000:.1f} to {width * 1000:.1f} mm apart)")
