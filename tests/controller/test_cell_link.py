"""The cell link when a camera goes away mid-game: a typed error that says what to do, so a game
stops safely instead of ending in a traceback."""

import pytest

from controller.cell_link import CellLink, CellLinkError
from perception.sources import CameraError


class GoneCamera:
    def latest(self):
        return None

    def read(self, timeout_s):
        raise CameraError("camera left: no new frame for 10 s")


def test_a_camera_that_went_away_is_a_cell_link_error(default_cell):
    link = CellLink(default_cell, "loop://", {}, perception=object())
    link.cameras = {"left": GoneCamera()}
    with pytest.raises(CellLinkError, match="camera left: no new frame for 10 s; check the camera"):
        link.frames(after=1.0)
