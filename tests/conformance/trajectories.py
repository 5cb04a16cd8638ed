"""Trajectories for the conformance suite: uploads in chunks as the document lays them out."""

from __future__ import annotations

import numpy as np

from firmware_bridge import messages as m


def upload(host, traj_id: int, times, positions) -> m.Message:
    """TRAJ_LOAD every chunk; the answer to the last (each earlier one must be ACK)."""
    times = np.asarray(times, float)
    positions = np.asarray(positions, float)
    per_frame = m.points_per_frame(positions.shape[1])
    answer = None
    for start in range(0, len(times), per_frame):
        stop = min(start + per_frame, len(times))
        points = tuple((float(times[i]), tuple(float(v) for v in positions[i]))
                       for i in range(start, stop))
        answer = host.command(m.TrajLoad(traj_id, start, len(times), points))
        if stop < len(times):
            assert isinstance(answer, m.Ack), (start, answer)
    return answer


def ramp(start, delta, duration_s: float, n: int = 20):
    """n points from `start` by `delta` (rad) over `duration_s`, evenly."""
    times = np.linspace(0.0, duration_s, n)
    return times, np.asarray(start, float) + np.outer(np.linspace(0.0, 1.0, n), delta)


def here(host) -> np.ndarray:
    """Where a trajectory must start: the set-points."""
    return np.array(host.telemetry().q_set)


def start_moving(host, traj_id: int, delta, duration_s: float):
    """Upload a ramp from where the arm is and run it; its positions, and the mark of what the
    device sent from the run on."""
    times, positions = ramp(here(host), delta, duration_s)
    assert isinstance(upload(host, traj_id, times, positions), m.Ack)
    mark = host.mark()
    assert isinstance(host.command(m.TrajRun(traj_id)), m.Ack)
    return positions, mark
