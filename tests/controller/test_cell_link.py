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


def test_what_the_simulated_cell_warns_of_is_logged(caplog):
    """The cell's stderr (what an overload met, a failure) reaches the log, not only a buffer
    nobody reads; its stdout stays its own."""
    import io
    import types
    from controller.cell_link import SimulatedCell
    cell = SimulatedCell.__new__(SimulatedCell)
    cell.log = []
    cell.process = types.SimpleNamespace(stdout=io.StringIO("serving\n"),
                                         stderr=io.StringIO("the wrist reads [0, 0, 180] N\n"))
    with caplog.at_level("WARNING"):
        cell._drain(cell.process.stdout)
        cell._drain(cell.process.stderr)
    assert cell.log == ["serving", "the wrist reads [0, 0, 180] N"]
    assert "simulated cell: the wrist reads [0, 0, 180] N" in caplog.text
    assert "serving" not in caplog.text


def test_a_simulated_cell_closed_says_it_stopped_and_nothing_else():
    """Closed by the program that started it, the cell stops cleanly: its stdin watch once died
    with "Fatal Python error" at every close, which the log now shows."""
    from controller.cell_link import SimulatedCell
    cell = SimulatedCell(5)
    cell.close()
    assert cell.process.returncode == 0
    assert cell.log == ["stopped"]
