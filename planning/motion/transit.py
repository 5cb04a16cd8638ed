"""Transits: joint-space moves between two configurations, every part of the arm (and a held
block) out of the keep-out box around the tower and off the table (planning/motion/planner.py
plans them with its own collision checks and timing)."""

from __future__ import annotations

from functools import reduce

import numpy as np

from planning.collision import describe
from planning.motion.contact_geometry import CONTACT_MARGIN, FINGER_MARGIN, TRANSIT_SEARCHES
from planning.motion.paces import HELD_TRANSIT_SPEED_SCALE, TRANSIT_SPEED_SCALE
from planning.motion.plans import PlanError
from planning.motion.rrt import plan_path
from planning.motion.trajectory import LIMIT_TOL_RAD, JointTrajectory


def transit_between(planner, q_start, q_goal, tower_layers, held, wide, close) -> JointTrajectory:
    """A joint-space path from `q_start` to `q_goal` for `planner` (its arm, its collision
    checks, its timing): the ends held to the contact margins, the path between to the wide
    transit margin (`wide`), near its ends to the ends' own (`close`), timed leg by leg."""
    q_start, q_goal = np.asarray(q_start, float), np.asarray(q_goal, float)
    # The start is where the arm reports itself, over a wire that carries 32-bit floats: every
    # limit of the default arm (pi, 2 pi) rounds outward by 0.9-1.7e-7 rad there, so an arm sent
    # to a limit reports a set-point just past it. Held to the limits strictly, no transit could
    # start from there (tower 11 at c1bacc1: a forced move found every block "outside the joint
    # limits", and the tower fell); the path starts at the limit instead, the arm at it.
    if planner.arm.within_limits(q_start, tol=LIMIT_TOL_RAD):
        q_start = np.clip(q_start, planner.arm.q_min, planner.arm.q_max)
    for q, what in ((q_start, "start"), (q_goal, "goal")):
        if not planner.arm.within_limits(q):
            raise PlanError(f"transit {what} is outside the joint limits")
        # The ends may sit in the tower's working zone (approach poses): they are held to the
        # contact margins, the path between them to the wide transit margin.
        found = planner.checker.contacts(q, tower_layers, CONTACT_MARGIN, held=held,
                                         fine_margin=FINGER_MARGIN)
        if found:
            raise PlanError(f"transit {what} is in collision: {describe(found)}")

    def clear(qs):
        # near either end the path may come as close as the ends themselves, no closer: a
        # transit between probes (tower 11, b53e647) drove the probe head-on into something
        # at 599 N, and near its ends a path was not checked at all
        qs = np.atleast_2d(qs)
        ok = planner._clear_many(qs, wide)
        near = ~ok & near_ends(qs, q_start, q_goal)
        if near.any():
            ok[near] = planner._clear_many(qs[near], close)
        return ok
    path = None
    # A search has a fixed budget and a fixed random stream: in a seed-2 game the carry of a
    # block from layer 7 to layer 22 found no path, and the turn stopped with the block held.
    for salt in range(TRANSIT_SEARCHES):
        path = plan_path(q_start, q_goal, clear, planner.arm.q_min, planner.arm.q_max, salt=salt)
        if path is not None:
            break
    if path is None:
        raise PlanError("no collision-free transit found between the two configurations")
    # The path's corners are stops. Timed as one, the arm cruised through them, and a joint
    # that turns there was asked for 80-240 rad/s^2 against the 4-6 its drive allows: in the
    # simulated cell (seed 3) the shoulder fell 0.33 rad behind its set-point, every motor but
    # the last at its torque limit, and the firmware stopped the arm on a TRACKING fault.
    scale = TRANSIT_SPEED_SCALE if held is None else HELD_TRANSIT_SPEED_SCALE
    legs = [planner.timed(densify(a, b, 0.05), scale) for a, b in zip(path[:-1], path[1:])]
    return reduce(JointTrajectory.then, legs)


def near_ends(qs, a, b, tol=0.02) -> np.ndarray:
    """Which of the configurations (N, J) are within `tol` rad of either end: the ends may sit
    closer to the tower than the transit margin."""
    qs = np.atleast_2d(qs)
    return (np.max(np.abs(qs - a), axis=1) < tol) | (np.max(np.abs(qs - b), axis=1) < tol)


def densify(a, b, max_step) -> np.ndarray:
    """The straight joint line from a to b in steps of at most `max_step` (rad), both ends in."""
    n = max(1, int(np.ceil(np.max(np.abs(b - a)) / max_step)))
    return np.array([a + (b - a) * (i / n) for i in range(n + 1)])
