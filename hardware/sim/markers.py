"""Marker textures for the simulated blocks' end faces, painted by the scheme of
`planning/game/markers.py` (which perception reads)."""

from __future__ import annotations

import cv2
import numpy as np

from planning.game.markers import DICTIONARY_NAME, MARKER_BORDER_BITS, block_of_marker, marker_id

DICTIONARY = getattr(cv2.aruco, DICTIONARY_NAME)
_FACE_PX_PER_M = 10000          # texture resolution: 0.1 mm per pixel

__all__ = ["DICTIONARY", "block_of_marker", "marker_id", "end_face_image", "png"]


def end_face_image(marker: int, face_width: float, face_height: float, side: float) -> np.ndarray:
    """RGB texture of one end face (its drawn size): white, with the marker sticker of side `side`
    (the same printed size on every block) centred."""
    w_px = int(round(face_width * _FACE_PX_PER_M))
    h_px = int(round(face_height * _FACE_PX_PER_M))
    side_px = int(round(side * _FACE_PX_PER_M))
    dictionary = cv2.aruco.getPredefinedDictionary(DICTIONARY)
    tag = cv2.aruco.generateImageMarker(dictionary, marker, side_px, borderBits=MARKER_BORDER_BITS)
    face = np.full((h_px, w_px), 255, np.uint8)
    top, left = (h_px - side_px) // 2, (w_px - side_px) // 2
    face[top:top + side_px, left:left + side_px] = tag
    return cv2.cvtColor(face, cv2.COLOR_GRAY2RGB)


def png(image: np.ndarray) -> bytes:
    ok, data = cv2.imencode(".png", cv2.cvtColor(image, cv2.COLOR_RGB2BGR))
    if not ok:
        raise RuntimeError("could not encode a marker texture")
    return data.tobytes()
