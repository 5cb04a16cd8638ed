"""Fiducial markers on the blocks' end faces: the scheme perception relies on.

Dictionary: ArUco DICT_4X4_250. Block `i` (0-based, its identity in the set) carries marker id
`2 i` on its +x end face and `2 i + 1` on its -x end face (x along the block's length). The marker is
a square centred on the end face, `MARKER_SIZE_FRACTION` of the face's height, with a one-module
black border; the rest of the face is white (the quiet zone). A real set is labelled the same way
with printed stickers.
"""

from __future__ import annotations

import cv2
import numpy as np

DICTIONARY = cv2.aruco.DICT_4X4_250
MARKER_SIZE_FRACTION = 0.8      # marker side / end-face height
_FACE_PX_PER_M = 10000          # texture resolution: 0.1 mm per pixel


def marker_id(block: int, end: int) -> int:
    """Marker id on block `block`'s end `end` (+1 or -1)."""
    if end not in (1, -1):
        raise ValueError(f"end must be +1 or -1, got {end}")
    return 2 * block + (0 if end > 0 else 1)


def block_of_marker(marker: int) -> tuple[int, int]:
    """(block, end) for a marker id."""
    return marker // 2, (1 if marker % 2 == 0 else -1)


def marker_side(face_height: float) -> float:
    """Side of the marker square (m) on an end face of the given height."""
    return MARKER_SIZE_FRACTION * face_height


def end_face_image(marker: int, face_width: float, face_height: float) -> np.ndarray:
    """RGB texture of one end face: white, with the marker centred, as printed."""
    w_px = int(round(face_width * _FACE_PX_PER_M))
    h_px = int(round(face_height * _FACE_PX_PER_M))
    side_px = int(round(marker_side(face_height) * _FACE_PX_PER_M))
    dictionary = cv2.aruco.getPredefinedDictionary(DICTIONARY)
    tag = cv2.aruco.generateImageMarker(dictionary, marker, side_px, borderBits=1)
    face = np.full((h_px, w_px), 255, np.uint8)
    top, left = (h_px - side_px) // 2, (w_px - side_px) // 2
    face[top:top + side_px, left:left + side_px] = tag
    return cv2.cvtColor(face, cv2.COLOR_GRAY2RGB)


def png(image: np.ndarray) -> bytes:
    ok, data = cv2.imencode(".png", cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
    if not ok:
        raise RuntimeError("could not encode a marker texture")
    return data.tobytes()
