"""The calibration target both the cameras' calibration and the simulator use: a ChArUco board of
7 x 5 squares of 30 mm with 22 mm markers from ArUco DICT_5X5_100 (a dictionary the blocks do not
use, so a board and a tower in one view never confuse each other)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class BoardSpec:
    squares_x: int = 7
    squares_y: int = 5
    square_m: float = 0.030
    marker_m: float = 0.022
    dictionary_name: str = "DICT_5X5_100"

    @property
    def size_m(self) -> tuple[float, float]:
        return self.squares_x * self.square_m, self.squares_y * self.square_m


DEFAULT_BOARD = BoardSpec()
