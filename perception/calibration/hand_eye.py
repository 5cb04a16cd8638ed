"""Hand-eye calibration for a fixed camera (eye-to-hand): the arm holds a ChArUco board in front of
the camera at several poses; from where the arm says its flange is (forward kinematics of the joint
readings) and where the camera sees the board, `cv2.calibrateHandEye` finds the camera's pose in
the arm's base frame.

For a fixed camera the flange poses go in inverted (base seen from the flange): the solver's
"camera to gripper" answer is then the camera's pose in the base frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from perception.calibration.charuco import CharucoFinder
from planning.game.board import DEFAULT_BOARD, BoardSpec

MIN_POSES = 4


class HandEyeError(RuntimeError):
    pass


@dataclass(frozen=True)
class HandEye:
    world_from_camera: np.ndarray
    poses: int
    residual_mm: float      # spread of the board's implied pose on the flange across views


def board_poses(images: list[np.ndarray], K: np.ndarray, dist: np.ndarray,
                spec: BoardSpec = DEFAULT_BOARD) -> list[np.ndarray | None]:
    """camera_from_board (4x4) for each image, None where the board is not seen well."""
    finder = CharucoFinder(spec)
    out = []
    for image in images:
        found = finder.find(image)
        if found is None:
            out.append(None)
            continue
        obj, img = found
        ok, rvec, tvec = cv2.solvePnP(obj, img, K, dist)
        if not ok:
            out.append(None)
            continue
        T = np.eye(4)
        T[:3, :3], _ = cv2.Rodrigues(rvec)
        T[:3, 3] = tvec.ravel()
        out.append(T)
    return out


def calibrate(world_from_flange: list[np.ndarray], camera_from_board: list[np.ndarray | None]) -> HandEye:
    """The camera's pose in the world (the arm's base frame) from matched flange and board poses."""
    pairs = [(F, B) for F, B in zip(world_from_flange, camera_from_board) if B is not None]
    if len(pairs) < MIN_POSES:
        raise HandEyeError(f"only {len(pairs)} poses show the board (need {MIN_POSES}); move the "
                           f"arm so the board faces the camera from different angles")
    if hasattr(cv2, "calibrateHandEye"):
        R_flange_from_world = [np.linalg.inv(F)[:3, :3] for F, _ in pairs]
        t_flange_from_world = [np.linalg.inv(F)[:3, 3] for F, _ in pairs]
        R_cam_board = [B[:3, :3] for _, B in pairs]
        t_cam_board = [B[:3, 3] for _, B in pairs]
        R, t = cv2.calibrateHandEye(R_flange_from_world, t_flange_from_world, R_cam_board,
                                    t_cam_board, method=cv2.CALIB_HAND_EYE_PARK)
        world_from_camera = np.eye(4)
        world_from_camera[:3, :3] = R
        world_from_camera[:3, 3] = t.ravel()
    else:
        # opencv-python 5.0.0.93 ships without calibrateHandEye in its Python bindings (OpenCV
        # issue 29565, fixed in later releases): solve the same problem here.
        world_from_camera = park_martin_eye_to_hand([F for F, _ in pairs], [B for _, B in pairs])
    # Consistency: the board is fixed on the flange, so flange_from_board must agree across views.
    implied = [np.linalg.inv(F) @ world_from_camera @ B for F, B in pairs]
    centre = np.mean([T[:3, 3] for T in implied], axis=0)
    spread = float(np.median([np.linalg.norm(T[:3, 3] - centre) for T in implied])) * 1000
    return HandEye(world_from_camera, len(pairs), spread)


def park_martin_eye_to_hand(world_from_flange: list[np.ndarray],
                            camera_from_board: list[np.ndarray]) -> np.ndarray:
    """Park and Martin's solution of A X = X B for a fixed camera: X = world_from_camera, with
    A = F_j F_i^-1 (the flange's motion seen from the base) and B = C_j C_i^-1 (the board's motion
    seen from the camera), over every pair of poses. Rotation from the log maps of the motions,
    translation by linear least squares."""
    alphas, betas, rows, rhs = [], [], [], []
    motions = []
    n = len(world_from_flange)
    for i in range(n):
        for j in range(i + 1, n):
            A = world_from_flange[j] @ np.linalg.inv(world_from_flange[i])
            B = camera_from_board[j] @ np.linalg.inv(camera_from_board[i])
            a, _ = cv2.Rodrigues(A[:3, :3])
            b, _ = cv2.Rodrigues(B[:3, :3])
            if np.linalg.norm(a) < 1e-3:
                continue   # no rotation between these two poses: says nothing about R_X
            alphas.append(a.ravel())
            betas.append(b.ravel())
            motions.append((A, B))
    if len(alphas) < 2:
        raise HandEyeError("the arm's poses hardly rotate the board: vary its orientation more")
    M = sum(np.outer(b, a) for a, b in zip(alphas, betas))
    eigval, eigvec = np.linalg.eigh(M.T @ M)
    R = eigvec @ np.diag(1.0 / np.sqrt(np.maximum(eigval, 1e-12))) @ eigvec.T @ M.T
    for A, B in motions:
        rows.append(A[:3, :3] - np.eye(3))
        rhs.append(R @ B[:3, 3] - A[:3, 3])
    t = np.linalg.lstsq(np.vstack(rows), np.concatenate(rhs), rcond=None)[0]
    X = np.eye(4)
    X[:3, :3] = R
    X[:3, 3] = t
    return X
