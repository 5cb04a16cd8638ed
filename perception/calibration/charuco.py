"""Intrinsic calibration from ChArUco board images (OpenCV 5 API). The board is
`planning/game/board.py`'s; print it with `charuco_image()`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from planning.game.board import DEFAULT_BOARD, BoardSpec

MIN_CORNERS = 8      # a view with fewer detected chessboard corners says little


class IntrinsicsError(RuntimeError):
    """The images cannot calibrate the camera (too few usable views, wrong size...)."""


def make_board(spec: BoardSpec = DEFAULT_BOARD) -> cv2.aruco.CharucoBoard:
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, spec.dictionary_name))
    return cv2.aruco.CharucoBoard((spec.squares_x, spec.squares_y), spec.square_m, spec.marker_m,
                                  dictionary)


def charuco_image(spec: BoardSpec, px_per_m: float = 4000.0, margin_px: int = 0) -> np.ndarray:
    """The board as a grey image to print (or to texture a simulated board)."""
    w, h = spec.size_m
    return make_board(spec).generateImage((int(round(w * px_per_m)), int(round(h * px_per_m))),
                                      marginSize=margin_px, borderBits=1)


@dataclass(frozen=True)
class Intrinsics:
    K: np.ndarray
    dist: np.ndarray
    rms_px: float
    views: int
    width: int
    height: int


class CharucoFinder:
    def __init__(self, spec: BoardSpec = DEFAULT_BOARD):
        self.spec = spec
        self.board = make_board(spec)
        params = cv2.aruco.CharucoParameters()
        self.detector = cv2.aruco.CharucoDetector(self.board, params)

    def find(self, image: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(object points (N, 3), image points (N, 2)) of the chessboard corners seen, or None."""
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
        corners, ids, _, _ = self.detector.detectBoard(gray)
        if ids is None or len(ids) < MIN_CORNERS:
            return None
        obj, img = self.board.matchImagePoints(corners, ids)
        return obj.reshape(-1, 3), img.reshape(-1, 2)


def calibrate(images: list[np.ndarray], spec: BoardSpec = DEFAULT_BOARD,
              fix_k3: bool = True) -> Intrinsics:
    """Camera matrix and distortion from views of the board; needs at least 5 good views."""
    if not images:
        raise IntrinsicsError("no images")
    shapes = {im.shape[:2] for im in images}
    if len(shapes) != 1:
        raise IntrinsicsError(f"images of different sizes: {sorted(shapes)}")
    height, width = shapes.pop()
    finder = CharucoFinder(spec)
    object_points, image_points = [], []
    for image in images:
        found = finder.find(image)
        if found is not None:
            object_points.append(found[0].astype(np.float32))
            image_points.append(found[1].astype(np.float32))
    if len(object_points) < 5:
        raise IntrinsicsError(f"only {len(object_points)} of {len(images)} images show the board "
                              f"well enough (>= {MIN_CORNERS} corners); take at least 5, from "
                              f"different angles, the board filling much of the view")
    flags = cv2.CALIB_FIX_K3 if fix_k3 else 0
    rms, K, dist, _, _ = cv2.calibrateCamera(object_points, image_points, (width, height), None, None,
                                             flags=flags)
    return Intrinsics(K, dist.ravel(), float(rms), len(object_points), width, height)


def read_images(folder: str | Path) -> list[np.ndarray]:
    """Every PNG/JPEG in a folder, as RGB, in name order."""
    paths = sorted(p for p in Path(folder).iterdir() if p.suffix.lower() in (".png", ".jpg", ".jpeg"))
    images = []
    for path in paths:
        image = read_image(path)
        if image is None:
            raise IntrinsicsError(f"{path} is not an image OpenCV can read")
        images.append(image)
    return images


def read_image(path: str | Path) -> np.ndarray | None:
    """An image file as RGB, or None if it is missing or not an image (quietly: OpenCV's own
    reader prints warnings)."""
    try:
        data = np.fromfile(str(path), np.uint8)
    except OSError:
        return None
    bgr = cv2.imdecode(data, cv2.IMREAD_COLOR) if data.size else None
    return None if bgr is None else cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB)
