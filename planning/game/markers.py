"""How blocks are labelled: the fiducial marker scheme perception reads and the simulator paints.

Dictionary: ArUco `DICT_4X4_250`. Block `i` (0-based identity in the set) carries marker id `2 i`
on its +x end face and `2 i + 1` on its -x end face (x along the block's length). The marker is a
square centred on the end face, `MARKER_SIZE_FRACTION` of the face's height, with a one-module
black border, on white. A real set is labelled the same way with printed stickers.
"""

from __future__ import annotations

DICTIONARY_NAME = "DICT_4X4_250"
MARKER_SIZE_FRACTION = 0.85     # marker side / end-face height
MARKER_BORDER_BITS = 1


def marker_id(block: int, end: int) -> int:
    """Marker id on block `block`'s end `end` (+1 or -1)."""
    if end not in (1, -1):
        raise ValueError(f"end must be +1 or -1, got {end}")
    if block < 0:
        raise ValueError(f"block numbers start at 0, got {block}")
    return 2 * block + (0 if end > 0 else 1)


def block_of_marker(marker: int) -> tuple[int, int]:
    """(block, end) for a marker id."""
    return marker // 2, (1 if marker % 2 == 0 else -1)


def marker_side(face_height: float) -> float:
    """Side of the marker square (m) on an end face of the given height."""
    return MARKER_SIZE_FRACTION * face_height
