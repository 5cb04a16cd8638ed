"""How fast the arm moves: the speeds and speed-ups of straight tool moves (each kind of contact
with the tower has its own), the share of the joints' speed limits transits use, and the timing of
a straight move's equal segments as the device runs them.

Speeds in m/s, accelerations in m/s^2.
"""

from __future__ import annotations

import numpy as np

APPROACH_SPEED = 0.03
PULL_SPEED = 0.03
PLACE_SPEED = 0.04
PUSH_HOME_SPEED = 0.02
PLACE_SLOW_SPEED = 0.004
LINE_ACCEL = 0.1         # m/s^2, straight moves' speed-up and slow-down (0.13 N on the tool)
# Straight moves that sense nothing go faster and speed up harder: moves away from a block the
# fingertip pushed or the fingers let go (a probe's retreat, a back-off, the place's back-off, up
# and out in one) and the fingertip's unguarded approaches to faces the cameras measured or the
# place has just set down, which end just short of the face (the planner's CONTACT_LEAD); the
# wrist's reading of the tool's own acceleration (0.6 N) would trip no guard there, and the tare
# before the next guarded move waits for it to die down. (0.45 m/s^2 sampled finely takes the time
# 0.3 m/s^2 took when a move's first 2 mm segment started as a step in speed.) The grasp's approach is guarded (the
# controller's GRASP_GUARD_N), the approach of a push that puts a tested block back ends at a face
# estimated from the probe's travel, and the push home's retreat leaves a block just set down: they
# keep APPROACH_SPEED and LINE_ACCEL. An earlier try that ran the place's descent, back-off and
# lift at the free pace and its push home at 20 mm/s left a block placed in a seed-1 match out of
# its slot (which change did it was not isolated). The push home went at 10 mm/s while a move's
# first waypoint was a step in speed (at 15 mm/s it read 0.2-0.3 N on the wrist and tripped a 0.3 N
# guard as it started, seed 5); with the speed-up sampled finely (RAMP_TICK_S) a free-air move
# reads 0.18-0.20 N at 15-30 mm/s, the tool's mass times LINE_ACCEL and the noise, and it goes at
# 20 mm/s.
FREE_SPEED = 0.06
FREE_ACCEL = 0.45
TRANSIT_SPEED_SCALE = 0.75
# Carrying a block, transits keep to half speed: at that speed a block once turned over in the grip
# on the way to the top (docs/turn.md).
HELD_TRANSIT_SPEED_SCALE = 0.5


def retreat_pace(gentle: bool) -> dict:
    """`speed` and `accel` of a straight move that senses nothing (away from a block, or an
    unguarded approach): the free pace, or the gentle one near blocks that must not be disturbed
    or faces whose place is only estimated."""
    return dict(speed=APPROACH_SPEED, accel=LINE_ACCEL) if gentle else \
        dict(speed=FREE_SPEED, accel=FREE_ACCEL)


# A straight move's speed-up and slow-down are sampled this often. The device interpolates between
# waypoints, so each segment's speed is a step, and the wrist sensor feels every step as the tool's
# mass times its acceleration. Sampled every 2 mm of path, as the cruise is, a move's first
# segment jumped from rest to 10-14 mm/s: recorded pulls read up to 1.8 N in their first fifth,
# against under 0.5 N of drag from a loose block, and a push home at 15 mm/s tripped a 0.3 N guard
# as it began.
RAMP_TICK_S = 0.01


def ramped_samples(length: float, step: float, speed: float, accel: float
                   ) -> tuple[np.ndarray, np.ndarray]:
    """Where along a straight move of `length` its waypoints lie, and when the device reaches
    each: every `step` of the path, and every RAMP_TICK_S while the move speeds up from rest to
    `speed` at `accel` and slows down again (a triangle when the move is too short to reach
    `speed`). Returns (arc lengths, times), both from 0."""
    if length <= 0:
        return np.zeros(1), np.zeros(1)
    peak = min(speed, float(np.sqrt(accel * length)))
    ramp_s, ramp_len = peak / accel, peak * peak / (2 * accel)
    total_t = 2 * ramp_s + (length - 2 * ramp_len) / peak
    ticks = np.arange(1, int(np.ceil(ramp_s / RAMP_TICK_S))) * RAMP_TICK_S
    speeding = 0.5 * accel * ticks ** 2
    n = max(1, int(np.ceil(length / step)))
    s = np.unique(np.concatenate([np.linspace(0.0, length, n + 1), speeding, length - speeding]))
    s = s[np.concatenate([[True], np.diff(s) > 1e-7])]     # points that coincide, once
    t = np.where(s < ramp_len, np.sqrt(2 * np.maximum(s, 0.0) / accel),
                 np.where(s > length - ramp_len,
                          total_t - np.sqrt(2 * np.maximum(length - s, 0.0) / accel),
                          ramp_s + (s - ramp_len) / peak))
    return s, t
