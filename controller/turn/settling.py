"""Watching a settling window: the tower looked at until the window after a release closes, the
tower falls, or (in a match) the next player's first touch ends it early. The one watch of the
window, for the robot's solo turns and for both players' turns in a match. Times are device
(world) times."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Callable

from controller.cell_link import CellLink
from perception.observation import TowerObservation

WATCH_EVERY_S = 0.5          # world time between looks


class WindowEnd(StrEnum):
    CLOSED = "closed"        # it ran out with the tower standing
    FELL = "fell"            # the tower was seen down
    TOUCHED = "touched"      # the next player touched the tower first


@dataclass(frozen=True)
class Settled:
    end: WindowEnd
    seen: TowerObservation   # the last look
    at: float                # when it ended (device time): the look, or the touch


def watch_settling(link: CellLink, released_at: float, window_s: float,
                   touched: Callable[[], float | None] | None = None) -> Settled:
    """Look at the tower every WATCH_EVERY_S until the window after `released_at` closes. A fall
    ends the watch; so does a touch before the window closes (`touched()`: the device time of
    the next player's first touch since the release, if any), and a fall first seen after that
    touch is the next player's turn's to judge."""
    deadline = released_at + window_s
    first: TowerObservation | None = None
    while True:
        now = link.arm.device_time()
        seen = link.observe(after=now).observation
        # A touch first: once the next player's hand is at the tower, what this look shows is
        # theirs, and a hand hides slots that then read as emptied (a fall it is not).
        touch = touched() if touched is not None else None
        if touch is not None and touch < deadline:
            return Settled(WindowEnd.TOUCHED, seen, max(touch, released_at))
        # Against the window's first look: blocks that drop one look after another are each too
        # few for perception, which compares a look with the last one that stood
        if first is None:
            first = seen
        if seen.fell_since(first):
            return Settled(WindowEnd.FELL, seen, now)
        if now >= deadline:
            return Settled(WindowEnd.CLOSED, seen, deadline)
        wait = min(WATCH_EVERY_S, deadline - now)
        link.arm.wait_for(lambda t, until=now + wait: t.device_time >= until, timeout_s=wait + 10)
