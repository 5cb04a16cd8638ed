"""Calibration files: one JSON file per camera next to the cell file (`<cell>.calib/<camera>.json`),
holding what each calibration step measured. Perception uses the measured intrinsics and pose
where present and the cell file's nominal ones otherwise.

Every file is checked when read; a bad or inconsistent one gets CalibrationError naming the file,
the field and what is wrong.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from perception.camera_model import CameraModel
from planning.game.cell.model import Camera, Cell

DIST_LENGTHS = (4, 5, 8, 12, 14)


class CalibrationError(ValueError):
    """A calibration file that cannot be used."""


def calibration_dir(cell_path: str | Path) -> Path:
    path = Path(cell_path)
    return path.with_name(path.stem + ".calib")


def camera_file(cell_path: str | Path, camera: str) -> Path:
    return calibration_dir(cell_path) / f"{camera}.json"


@dataclass(frozen=True)
class CameraCalibration:
    camera: str
    intrinsics: dict | None = None    # K, dist, width, height, rms_px, views, method, date
    extrinsics: dict | None = None    # world_from_camera, rms_px, markers, method, date
    hand_eye: dict | None = None      # world_from_camera, poses, residual_mm, method, date

    def to_json(self) -> dict:
        return {"camera": self.camera, "intrinsics": self.intrinsics, "extrinsics": self.extrinsics,
                "hand_eye": self.hand_eye}


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def load(cell_path: str | Path, cam: Camera) -> CameraCalibration | None:
    """The calibration of one camera, checked against the cell; None when there is none."""
    path = camera_file(cell_path, cam.name)
    if not path.exists():
        return None
    try:
        data = json.loads(path.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise CalibrationError(f"calibration file {path}: not readable JSON: {exc}") from None
    return parse(data, cam, str(path))


def parse(data: Any, cam: Camera, source: str) -> CameraCalibration:
    def fail(field: str, problem: str):
        raise CalibrationError(f"calibration file {source}: {field}: {problem}")

    if not isinstance(data, dict):
        fail("(file)", "expected an object")
    if data.get("camera") != cam.name:
        fail("camera", f"is {data.get('camera')!r}, but the file is for camera {cam.name!r}")
    intrinsics = data.get("intrinsics")
    if intrinsics is not None:
        K = _matrix(intrinsics.get("K"), (3, 3), "intrinsics.K", fail)
        if not (K[0, 0] > 0 and K[1, 1] > 0 and K[2, 2] == 1.0 and K[1, 0] == K[2, 0] == K[2, 1] == 0):
            fail("intrinsics.K", "must be [[fx, s, cx], [0, fy, cy], [0, 0, 1]] with fx, fy > 0")
        if (intrinsics.get("width"), intrinsics.get("height")) != (cam.width, cam.height):
            fail("intrinsics.width/height", f"{intrinsics.get('width')}x{intrinsics.get('height')} "
                 f"differs from the camera's {cam.width}x{cam.height}: recalibrate at that resolution")
        if not (0 < K[0, 2] < cam.width and 0 < K[1, 2] < cam.height):
            fail("intrinsics.K", "principal point outside the image")
        dist = np.asarray(intrinsics.get("dist", []), float).ravel()
        if len(dist) not in DIST_LENGTHS or not np.all(np.isfinite(dist)):
            fail("intrinsics.dist", f"needs {', '.join(map(str, DIST_LENGTHS))} finite coefficients")
    for key in ("extrinsics", "hand_eye"):
        section = data.get(key)
        if section is not None:
            T = _matrix(section.get("world_from_camera"), (4, 4), f"{key}.world_from_camera", fail)
            R = T[:3, :3]
            if not (np.allclose(R.T @ R, np.eye(3), atol=1e-6) and math.isclose(np.linalg.det(R), 1.0,
                                                                                  abs_tol=1e-6)
                    and np.allclose(T[3], [0, 0, 0, 1])):
                fail(f"{key}.world_from_camera", "is not a rigid transform (rotation and translation)")
            if np.linalg.norm(T[:3, 3] - np.array(cam.position)) > 0.5:
                fail(f"{key}.world_from_camera", "puts the camera more than 0.5 m from where the cell "
                     "file has it: wrong file, or the camera was moved (update the cell file)")
    return CameraCalibration(cam.name, intrinsics, data.get("extrinsics"), data.get("hand_eye"))


def _matrix(value: Any, shape: tuple[int, int], field: str, fail) -> np.ndarray:
    try:
        M = np.asarray(value, float)
    except (TypeError, ValueError):
        fail(field, f"expected a {shape[0]}x{shape[1]} matrix of numbers")
    if M.shape != shape or not np.all(np.isfinite(M)):
        fail(field, f"expected a {shape[0]}x{shape[1]} matrix of finite numbers")
    return M


def save(cell_path: str | Path, calibration: CameraCalibration) -> Path:
    path = camera_file(cell_path, calibration.camera)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(calibration.to_json(), indent=2) + "\n")
    tmp.replace(path)   # never leave a half-written calibration behind
    return path


def update(cell_path: str | Path, cam: Camera, **sections) -> Path:
    """Write some sections of a camera's calibration, keeping the others."""
    current = load(cell_path, cam) or CameraCalibration(cam.name)
    merged = {**current.to_json(), **sections}
    return save(cell_path, CameraCalibration(cam.name, merged["intrinsics"], merged["extrinsics"],
                                             merged["hand_eye"]))


def camera_models(cell: Cell, cell_path: str | Path | None) -> list[CameraModel]:
    """Every camera of the cell, with its calibration applied where there is one. The pose comes
    from the extrinsic calibration (camera to tower base) if present, else hand-eye."""
    models = []
    for cam in cell.cameras:
        model = CameraModel.from_cell(cam)
        calibration = load(cell_path, cam) if cell_path is not None else None
        if calibration is not None:
            K, dist, pose = model.K, model.dist, model.world_from_camera
            if calibration.intrinsics:
                K = np.asarray(calibration.intrinsics["K"], float)
                dist = np.asarray(calibration.intrinsics["dist"], float).ravel()
            measured = calibration.extrinsics or calibration.hand_eye
            if measured:
                pose = np.asarray(measured["world_from_camera"], float)
            model = CameraModel(cam.name, cam.width, cam.height, K, dist, pose)
        models.append(model)
    return models
