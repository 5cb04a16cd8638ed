"""Taking calibration pictures in the simulated cell, as a lab would take them in a real one: views
of a ChArUco board held in front of a camera (intrinsics), and the arm showing the board to a
camera from several poses with its joint readings (hand-eye). Real cells take their own photos; the
calibrate commands read both the same way.
"""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
from spatialmath import SE3

from hardware.sim.mjcf import HAND_BOARD_POS, HAND_BOARD_QUAT
from hardware.sim.world import SimWorld
from planning.game.cell.model import Cell
from planning.kinematics import ArmModel, IKError


def _save(path: Path, rgb: np.ndarray) -> None:
    cv2.imwrite(str(path), cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR))


def _board_facing(camera_axes: np.ndarray, centre: np.ndarray, tilt: np.ndarray) -> np.ndarray:
    """A board pose at `centre` whose printed face looks back at the camera, tilted by `tilt`
    (rad about the image's x and y), upright in the image."""
    normal = -camera_axes[:, 2] + camera_axes[:, 0] * tilt[0] + camera_axes[:, 1] * tilt[1]
    normal /= np.linalg.norm(normal)
    up = -camera_axes[:, 1]
    right = np.cross(up, normal)
    right /= np.linalg.norm(right)
    T = np.eye(4)
    T[:3, :3] = np.column_stack([normal, right, np.cross(normal, right)])
    T[:3, 3] = centre
    return T


def capture_charuco(cell: Cell, camera: str, out: Path, views: int = 15, seed: int = 0,
                    progress=None) -> list[Path]:
    """Board views at 0.28-0.45 m from the camera, tilted up to 25 degrees, saved as PNGs;
    `progress(done, total)` told after each."""
    world = SimWorld(cell, seed, markers=False, board="stage", settle_s=0.1)
    cam = cell.camera(camera)
    axes, eye = cam.axes(), np.array(cam.position)
    rng = np.random.default_rng(seed)
    out.mkdir(parents=True, exist_ok=True)
    paths = []
    for k in range(views):
        centre = (eye + axes[:, 2] * rng.uniform(0.28, 0.45) + axes[:, 0] * rng.uniform(-0.06, 0.06)
                  + axes[:, 1] * rng.uniform(-0.03, 0.03))
        world.place_board(_board_facing(axes, centre, rng.uniform(-0.45, 0.45, 2)))
        path = out / f"charuco_{camera}_{k:02d}.png"
        _save(path, world.render(camera))
        paths.append(path)
        if progress:
            progress(k + 1, views)
    world.close()
    return paths


def flange_from_board() -> np.ndarray:
    """Where the simulated hand-held board sits on the flange (only to aim it at a camera; the
    hand-eye calibration itself does not know it)."""
    T = np.eye(4)
    T[:3, :3] = _quat_matrix(*(float(v) for v in HAND_BOARD_QUAT.split()))
    T[:3, 3] = HAND_BOARD_POS
    return T


def _quat_matrix(w, x, y, z) -> np.ndarray:
    return np.array([[1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)],
                     [2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)],
                     [2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)]])


def capture_hand_eye(cell: Cell, camera: str, out: Path, poses: int = 10, seed: int = 0,
                     progress=None) -> Path:
    """The arm shows its board to `camera` from `poses` poses; images and joint readings saved,
    with a `poses.json` listing them. Returns that file."""
    world = SimWorld(cell, seed, markers=False, board="hand", settle_s=0.1)
    arm = ArmModel(cell)
    cam = cell.camera(camera)
    axes, eye = cam.axes(), np.array(cam.position)
    rng = np.random.default_rng(seed)
    board_on_flange = flange_from_board()
    out.mkdir(parents=True, exist_ok=True)
    records = []
    q = arm.home
    tries = 0
    while len(records) < poses and tries < poses * 20:
        tries += 1
        # Above the tower (the arm reaches there anyway to place blocks), in the camera's view.
        above = np.array([*cell.tower.position, 0.0])
        above[:2] += (eye[:2] - above[:2]) * rng.uniform(0.05, 0.25)
        above[2] = cell.blocks.layers * cell.blocks.height.mean + rng.uniform(0.12, 0.17)
        centre = above + np.cross(axes[:, 2], [0.0, 0.0, 1.0]) * rng.uniform(-0.03, 0.03)
        board = _board_facing(axes, centre, rng.uniform(-0.35, 0.35, 2))
        flange = board @ np.linalg.inv(board_on_flange)
        try:
            q = arm.ik(SE3(flange, check=False), "flange", q)
        except IKError:
            continue
        world.place_arm(q)
        image = world.render(camera)
        path = out / f"handeye_{camera}_{len(records):02d}.png"
        _save(path, image)
        records.append({"image": path.name, "joints_rad": [float(v) for v in world.joint_positions()]})
        if progress:
            progress(len(records), poses)
    world.close()
    listing = out / "poses.json"
    listing.write_text(json.dumps({"camera": camera, "poses": records}, indent=2) + "\n")
    return listing
