"""Trajectory buffering, checking and interpolation inside the device. Pure numpy, no I/O."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from firmware_bridge.messages import JointInfo, Reason

SPEED_TOLERANCE = 1.01   # rounding in f32 times and positions


class TrajectoryRejected(ValueError):
    def __init__(self, reason: Reason, detail: str):
        super().__init__(detail)
        self.reason = reason


@dataclass
class Upload:
    """A trajectory arriving in chunks; complete when every point is in."""

    traj_id: int
    total: int
    times: list[float]
    positions: list[tuple[float, ...]]

    @property
    def complete(self) -> bool:
        return len(self.times) == self.total


@dataclass(frozen=True)
class LoadedTrajectory:
    traj_id: int
    times: np.ndarray       # (N,) s from the start
    positions: np.ndarray   # (N, J) rad

    def target(self, t: float) -> np.ndarray:
        """Set-points at time t from the start: linear between points, held at the ends."""
        if t <= 0:
            return self.positions[0].copy()
        if t >= self.times[-1]:
            return self.positions[-1].copy()
        i = int(np.searchsorted(self.times, t, side="right")) - 1
        span = self.times[i + 1] - self.times[i]
        a = (t - self.times[i]) / span
        return self.positions[i] + a * (self.positions[i + 1] - self.positions[i])

    @property
    def duration(self) -> float:
        return float(self.times[-1])


def check_trajectory(upload: Upload, joints: tuple[JointInfo, ...]) -> LoadedTrajectory:
    """A complete upload as a trajectory the arm may follow, or TrajectoryRejected saying why."""
    times = np.array(upload.times, float)
    positions = np.array(upload.positions, float)
    if positions.ndim != 2 or positions.shape[1] != len(joints):
        raise TrajectoryRejected(Reason.BAD_TRAJECTORY,
                                 f"points have {positions.shape[-1]} joints, the arm has {len(joints)}")
    if len(times) < 2 or abs(times[0]) > 1e-6 or np.any(np.diff(times) <= 0):
        raise TrajectoryRejected(Reason.BAD_TRAJECTORY, "times must start at 0 and increase")
    q_min = np.array([j.q_min for j in joints])
    q_max = np.array([j.q_max for j in joints])
    speed = np.array([j.speed_max for j in joints])
    if np.any(positions < q_min - 1e-4) or np.any(positions > q_max + 1e-4):
        raise TrajectoryRejected(Reason.LIMIT, "a point lies outside the joint limits")
    velocity = np.abs(np.diff(positions, axis=0)) / np.diff(times)[:, None]
    if np.any(velocity > speed * SPEED_TOLERANCE + 1e-6):
        joint = int(np.argwhere(velocity > speed * SPEED_TOLERANCE + 1e-6)[0][1])
        raise TrajectoryRejected(Reason.LIMIT, f"joint {joint + 1} over its speed limit")
    return LoadedTrajectory(upload.traj_id, times, positions)


def straight_move(start: np.ndarray, goal: np.ndarray, joints: tuple[JointInfo, ...],
                  speed_scale: float, traj_id: int = 0) -> LoadedTrajectory:
    """A joint-space move from start to goal, every joint starting and arriving together along
    one smooth (cosine) profile, timed so that no joint's peak speed exceeds `speed_scale` of its
    own limit; used for homing."""
    speed = np.array([j.speed_max for j in joints]) * speed_scale
    # A cosine profile peaks at pi/2 times the mean speed: this span keeps the peak under `speed`.
    span = max(float(np.max(np.abs(goal - start) / speed)) * np.pi / 2, 0.05)
    s = (1 - np.cos(np.linspace(0.0, np.pi, 64))) / 2
    times = np.linspace(0.0, span, 64)
    positions = start + np.outer(s, goal - start)
    return LoadedTrajectory(traj_id, times, positions)
