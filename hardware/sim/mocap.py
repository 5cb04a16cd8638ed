"""Moving the simulated person's hand and finger (MuJoCo mocap bodies): turns about the vertical,
quaternions, a weld that holds a gripped block to the hand (and the force it holds it with), and
the overlap test that says when a
hand is inside the workspace."""

from __future__ import annotations

import mujoco
import numpy as np

from hardware.sim.world import SimWorld


def weld(world: SimWorld, grip: int, hand_body: int, body: int) -> None:
    """Switch on the weld `grip` between `hand_body` and `body`, holding `body` where it is now
    relative to the hand."""
    m, data = world.model, world.data
    mujoco.mj_forward(m, data)
    hand_rot = data.xmat[hand_body].reshape(3, 3)
    rel = hand_rot.T @ (data.xpos[body] - data.xpos[hand_body])
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, (hand_rot.T @ data.xmat[body].reshape(3, 3)).flatten())
    m.eq_obj2id[grip] = body
    m.eq_data[grip, 3:6] = rel
    m.eq_data[grip, 6:10] = quat
    data.eq_active[grip] = 1


def weld_force(world: SimWorld, grip: int) -> np.ndarray:
    """The force (world frame, N) the weld `grip` holds its block with; zero when it is off."""
    data = world.data
    rows = np.flatnonzero((data.efc_type == mujoco.mjtConstraint.mjCNSTR_EQUALITY)
                          & (data.efc_id == grip))
    if len(rows) < 3:
        return np.zeros(3)
    return np.asarray(data.efc_force[rows[:3]], float)


def overlaps_square(points: np.ndarray, axes: np.ndarray, half: float) -> bool:
    """Whether a box, its corners `points` (N, 2, tower frame, table plane) and its own axes in
    that plane `axes` (2, 2), overlaps the square |x|, |y| <= half: no separating axis among the
    square's and the box's (exact for a box turned about the vertical only, as the hand is)."""
    square = np.array([[x, y] for x in (-half, half) for y in (-half, half)])
    for n in (np.array([1.0, 0.0]), np.array([0.0, 1.0]), *axes):
        if np.linalg.norm(n) < 1e-9:
            continue
        a, b = points @ n, square @ n
        if a.max() < b.min() or b.max() < a.min():
            return False
    return True


def yaw_quat(yaw: float) -> np.ndarray:
    return np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])


def yaw_of(xmat: np.ndarray) -> float:
    r = np.asarray(xmat).reshape(3, 3)
    return float(np.arctan2(r[1, 0], r[0, 0]))


def rotate_z(v: np.ndarray, angle: float) -> np.ndarray:
    c, s = np.cos(angle), np.sin(angle)
    return np.array([c * v[0] - s * v[1], s * v[0] + c * v[1], v[2]])


def quat_mul(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    out = np.zeros(4)
    mujoco.mju_mulQuat(out, np.asarray(a, float), np.asarray(b, float))
    return out


def slerp(a: np.ndarray, b: np.ndarray, t: float) -> np.ndarray:
    a, b = np.asarray(a, float), np.asarray(b, float)
    if a @ b < 0:
        b = -b
    q = a + (b - a) * t          # short arcs: a normalised lerp is close enough for a hand
    return q / np.linalg.norm(q)
