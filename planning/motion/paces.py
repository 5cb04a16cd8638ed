"""How fast the arm moves: the speeds and speed-ups of straight tool moves (each kind of contact
with the tower has its own), the share of the joints' speed limits transits use, and the timing of
a straight move's segments as the device runs them.

Speeds in m/s, accelerations in m/s^2.
"""

from __future__ import annotations

import numpy as np

APPROACH_SPEED = 0.03
PULL_SPEED = 0.03
PLACE_SPEED = 0.04
PUSH_HOME_SPEED = 0.02
PLACE_SLOW_SPEED = 0.004
PLACE_FEEL_SPEED = 0.01  # the guarded descent past the tops of blocks already in the layer
LINE_ACCEL = 0.1         # m/s^2, straight moves' speed-up and slow-down (0.13 N on the tool)
# Straight moves that sense nothing go faster and speed up harder: moves away from a block the
# fingertip pushed or the fingers let go (a probe's retreat, a back-off, the place's back-off, up
# and out in one) and the fingertip's unguarded approaches to faces the cameras measured or the
# place has just set down, which end just short of the face (the planner's CONTACT_LEAD); the wrist's reading of the
# tool's own acceleration (0.4 N) would trip no guard there. The grasp's approach is guarded (the
# controller's GRASP_GUARD_N), the approach of a push that puts a tested block back ends at a face
# estimated from the probe's travel, and the push home's retreat leaves a block just set down: they
# keep APPROACH_SPEED and LINE_ACCEL. An earlier try that ran the place's descent, back-off and
# lift at the free pace and its push home at 20 mm/s left a block placed in a seed-1 match out of
# its slot (which change did it was not isolated). At 15 mm/s the push home's first waypoint's
# step in speed read 0.2-0.3 N on the wrist, and tripped a 0.3 N guard as it started (seed 5);
# since then a push under a light guard starts gently (LIGHT_ACCEL), and the push home runs at
# 20 mm/s (3.4 s to 1.4 s under a heavier guard; seed 4: three blocks pushed home lay 0.5-1.5 mm
# along their slots, truth).
FREE_SPEED = 0.06
FREE_ACCEL = 0.3
TRANSIT_SPEED_SCALE = 0.75
# Carrying a block, transits keep to half speed: at that speed a block once turned over in the grip
# on the way to the top (docs/turn.md).
HELD_TRANSIT_SPEED_SCALE = 0.5
LINE_STEP = 0.002        # m, Cartesian sampling of straight moves
MIN_LINE = 1e-7          # m: a straight move shorter than this goes nowhere
MIN_SEGMENT_S = 1e-3     # s, the least time a straight move's segment takes
# A push under a light guard (high in the tower the safe push force is 0.2-0.3 N) must not read its
# own start as resistance. The device runs each segment between waypoints at a constant speed, so
# a move begins with a step in speed, which the wrist reads as about 26 N per m/s on the simulated
# cell (0.25 N for a step to 10 mm/s). With LINE_ACCEL and 2 mm samples a push-through starts with a
# step to 14 mm/s: in the simulated cell (seed 1, guard 0.25 N) four blocks that had just slid at
# 0.12-0.15 N under the probe each tripped it 16-24 ms in, at 0.23-0.26 N, and stayed put. Sampled
# every 0.5 mm and sped up at LIGHT_ACCEL, the first step is to 2.2 mm/s (about the probe's pace, 2-3 mm/s) and the
# same four went through, peaking at 0.14-0.21 N (2.8 s for 22 mm in place of 1.5 s).
# Only the start need be that gentle: slowing down, the arm holds the tool back, and the wrist
# reads that as a pull, away from the guard's direction, never as resistance. But the pull is
# taken off any resistance met then, so the push's last millimetres would meet that much more
# than its guard before it trips: at LINE_ACCEL about 0.13 N on the 1.3 kg tool (60 % over a
# 0.21 N guard). Such a push slows down at LIGHT_DECEL: about 0.04 N. A 24 mm push home at
# 20 mm/s is timed 2.4 s in place of 2.9 s with both ramps at LIGHT_ACCEL; a 22 mm push-through at
# 15 mm/s 2.3 s in place of 2.8 s.
LIGHT_GUARD_N = 0.5
LIGHT_ACCEL = 0.01
LIGHT_DECEL = 0.03
LIGHT_STEP = 0.0005


def retreat_pace(gentle: bool) -> dict:
    """`speed` and `accel` of a straight move that senses nothing (away from a block, or an
    unguarded approach): the free pace, or the gentle one near blocks that must not be disturbed
    or faces whose place is only estimated."""
    return dict(speed=APPROACH_SPEED, accel=LINE_ACCEL) if gentle else \
        dict(speed=FREE_SPEED, accel=FREE_ACCEL)


def guarded_pace(guard_n: float | None) -> dict:
    """`accel`, `decel` and `step` (sampling) of a guarded push: gentler starts under a light
    guard."""
    if guard_n is not None and guard_n < LIGHT_GUARD_N:
        return dict(accel=LIGHT_ACCEL, decel=LIGHT_DECEL, step=LIGHT_STEP)
    return dict(accel=LINE_ACCEL, decel=LINE_ACCEL, step=LINE_STEP)


def ramped_durations(length: float, n: int, speed: float, accel: float,
                     decel: float | None = None) -> np.ndarray:
    """Durations of the n equal segments of a straight move that speeds up at `accel` (LINE_ACCEL
    for a move that senses force) and slows down at `decel` (default: `accel`).
    The device interpolates between waypoints, so each segment's speed is a step, and the wrist
    sensor feels every jolt as the tool's mass times its acceleration: recorded pulls read up to
    1.8 N in their first fifth, against under 0.5 N of drag from a loose block."""
    return ramped_segments(np.linspace(0.0, length, n + 1), speed, accel, decel)


def ramped_segments(at: np.ndarray, speed: float, accel: float,
                    decel: float | None = None) -> np.ndarray:
    """Durations of the segments between the waypoints of a tool path at distances `at` (m along
    the path, increasing), timed as `ramped_durations` times equal ones."""
    decel = accel if decel is None else decel
    if min(speed, accel, decel) <= 0:
        raise ValueError(f"a move needs a speed and ramps above zero, got {speed}, {accel}, {decel}")
    at = np.asarray(at, float)
    n = len(at) - 1
    length = float(at[-1] - at[0])
    if length <= MIN_LINE:
        # A move of no length (a retreat from where the tool already is) still needs
        # increasing times; 0/0 here once sent the device a trajectory timed in NaNs.
        return np.full(n, MIN_SEGMENT_S)
    steps = np.diff(at)
    mid = (at[:-1] + at[1:]) / 2 - at[0]
    rate = np.minimum(speed, np.sqrt(2 * np.minimum(accel * mid, decel * (length - mid))))
    # a segment of no length at either end would be 0/0 (no rate there yet)
    durations = np.divide(steps, rate, out=np.zeros_like(steps), where=steps > 0)
    return np.maximum(durations, MIN_SEGMENT_S)
