"""Back the way the tool came: a move away from a push that the straight planner cannot plan
from where the arm stopped runs the push's own joint path in reverse (the way in was planned and
run a moment before)."""

from __future__ import annotations

import numpy as np

from planning.motion.contact_geometry import MAX_JOINT_STEP
from planning.motion.paces import APPROACH_SPEED, LINE_ACCEL, LINE_STEP, ramped_segments
from planning.motion.planner import MotionPlanner
from planning.motion.plans import MotionPlan, MoveStep, PlanError
from planning.motion.trajectory import JointTrajectory

# A retraced path: a waypoint less than MIN_BACK behind the tool is where the tool is (passed);
# the arm is on the path it came by when its tool is within a line step of the waypoint behind
# it, within ON_PATH_M of that line and turned less than ON_PATH_RAD from its orientation (a
# guard stop leaves it on the line, between two waypoints).
MIN_BACK = 1e-5
ON_PATH_M = 0.001
ON_PATH_RAD = 0.01


def _turned(a: np.ndarray, b: np.ndarray) -> float:
    """The angle (rad) between two rotation matrices."""
    return float(np.arccos(np.clip((np.trace(a.T @ b) - 1) / 2, -1.0, 1.0)))


def retrace(planner: MotionPlanner, q_now: np.ndarray, frame: str,
            came_by: tuple[JointTrajectory, ...], direction: np.ndarray, *, tower_layers: float,
            exempt: tuple[str, ...] = (), label: str = "retrace", speed: float = APPROACH_SPEED,
            accel: float = LINE_ACCEL) -> MotionPlan:
    """Back the way the tool came: the joint paths `came_by` (in the order they ran, each a
    straight move of `frame` along `direction` (unit length is not needed) at one
    orientation, as a push's approach and push and a push-through's move on), run in reverse
    from where the arm stopped on them (`q_now`) to where the first began, never passing a
    waypoint further in than the tool is. For a move away from a push that the straight
    planner cannot plan from where the arm stopped: the way in was planned and run."""
    what = f"cannot retrace '{label}'"
    q_now = np.asarray(q_now, float)
    direction = np.asarray(direction, float) / np.linalg.norm(direction)
    waypoints = np.vstack([t.positions for t in came_by])
    poses = [planner.arm.fk(q, frame) for q in waypoints]
    along = np.array([p.t @ direction for p in poses])
    now = planner.arm.fk(q_now, frame)
    here = float(now.t @ direction)
    # only waypoints behind the tool: none is passed on the way out
    behind = [i for i in range(len(waypoints)) if along[i] < here - MIN_BACK]
    off = (now.t - poses[0].t) - (here - along[0]) * direction
    # stopped between two waypoints, a line step apart at most
    if not behind or here - along[behind[-1]] > LINE_STEP + MIN_BACK or \
            np.linalg.norm(off) > ON_PATH_M or \
            _turned(now.R, poses[behind[-1]].R) > ON_PATH_RAD or \
            np.max(np.abs(waypoints[behind[-1]] - q_now)) > MAX_JOINT_STEP:
        raise PlanError(f"{what}: the arm is not on the path it came by")
    path, at = [q_now], [here]
    for i in reversed(behind):
        if at[-1] - along[i] > MIN_BACK:
            path.append(waypoints[i])
            at.append(float(along[i]))
    path = np.array(path)
    try:
        planner.refuse_contacts_at_work(path[1:], tower_layers, exempt)
        return MotionPlan("straight", (MoveStep(label, planner.timed(
            path, 1.0, ramped_segments(here - np.array(at), speed, accel))),))
    except PlanError as exc:
        raise PlanError(f"{what}: {exc}") from None
