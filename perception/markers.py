"""Finding the blocks' markers in an image (OpenCV 5 ArUco API) and where their corners are on a
block. The labelling scheme itself is `planning/game/markers.py`."""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from planning.game.markers import DICTIONARY_NAME, block_of_marker


@dataclass(frozen=True)
class MarkerSighting:
    marker: int
    corners: np.ndarray     # (4, 2) px: the marker's top-left, top-right, bottom-right, bottom-left
    # where the diagonals cross: the image of the marker's centre under perspective
    centre: np.ndarray = field(repr=False)

    @property
    def block(self) -> int:
        return block_of_marker(self.marker)[0]

    @property
    def end(self) -> int:
        return block_of_marker(self.marker)[1]


def diagonal_crossings(corners: np.ndarray) -> np.ndarray:
    """(N, 2) where each quad's diagonals cross, for quads (N, 4, 2): the image of a square
    marker's centre under perspective (the corners' mean where a quad is degenerate)."""
    p0, p1, p2, p3 = (corners[:, k] for k in range(4))
    d1, d2, r = p2 - p0, p3 - p1, p1 - p0
    det = -d1[:, 0] * d2[:, 1] + d2[:, 0] * d1[:, 1]
    flat = np.abs(det) < 1e-9
    s = (-r[:, 0] * d2[:, 1] + d2[:, 0] * r[:, 1]) / np.where(flat, 1.0, det)
    return np.where(flat[:, None], corners.mean(axis=1), p0 + s[:, None] * d1)


_SUBPIX_CRITERIA = (cv2.TERM_CRITERIA_EPS + cv2.TERM_CRITERIA_MAX_ITER, 30, 0.01)


class MarkerDetector:
    """ArUco detection tuned for small markers (about 20 px) under even light, with sub-pixel
    corners. Ids outside the block set are ignored."""

    def __init__(self, block_count: int):
        dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, DICTIONARY_NAME))
        params = cv2.aruco.DetectorParameters()
        params.minMarkerPerimeterRate = 0.01
        # Two threshold windows: enough for even light, half the cost of OpenCV's default three.
        params.adaptiveThreshWinSizeMin = 7
        params.adaptiveThreshWinSizeMax = 17
        params.adaptiveThreshWinSizeStep = 10
        params.minMarkerDistanceRate = 0.02
        # The ArUco 3 candidate search is faster at the same detections for markers of ~20 px.
        params.useAruco3Detection = True
        params.minSideLengthCanonicalImg = 16
        params.minMarkerLengthRatioOriginalImg = 0.0
        self._detector = cv2.aruco.ArucoDetector(dictionary, params)
        self._max_id = 2 * block_count

    def detect(self, image: np.ndarray, offset_px=(0, 0)) -> list[MarkerSighting]:
        """The block markers in `image`; corners in pixels of the image, plus `offset_px` (where
        the image is a crop of a larger one)."""
        gray = image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)
        corners, ids, _ = self._detector.detectMarkers(gray)
        if ids is None:
            return []
        ids = ids.ravel()
        keep = np.flatnonzero((ids >= 0) & (ids < self._max_id))
        if not len(keep):
            return []
        # The ArUco 3 search returns whole-pixel corners: refine them all in one call.
        points = np.concatenate([corners[k] for k in keep]).astype(np.float32).reshape(-1, 1, 2)
        cv2.cornerSubPix(gray, points, (2, 2), (-1, -1), _SUBPIX_CRITERIA)
        points = points.reshape(-1, 4, 2).astype(float) + np.asarray(offset_px, float)
        centres = diagonal_crossings(points)
        return [MarkerSighting(int(i), p, c) for i, p, c in zip(ids[keep], points, centres)]


def corner_offsets(side: float) -> np.ndarray:
    """The marker's corners (4, 2) as (right, up) offsets from its centre on the face, in the
    detector's order: top-left, top-right, bottom-right, bottom-left."""
    h = side / 2
    return np.array([[-h, h], [h, h], [h, -h], [-h, -h]])


def face_axes(block_axis: np.ndarray, end: int, up: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(right, up) directions of an end face as seen from outside: the face's outward normal is
    `end * block_axis`; right = up x normal."""
    normal = end * np.asarray(block_axis, float)
    return np.cross(up, normal), np.asarray(up, float)
