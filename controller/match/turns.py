"""A match log read back as its turns: who moved, which block went where, what the robot felt on
each probe, the tower after the turn, how the turn ended. The report (controller/match/report.py)
is drawn from this, so it can be drawn again from any log, a resumed match's included.

No I/O: it reads a list of logged events.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from controller.wording import slot_name
from planning.game.tower import TowerError, TowerState

SAME_MOVE = "referee, the same move: "     # a note naming another violation of one move


@dataclass
class ProbeTrace:
    layer: int
    slot: int
    peak_force_n: float
    travel_mm: float
    threshold_n: float
    trace: list[tuple[float, float]]     # (match time s, force N)


@dataclass
class LoggedTurn:
    round: int
    number: int
    player: str
    source: tuple[int, int] | None = None
    target: tuple[int, int] | None = None
    laid_across: bool = False
    probes: list[ProbeTrace] = field(default_factory=list)
    before: TowerState | None = None      # the tower the turn started from, as last accepted
    tower: TowerState | None = None       # after it, as the referee saw it (None: never ended)
    violations: list[str] = field(default_factory=list)
    duration_s: float | None = None       # the robot's own turns: the time of its phases
    ended: str = "open"                   # "ended", "fell", "forfeit", "open" (cut short)

    @property
    def label(self) -> str:
        return f"round {self.round}, turn {self.number}: {self.player}"

    @property
    def move(self) -> str:
        if self.source is None:
            return "no move"
        to = (slot_name(*self.target) if self.target else
              "laid across the top" if self.laid_across else "?")
        return f"{slot_name(*self.source)} -> {to}"


def logged_turns(events: list[dict[str, Any]]) -> list[LoggedTurn]:
    """Every turn the log started, in order. A turn started again after a resume (the same
    round, player and number) continues the one it cut short."""
    turns: list[LoggedTurn] = []
    rounds = 0
    current: LoggedTurn | None = None
    accepted: TowerState | None = None
    for event in events:
        kind = event.get("event")
        if kind == "round_start":
            rounds += 1
            current = None
            accepted = _tower(event)
        elif kind == "turn_start":
            number, player = int(event["turn"]), event["player"]
            if current is None or (current.round, current.number, current.player) != \
                    (rounds, number, player):
                current = LoggedTurn(rounds, number, player, before=accepted)
                turns.append(current)
        elif current is None:
            continue
        elif kind == "probe":
            current.probes.append(ProbeTrace(
                int(event["layer"]), int(event["slot"]), float(event["peak_force_n"]),
                float(event["travel_mm"]), float(event["threshold_n"]),
                [(float(t), float(f)) for t, f in event.get("trace", [])]))
        elif kind == "place":
            seen = event.get("seen") or event
            current.source = _slot(seen.get("source"))
            current.target = _slot(seen.get("target"))
            current.laid_across = bool(seen.get("laid_across", False))
            if "phases_s" in event:
                current.duration_s = float(sum(event["phases_s"].values()))
        elif kind == "violation":
            current.violations.append(event.get("message", event.get("code", "")))
        elif kind == "note" and str(event.get("text", "")).startswith(SAME_MOVE):
            current.violations.append(event["text"][len(SAME_MOVE):])
        elif kind == "turn_end":
            current.tower = accepted = _tower(event)
            current.ended = "ended"
        elif kind == "fall":
            current.ended = "fell"
        elif kind == "round_end":
            if current.ended == "open":
                current.ended = "forfeit" if event.get("result", {}).get("status") == "forfeit" \
                    else current.ended
    return turns


def _tower(event) -> TowerState | None:
    try:
        return TowerState.from_json(event["tower"])
    except (TowerError, KeyError):
        return None


def _slot(value) -> tuple[int, int] | None:
    return None if value is None else (int(value[0]), int(value[1]))
