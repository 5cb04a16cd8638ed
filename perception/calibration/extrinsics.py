"""Camera pose from the tower itself: with a fresh, complete tower standing at the cell's tower
pose, every block's marker is where the nominal geometry puts it (to within the blocks'
tolerances), so one view of many markers fixes the camera's pose relative to the tower base.

Each marker's corners are assigned to their slot (the nearest projected marker with the camera's
nominal pose) and all corners of all markers go into one PnP solve with outlier rejection.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from perception.camera_model import CameraModel
from perception.markers import MarkerDetector
from perception.tower_model import TowerModel
from planning.game.geometry import TowerPose

MIN_MARKERS = 10
REPROJECTION_GATE_PX = 2.0


class ExtrinsicsError(RuntimeError):
    """The view cannot fix the camera's pose (too few markers of a fresh tower seen)."""


@dataclass(frozen=True)
class Extrinsics:
    world_from_camera: np.ndarray
    rms_px: float
    markers: int


def calibrate(image: np.ndarray, camera: CameraModel, model: TowerModel, tower: TowerPose,
              layers: int) -> Extrinsics:
    """The camera's pose in the world from one image of a fresh tower of `layers` layers standing
    at `tower` (the cell's tower pose). The layer pitch is measured too: taking the nominal one
    would scale the tower, and a tower a percent too tall puts the camera a percent too close."""
    sightings = MarkerDetector(model.count).detect(image)
    eye = tower.to_tower(camera.position[None, :])[0]
    faces = model.face_table(range(1, layers + 1), model.nominal_pitch).visible_from(eye).faces()
    expected = camera.project(tower.to_world(np.array([f.centre for f in faces])))
    matches, used = [], set()
    for s in sightings:
        d = np.linalg.norm(expected - s.centre, axis=1)
        i = int(np.argmin(d))
        if d[i] > 25.0 or i in used:
            continue
        used.add(i)
        matches.append((faces[i], s))
    if len(matches) < MIN_MARKERS:
        raise ExtrinsicsError(f"camera {camera.name}: only {len(matches)} tower markers found "
                              f"where expected (need {MIN_MARKERS}); is a fresh tower standing at "
                              f"the cell's tower position, in view, and lit?")
    img = np.concatenate([s.corners for _, s in matches]).astype(np.float64)
    # Start from PnP on the nominal tower, then refine the camera pose together with what a real
    # tower gets "wrong": its layer pitch and its lean. Without them the camera pose absorbs the
    # tower's irregularities (a percent of extra height puts the camera a percent too close).
    local = [(f, _) for f, _ in matches]
    world_from_camera, _ = _pnp(_points(local, tower, model, tower.pitch, 0.0, 0.0), img, camera)
    params = np.concatenate([_pose_vector(world_from_camera), [tower.pitch, 0.0, 0.0]])
    params, rms, inliers = _refine(params, local, img, camera, tower, model)
    return Extrinsics(_pose_matrix(params[:6]), rms, len(matches))


def _points(matches, tower: TowerPose, model: TowerModel, pitch: float, lean_x: float,
            lean_y: float) -> np.ndarray:
    leaning = TowerPose(tower.x, tower.y, tower.yaw, pitch, lean_x, lean_y)
    return np.concatenate([leaning.to_world(model.face(f.layer, f.slot, f.end, pitch).corners)
                           for f, _ in matches]).astype(np.float64)


def _pose_vector(world_from_camera: np.ndarray) -> np.ndarray:
    R = world_from_camera[:3, :3].T
    rvec, _ = cv2.Rodrigues(R)
    tvec = -R @ world_from_camera[:3, 3]
    return np.concatenate([rvec.ravel(), tvec])


def _pose_matrix(vector: np.ndarray) -> np.ndarray:
    R, _ = cv2.Rodrigues(vector[:3])
    T = np.eye(4)
    T[:3, :3] = R.T
    T[:3, 3] = -R.T @ vector[3:6]
    return T


def _refine(params, matches, img, camera, tower, model, iterations: int = 15):
    """Gauss-Newton on (camera rvec, tvec, pitch, lean x, lean y) over the reprojection of every
    marker corner, dropping corners more than REPROJECTION_GATE_PX off after the first pass."""
    def residual(p, keep):
        obj = _points(matches, tower, model, p[6], p[7], p[8])
        uv, _ = cv2.projectPoints(obj, p[:3], p[3:6], camera.K, camera.dist)
        r = (uv.reshape(-1, 2) - img)
        return r[keep].ravel(), r

    # Corners the nominal tower already explains (a misread or a block out of place is not).
    keep = np.linalg.norm(residual(params, np.ones(len(img), bool))[1], axis=1) < 2 * REPROJECTION_GATE_PX
    if keep.sum() < 4 * MIN_MARKERS:
        raise ExtrinsicsError(f"camera {camera.name}: too few markers agree with a fresh tower")
    steps = np.array([1e-5] * 3 + [1e-5] * 3 + [1e-6, 1e-5, 1e-5])
    damping = 1e-3
    cost = float(np.sum(residual(params, keep)[0] ** 2))
    for _ in range(iterations):
        r, _ = residual(params, keep)
        J = np.empty((len(r), len(params)))
        for j, step in enumerate(steps):
            shifted = params.copy()
            shifted[j] += step
            J[:, j] = (residual(shifted, keep)[0] - r) / step
        A = J.T @ J
        delta = np.linalg.solve(A + damping * np.diag(np.diag(A)), -J.T @ r)
        trial = params + delta
        trial_cost = float(np.sum(residual(trial, keep)[0] ** 2))
        if trial_cost < cost:      # Levenberg-Marquardt: take the step only if it helps
            params, cost, damping = trial, trial_cost, damping / 3
            if np.max(np.abs(delta)) < 1e-9:
                break
        else:
            damping *= 10
    r, _ = residual(params, keep)
    rms = float(np.sqrt(np.mean(r.reshape(-1, 2) ** 2 * 2)))
    return params, rms, keep


def _pnp(obj: np.ndarray, img: np.ndarray, camera: CameraModel) -> tuple[np.ndarray, float]:
    """Camera pose from world points and their pixels, with outlier rejection; and the rms."""
    rvec0, tvec0 = camera.rvec_tvec
    ok, rvec, tvec, inliers = cv2.solvePnPRansac(
        obj, img, camera.K, camera.dist, rvec0.reshape(3, 1), tvec0.reshape(3, 1),
        useExtrinsicGuess=True, reprojectionError=REPROJECTION_GATE_PX, iterationsCount=100,
        flags=cv2.SOLVEPNP_ITERATIVE)
    if not ok or inliers is None or len(inliers) < 2 * MIN_MARKERS:
        raise ExtrinsicsError(f"camera {camera.name}: the markers do not agree on one pose")
    inliers = inliers.ravel()
    rvec, tvec = cv2.solvePnPRefineLM(obj[inliers], img[inliers], camera.K, camera.dist, rvec, tvec)
    projected, _ = cv2.projectPoints(obj[inliers], rvec, tvec, camera.K, camera.dist)
    rms = float(np.sqrt(np.mean(np.sum((projected.reshape(-1, 2) - img[inliers]) ** 2, axis=1))))
    R, _ = cv2.Rodrigues(rvec)
    world_from_camera = np.eye(4)
    world_from_camera[:3, :3] = R.T
    world_from_camera[:3, 3] = (-R.T @ tvec).ravel()
    return world_from_camera, rms
