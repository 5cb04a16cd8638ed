"""`jenga-robot calibrate intrinsics|extrinsics|hand-eye`: the calibration steps a lab runs, each
writing its section of the camera's calibration file next to the cell file. And `jenga-robot sim
capture`, which takes the pictures those steps need in the simulated cell."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from controller.commands.cell_cmd import load
from controller.commands.common import CommandError
from controller.commands.progress import Progress
from hardware.cells import DEFAULT_CELL


def register(commands: argparse._SubParsersAction) -> None:
    cal = commands.add_parser("calibrate", help="camera calibration: intrinsics, extrinsics, hand-eye")
    sub = cal.add_subparsers(dest="calibrate_command", required=True,
                             metavar="{intrinsics,extrinsics,hand-eye}")
    intr = sub.add_parser("intrinsics", help="camera matrix and distortion from ChArUco images")
    intr.add_argument("--images", required=True, metavar="DIR", help="folder of board photos")
    extr = sub.add_parser("extrinsics", help="camera pose from a fresh tower's markers")
    source = extr.add_mutually_exclusive_group(required=True)
    source.add_argument("--image", metavar="FILE", help="a photo of a fresh tower")
    source.add_argument("--url", metavar="URL", help="the camera's stream (takes one frame)")
    hand = sub.add_parser("hand-eye", help="camera pose in the arm's base frame")
    hand.add_argument("--poses", required=True, metavar="FILE",
                      help='JSON {"poses": [{"image": file, "joints_rad": [...]}, ...]}')
    for p in (intr, extr, hand):
        p.add_argument("--camera", required=True, help="camera name in the cell file")
        p.add_argument("--cell", default=str(DEFAULT_CELL), metavar="FILE")
    intr.set_defaults(run=run_intrinsics)
    extr.set_defaults(run=run_extrinsics)
    hand.set_defaults(run=run_hand_eye)


def register_capture(sim_sub: argparse._SubParsersAction) -> None:
    cap = sim_sub.add_parser("capture", help="take calibration pictures in the simulated cell")
    cap.add_argument("--kind", required=True, choices=("charuco", "hand-eye"))
    cap.add_argument("--camera", required=True)
    cap.add_argument("--out", required=True, metavar="DIR")
    cap.add_argument("--views", type=int, default=15)
    cap.add_argument("--cell", default=str(DEFAULT_CELL), metavar="FILE")
    cap.set_defaults(run=run_capture)


def _camera(cell, name: str):
    try:
        return cell.camera(name)
    except KeyError as exc:
        raise CommandError(str(exc.args[0])) from None


def _current(cell_path: str, cam):
    from perception.calibration.store import CalibrationError, camera_models, load as load_calibration
    try:
        load_calibration(cell_path, cam)
        models = camera_models(load(cell_path), cell_path)
    except CalibrationError as exc:
        raise CommandError(str(exc)) from None
    return next(m for m in models if m.name == cam.name)


def run_intrinsics(args: argparse.Namespace) -> int:
    from perception.calibration.charuco import IntrinsicsError, calibrate, read_images
    from perception.calibration.store import now, update
    cell = load(args.cell)
    cam = _camera(cell, args.camera)
    if not Path(args.images).is_dir():
        raise CommandError(f"--images {args.images}: not a folder")
    try:
        result = calibrate(read_images(args.images))
    except IntrinsicsError as exc:
        raise CommandError(f"camera {cam.name}: {exc}") from None
    if (result.width, result.height) != (cam.width, cam.height):
        raise CommandError(f"camera {cam.name}: images are {result.width}x{result.height}, the cell "
                           f"says {cam.width}x{cam.height}")
    path = update(args.cell, cam, intrinsics={
        "K": result.K.tolist(), "dist": result.dist.tolist(), "width": result.width,
        "height": result.height, "rms_px": round(result.rms_px, 4), "views": result.views,
        "method": "charuco", "date": now()})
    K = result.K
    print(f"camera {cam.name}: fx {K[0, 0]:.1f} fy {K[1, 1]:.1f} cx {K[0, 2]:.1f} cy {K[1, 2]:.1f} px, "
          f"reprojection rms {result.rms_px:.3f} px over {result.views} views; written to {path}")
    return 0


def run_extrinsics(args: argparse.Namespace) -> int:
    from perception.calibration.charuco import read_image
    from perception.calibration.extrinsics import ExtrinsicsError, calibrate
    from perception.calibration.store import now, update
    from perception.tower_model import TowerModel
    from planning.game.geometry import TowerPose
    cell = load(args.cell)
    cam = _camera(cell, args.camera)
    camera = _current(args.cell, cam)
    if args.image:
        image = read_image(args.image)
        if image is None:
            raise CommandError(f"--image {args.image}: not an image OpenCV can read (missing?)")
    else:
        from perception.sources import CameraError, open_source
        source = open_source(cam.name, args.url, cam.width, cam.height, cam.fps)
        try:
            with source:
                image = source.read(timeout_s=5.0).image
        except CameraError as exc:
            raise CommandError(str(exc)) from None
    model = TowerModel(cell.blocks)
    x, y = cell.tower.position
    try:
        result = calibrate(image, camera, model, TowerPose(x, y, cell.tower.yaw, model.nominal_pitch),
                           cell.blocks.layers)
    except ExtrinsicsError as exc:
        raise CommandError(str(exc)) from None
    path = update(args.cell, cam, extrinsics={
        "world_from_camera": result.world_from_camera.tolist(), "rms_px": round(result.rms_px, 4),
        "markers": result.markers, "method": "fresh tower markers", "date": now()})
    moved = np.linalg.norm(result.world_from_camera[:3, 3] - np.array(cam.position)) * 1000
    print(f"camera {cam.name}: pose from {result.markers} markers, reprojection rms "
          f"{result.rms_px:.3f} px, {moved:.1f} mm from the cell file's position; written to {path}")
    return 0


def run_hand_eye(args: argparse.Namespace) -> int:
    from perception.calibration.charuco import read_image
    from perception.calibration.hand_eye import HandEyeError, board_poses, calibrate
    from perception.calibration.store import now, update
    from planning.kinematics import ArmModel
    cell = load(args.cell)
    cam = _camera(cell, args.camera)
    camera = _current(args.cell, cam)
    try:
        listing = json.loads(Path(args.poses).read_text())
        entries = listing["poses"]
        folder = Path(args.poses).parent
        images, flanges = [], []
        arm = ArmModel(cell)
        for entry in entries:
            image = read_image(folder / entry["image"])
            if image is None:
                raise CommandError(f"{folder / entry['image']}: not an image OpenCV can read")
            images.append(image)
            joints = np.asarray(entry["joints_rad"], float)
            if joints.shape != (cell.arm.joint_count,):
                raise CommandError(f"{args.poses}: joints_rad needs {cell.arm.joint_count} angles")
            flanges.append(arm.fk(joints).A)
    except (OSError, json.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        raise CommandError(f"--poses {args.poses}: {exc}") from None
    try:
        result = calibrate(flanges, board_poses(images, camera.K, camera.dist))
    except HandEyeError as exc:
        raise CommandError(f"camera {cam.name}: {exc}") from None
    path = update(args.cell, cam, hand_eye={
        "world_from_camera": result.world_from_camera.tolist(), "poses": result.poses,
        "residual_mm": round(result.residual_mm, 3), "method": "eye-to-hand, Park-Martin",
        "date": now()})
    moved = np.linalg.norm(result.world_from_camera[:3, 3] - np.array(cam.position)) * 1000
    print(f"camera {cam.name}: pose in the arm's base frame from {result.poses} poses (board "
          f"consistency {result.residual_mm:.2f} mm), {moved:.1f} mm from the cell file's position; "
          f"written to {path}")
    return 0


def run_capture(args: argparse.Namespace) -> int:
    import hardware.sim  # noqa: F401  (offscreen rendering first)
    from controller.calibration_capture import capture_charuco, capture_hand_eye
    cell = load(args.cell)
    _camera(cell, args.camera)
    if args.views < 1:
        raise CommandError("--views must be at least 1")
    out = Path(args.out)
    # the calibration is written next to the cell file the next step is given: the same one
    cell_option = "" if args.cell == str(DEFAULT_CELL) else f" --cell {args.cell}"
    if args.kind == "charuco":
        paths = capture_charuco(cell, args.camera, out, args.views,
                                progress=Progress(f"capture charuco ({args.camera})"))
        print(f"{len(paths)} board views in {out}: now `jenga-robot calibrate intrinsics "
              f"--camera {args.camera} --images {out}{cell_option}`")
    else:
        listing = capture_hand_eye(cell, args.camera, out, args.views,
                                   progress=Progress(f"capture hand-eye ({args.camera})"))
        print(f"poses and images in {listing}: now `jenga-robot calibrate hand-eye --camera "
              f"{args.camera} --poses {listing}{cell_option}`")
    return 0
