"""A calibrated camera: intrinsics, distortion and pose, with projection and back-projection.

Conventions are OpenCV's: image x right, y down, z along the optical axis. `world_from_camera` is
the camera pose in the world (the table frame of the cell): its rotation's columns are the camera
axes in world coordinates, its translation the optical centre.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from planning.game.cell.model import Camera


@dataclass(frozen=True)
class CameraModel:
    name: str
    width: int
    height: int
    K: np.ndarray                      # (3, 3)
    dist: np.ndarray = field(default_factory=lambda: np.zeros(5))
    world_from_camera: np.ndarray = field(default_factory=lambda: np.eye(4))

    @classmethod
    def from_cell(cls, cam: Camera) -> CameraModel:
        """The nominal camera of a cell file (before calibration)."""
        pose = np.eye(4)
        pose[:3, :3] = cam.axes()
        pose[:3, 3] = cam.position
        return cls(cam.name, cam.width, cam.height, cam.matrix, np.zeros(5), pose)

    @property
    def camera_from_world(self) -> np.ndarray:
        inv = np.eye(4)
        R = self.world_from_camera[:3, :3]
        inv[:3, :3] = R.T
        inv[:3, 3] = -R.T @ self.world_from_camera[:3, 3]
        return inv

    @property
    def rvec_tvec(self) -> tuple[np.ndarray, np.ndarray]:
        """World-to-camera transform as OpenCV's (rvec, tvec)."""
        T = self.camera_from_world
        rvec, _ = cv2.Rodrigues(T[:3, :3])
        return rvec.ravel(), T[:3, 3].copy()

    @property
    def position(self) -> np.ndarray:
        return self.world_from_camera[:3, 3].copy()

    def project(self, points_world: np.ndarray) -> np.ndarray:
        """Pixel coordinates (N, 2) of world points (N, 3)."""
        rvec, tvec = self.rvec_tvec
        uv, _ = cv2.projectPoints(np.asarray(points_world, float).reshape(-1, 1, 3), rvec, tvec,
                                  self.K, self.dist)
        return uv.reshape(-1, 2)

    def in_front(self, points_world: np.ndarray) -> np.ndarray:
        """Whether each point lies in front of the camera."""
        T = self.camera_from_world
        z = (np.asarray(points_world, float) @ T[:3, :3].T + T[:3, 3])[:, 2]
        return z > 0

    def rays(self, pixels: np.ndarray) -> np.ndarray:
        """World unit directions (N, 3) of the rays through pixels (N, 2), undistorted."""
        norm = cv2.undistortPoints(np.asarray(pixels, float).reshape(-1, 1, 2), self.K, self.dist)
        d = np.column_stack([norm.reshape(-1, 2), np.ones(len(norm))])
        d = d @ self.world_from_camera[:3, :3].T
        return d / np.linalg.norm(d, axis=1, keepdims=True)

    def with_pose(self, world_from_camera: np.ndarray) -> CameraModel:
        return CameraModel(self.name, self.width, self.height, self.K, self.dist, world_from_camera)
