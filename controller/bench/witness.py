"""What each turn of a benchmark game really did to the tower, from the simulator's ground truth
(its `/truth.json` document, hardware/sim/ground_truth.py `GroundTruth.document`): how far the
turn moved the blocks it did not take, and what the block it took really carried. Fast mode and the
full pipeline read the same document, so their games compare turn for turn: a pipeline whose
turns disturb the tower more, or take blocks that carry more, says so here.

For benchmarks only: it reads ground truth, which the product never may.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Callable

import numpy as np

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Witnessed:
    disturbed_mm: float | None     # the furthest any block but the one taken moved in the turn
    taken_load_n: float | None     # the true load on the block taken, as the turn began


def turn_figures(before: dict, after: dict, source: tuple[int, int] | None) -> Witnessed:
    """A turn's figures from the truth documents `before` and `after` it, the block taken from
    `source` (None: no block was taken). Blocks are compared by their number; the taken one is the
    block `before` has in `source`."""
    taken = None
    if source is not None:
        taken = next((b for b, v in before["blocks"].items()
                      if v["slot"] is not None and tuple(v["slot"]) == tuple(source)), None)
        if taken is None:
            # the truth had no block in the source (tilted, shifted out of it): which block the
            # turn carried away is unknown, and its hundreds of millimetres are no disturbance
            return Witnessed(None, None)
    moves = [float(np.linalg.norm(np.subtract(after["blocks"][b]["position"], v["position"])))
             for b, v in before["blocks"].items() if b != taken and b in after["blocks"]]
    disturbed = round(max(moves) * 1000, 2) if moves else None
    load = None
    if taken is not None and "loads" in before:
        value = before["loads"].get(f"{source[0]},{source[1]}")
        load = None if value is None else round(float(value), 3)
    return Witnessed(disturbed, load)


class Witness:
    """Reads the truth (`read()`: a truth document) as a game starts and after each turn, and keeps
    each turn's `Witnessed`. A truth that cannot be read leaves a turn unwitnessed (both figures
    None), never the game lost: the game is the figure."""

    def __init__(self, read: Callable[[], dict]):
        self._read = read
        self._before = self._try_read()
        self.turns: list[Witnessed] = []

    def turn_ended(self, source: tuple[int, int] | None) -> None:
        """Read the truth after a turn that took the block in `source` (None: none)."""
        after = self._try_read()
        if self._before is None or after is None:
            self.turns.append(Witnessed(None, None))
        else:
            self.turns.append(turn_figures(self._before, after, source))
        self._before = after

    def _try_read(self) -> dict | None:
        try:
            return self._read()
        except Exception as exc:       # the cell's HTTP answer, a document it could not build
            log.warning("the simulator's truth could not be read (%s): a turn goes unwitnessed",
                        exc)
            return None
