"""Timed joint trajectories: waypoints with times, followed by linear interpolation on the device.

Timing: each segment gets at least the duration its slowest joint needs at the joint's speed limit
(scaled by `speed_scale`) and at least what a Cartesian speed asks for; the path is then run with a
trapezoidal rate profile so no joint starts or stops faster than its acceleration limit allows.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


# A joint this little past its limit (rad) is at it: a trajectory is checked to this, and a move
# that starts where the arm reports itself starts there (planning/motion/transit.py).
LIMIT_TOL_RAD = 1e-6


class TrajectoryError(ValueError):
    """A trajectory that breaks a joint's position or speed limit."""


@dataclass(frozen=True)
class JointTrajectory:
    times: np.ndarray       # (N,) s, starting at 0, strictly increasing
    positions: np.ndarray   # (N, J) rad

    @property
    def duration(self) -> float:
        return float(self.times[-1])

    @property
    def start(self) -> np.ndarray:
        return self.positions[0]

    @property
    def end(self) -> np.ndarray:
        return self.positions[-1]

    def sample(self, t: float) -> np.ndarray:
        """Joint positions at time t (held at the ends)."""
        return np.array([np.interp(t, self.times, self.positions[:, j])
                         for j in range(self.positions.shape[1])])

    def velocities(self) -> np.ndarray:
        """(N-1, J) joint speeds of each segment, rad/s."""
        return np.diff(self.positions, axis=0) / np.diff(self.times)[:, None]

    def check(self, q_min: np.ndarray, q_max: np.ndarray, speed_max: np.ndarray,
              tol: float = LIMIT_TOL_RAD) -> None:
        """Raise TrajectoryError naming the joint and waypoint that breaks a limit (by more than
        `tol`: rad past a position limit, a fraction of a speed limit)."""
        if not (np.all(np.isfinite(self.times)) and np.all(np.isfinite(self.positions))):
            raise TrajectoryError("a waypoint's time or position is not a number")
        if len(self.times) < 2 or np.any(np.diff(self.times) <= 0):
            raise TrajectoryError("waypoint times must increase")
        low = np.argwhere(self.positions < q_min - tol)
        high = np.argwhere(self.positions > q_max + tol)
        for (i, j) in list(low) + list(high):
            raise TrajectoryError(f"joint {j + 1} at waypoint {i} is {np.degrees(self.positions[i, j]):.1f}"
                                  f" deg, outside {np.degrees(q_min[j]):.0f} to {np.degrees(q_max[j]):.0f}")
        speed = np.abs(self.velocities())
        over = np.argwhere(speed > speed_max * (1 + tol) + tol)
        for (i, j) in over:
            raise TrajectoryError(f"joint {j + 1} in segment {i} moves at {np.degrees(speed[i, j]):.0f} "
                                  f"deg/s, over its {np.degrees(speed_max[j]):.0f} deg/s limit")

    def then(self, other: JointTrajectory) -> JointTrajectory:
        """This trajectory followed by `other` (which must start where this one ends)."""
        if not np.allclose(self.end, other.start, atol=1e-6):
            raise TrajectoryError("trajectories do not join")
        times = np.concatenate([self.times, self.duration + other.times[1:]])
        return JointTrajectory(times, np.vstack([self.positions, other.positions[1:]]))


def time_path(waypoints: np.ndarray, speed_max: np.ndarray, accel_max: np.ndarray,
              speed_scale: float = 1.0, min_durations: np.ndarray | None = None) -> JointTrajectory:
    """Times for joint `waypoints` (N, J).

    `min_durations` (N-1,) are lower bounds per segment, e.g. Cartesian length over tool speed.
    Every joint stays within `speed_scale * speed_max`; the rate profile ramps up and down so the
    joint accelerations stay within `accel_max` (approximately: the ramp is resolved at the
    waypoints, so dense paths follow it closely).
    """
    waypoints = np.asarray(waypoints, float)
    if len(waypoints) < 2:
        raise TrajectoryError("a trajectory needs at least two waypoints")
    if not 0 < speed_scale <= 1:
        raise TrajectoryError(f"speed_scale must be in (0, 1], got {speed_scale}")
    steps = np.abs(np.diff(waypoints, axis=0))
    nominal = np.max(steps / (speed_max * speed_scale), axis=1)
    if min_durations is not None:
        nominal = np.maximum(nominal, min_durations)
    nominal = np.maximum(nominal, 1e-4)  # coincident waypoints still need distinct times
    s = np.concatenate([[0.0], np.cumsum(nominal)])
    total = s[-1]
    # Peak joint speed at full rate decides how long the ramp must be to respect accelerations.
    peak = np.max(steps / nominal[:, None], axis=0)
    ramp = float(np.max(peak / accel_max))
    times = _trapezoid_times(s, total, ramp)
    return JointTrajectory(times, waypoints)


def _trapezoid_times(s: np.ndarray, total: float, ramp: float) -> np.ndarray:
    """Times at which path coordinates `s` are reached with a rate that ramps linearly from 0 to
    1 over `ramp` seconds, holds, and ramps back down (a triangle when the path is short)."""
    if ramp <= 0:
        return s.copy()
    accel = 1.0 / ramp
    if total >= ramp:  # trapezoid: ramps cover ramp/2 of path each
        peak, s_ramp = 1.0, ramp / 2.0
    else:              # triangle
        peak = np.sqrt(total * accel)
        s_ramp = total / 2.0
    t_ramp = peak / accel
    t_cruise = (total - 2 * s_ramp) / peak
    times = np.empty_like(s)
    for i, si in enumerate(s):
        if si <= s_ramp:
            times[i] = np.sqrt(2.0 * si / accel)
        elif si <= total - s_ramp:
            times[i] = t_ramp + (si - s_ramp) / peak
        else:
            rest = max(total - si, 0.0)
            times[i] = 2 * t_ramp + t_cruise - np.sqrt(2.0 * rest / accel)
    # Keep times strictly increasing where floating point rounding ties them.
    for i in range(1, len(times)):
        if times[i] <= times[i - 1]:
            times[i] = times[i - 1] + 1e-6
    return times
