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
PUSH_HOME_SPEED = 0.01
PLACE_SLOW_SPEED = 0.004
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
# its slot (which change did it was not isolated). The push home keeps 10 mm/s: at 15 mm/s its
# first waypoint's step in speed read 0.2-0.3 N on the wrist, and tripped a 0.3 N guard as it
# started (seed 5).
FREE_SPEED = 0.06
FREE_ACCEL = 0.3
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


def ramped_durations(length: float, n: int, speed: float, accel: float) -> np.ndarray:
    """Durations of the n equal segments of a straight move that starts and stops at `accel`
    (LINE_ACCEL for a move that senses force).
    The device interpolates between waypoints, so each segment's speed is a step, and the wrist
    sensor feels every jolt as the tool's mass times its acceleration: recorded pulls read up to
    1.8 N in their first fifth, against under 0.5 N of drag from a loose block."""
    step = length / n
    mid = (np.arange(n) + 0.5) * step
    ramp = np.sqrt(2 * accel * np.minimum(mid, length - mid))
    return step / np.minimum(speed, ramp)
