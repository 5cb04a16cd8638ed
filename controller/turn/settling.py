"""Watching a settling window: the tower looked at until the window after a release closes."""

from __future__ import annotations

from controller.cell_link import CellLink
from perception.observation import TowerObservation

WATCH_EVERY_S = 1.0          # world time between looks


def watch_settling(link: CellLink, released_at: float, window_s: float) -> TowerObservation | None:
    """Observe until the settling window after the release closes (device time); the last
    observation, or None if the tower fell."""
    deadline = released_at + window_s
    while True:
        now = link.arm.device_time()
        last = link.observe(after=now).observation
        if last.fell:
            return None
        if now >= deadline:
            return last
        wait = min(WATCH_EVERY_S, deadline - now)
        link.arm.wait_for(lambda t, until=now + wait: t.device_time >= until, timeout_s=wait + 5)
