"""The cell's safety light curtain in the simulated world: parallel beams between two posts,
scanned every response period. A beam is broken by anything that moves (a hand, a finger, a block)
lying across it; the table and the cell's fixed parts are not in its path. The firmware reads it
as its safety input (firmware_bridge/device/engine.py).
"""

from __future__ import annotations

import mujoco
import numpy as np

from hardware.sim.world import SimWorld
from planning.game.cell.model import Curtain


class LightCurtain:
    def __init__(self, world: SimWorld, curtain: Curtain):
        self.world = world
        self.curtain = curtain
        beams = curtain.beams()
        self._starts = np.array([a for a, _ in beams], float)
        self._spans = np.array([b for _, b in beams], float) - self._starts
        self._geom = np.zeros(1, np.int32)
        self._scanned = -np.inf
        self._broken = False

    def broken(self) -> bool:
        """Whether a beam was broken at the last scan (scans run every response period of the
        world's time)."""
        now = self.world.time
        if now - self._scanned >= self.curtain.scan_period or now < self._scanned:
            self._scanned = now
            self._broken = any(self._blocked(i) for i in range(len(self._starts)))
        return self._broken

    def _blocked(self, beam: int) -> bool:
        # mj_ray's distance is in units of the span: a hit between the posts is within 0..1;
        # static geoms (the table, the cell's frame) are left out
        t = mujoco.mj_ray(self.world.model, self.world.data, self._starts[beam], self._spans[beam],
                          None, 0, -1, self._geom)
        return 0.0 <= t <= 1.0
