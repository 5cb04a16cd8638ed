"""Tool orientations for each kind of contact with the tower.

Push (fingertip frame): the tool's x axis lies along the push (its sign set by which end of the rod
pushes); the rod hangs along -y, so with y up the tip is below the gripper, which is what lets the
fingertip reach layer 1 while the wrist stays above the table. Candidates roll the tool about the
push axis. The two ends of the rod put the wrist on opposite sides of the block.

Grasp (grasp frame): z points into the tower along the block axis, fingers close along y across
the block's width. Candidates pitch the approach down so the gripper body rides above the table
at low layers, and roll the gripper over (x up or down).

Place (grasp frame): whatever the grasp was, the held block must lie level along its new layer.
"""

from __future__ import annotations

import numpy as np
from spatialmath import SE3

UP = np.array([0.0, 0.0, 1.0])

PUSH_ROLLS_DEG = (0.0, 25.0, -25.0, 180.0, 155.0, -155.0)
GRASP_PITCHES_DEG = (0.0, 20.0, 35.0, 45.0)
GRASP_ROLLS_DEG = (0.0, 180.0)


def pose(rotation: np.ndarray, position: np.ndarray) -> SE3:
    T = np.eye(4)
    T[:3, :3] = rotation
    T[:3, 3] = position
    return SE3(T, check=False)


def _rotate(v: np.ndarray, axis: np.ndarray, angle: float) -> np.ndarray:
    """Rodrigues rotation of v about the unit `axis`."""
    return (v * np.cos(angle) + np.cross(axis, v) * np.sin(angle)
            + axis * (axis @ v) * (1 - np.cos(angle)))


def push_orientations(push_dir: np.ndarray, tip_sign: float = 1.0) -> list[np.ndarray]:
    """Rotations with `tip_sign` * x along `push_dir` (horizontal), y up rolled by each candidate."""
    x = tip_sign * push_dir / np.linalg.norm(push_dir)
    out = []
    for roll in PUSH_ROLLS_DEG:
        y = _rotate(UP, x, np.radians(roll))
        out.append(np.column_stack([x, y, np.cross(x, y)]))
    return out


def grasp_orientations(into_dir: np.ndarray, pitches_deg=GRASP_PITCHES_DEG) -> list[np.ndarray]:
    """Rotations with z along `into_dir` pitched down by each candidate (approach from above), y
    horizontal across the block, x completing the frame; each also rolled over by 180 degrees."""
    axis = into_dir / np.linalg.norm(into_dir)
    across = np.cross(UP, axis)
    across /= np.linalg.norm(across)
    out = []
    for pitch in pitches_deg:
        # Tilting z downward (toward -UP) about the across axis.
        z = _rotate(axis, across, np.radians(pitch))
        for roll in GRASP_ROLLS_DEG:
            y = across if roll == 0.0 else -across
            x = np.cross(y, z)
            out.append(np.column_stack([x, y, z]))
    return out


def holding_orientations(into_dir: np.ndarray, held_direction: np.ndarray) -> list[np.ndarray]:
    """Rotations that hold a block (its axis `held_direction` in the grasp frame, as gripped) level
    along `into_dir`, with the fingers' closing axis y horizontal; one for each sign of y.

    The held axis lies in the grasp frame's x-z plane at angle a from z toward x; the tool's z is
    then turned by -a from `into_dir` in the plane spanned by `into_dir` and y x `into_dir`."""
    u = into_dir / np.linalg.norm(into_dir)
    across = np.cross(UP, u)
    across /= np.linalg.norm(across)
    b = np.asarray(held_direction, float)
    a = np.arctan2(b[0], b[2])
    out = []
    for y in (across, -across):
        w = np.cross(y, u)
        z = np.cos(a) * u - np.sin(a) * w
        out.append(np.column_stack([np.cross(y, z), y, z]))
    return out
