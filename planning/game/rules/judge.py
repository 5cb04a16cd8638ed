"""Judge a round from a recorded list of events (`jenga-robot rules judge`).

Input: `{"players": ["A", "B"], "events": [...]}`, events in time order, each
`{"t": s, "type": "touch" | "place", "player": name}` or
`{"t": s, "type": "fall", "what": "tower" | "moved_only" | "outside" | "minor", "blocks": n}`
(`blocks` only for "minor"). The first player listed moves first.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planning.game.rules.options import RuleOptions
from planning.game.rules.round import Fall, Note, RoundReferee, RoundResult, RuleInputError


@dataclass(frozen=True)
class Event:
    t: float
    type: str
    player: str | None = None
    what: Fall | None = None
    blocks: int | None = None


def _where(index: int) -> str:
    return f"event {index}"


def parse_round(obj: Any) -> tuple[list[str], list[Event]]:
    """Players and events from the judge's JSON input. Raises RuleInputError naming the event."""
    if not isinstance(obj, dict):
        raise RuleInputError('expected an object with "players" and "events"')
    players = obj.get("players")
    if (not isinstance(players, list) or not players
            or any(not isinstance(p, str) or not p for p in players)):
        raise RuleInputError('"players" must be a non-empty list of names')
    if len(set(players)) != len(players):
        raise RuleInputError(f'"players" names a player twice: {players}')
    raw = obj.get("events")
    if not isinstance(raw, list):
        raise RuleInputError('"events" must be a list')
    events = []
    last_t = float("-inf")
    for index, item in enumerate(raw):
        if not isinstance(item, dict):
            raise RuleInputError(f"{_where(index)}: expected an object, got {item!r}")
        t = item.get("t")
        if type(t) not in (int, float) or t != t or t in (float("inf"), float("-inf")):
            raise RuleInputError(f"{_where(index)}: \"t\" must be a number of seconds, got {t!r}")
        if t < last_t:
            raise RuleInputError(f"{_where(index)}: t={t} is earlier than the event before it "
                                 f"(t={last_t}); events must be in time order")
        last_t = t
        kind = item.get("type")
        if kind in ("touch", "place"):
            player = item.get("player")
            if player not in players:
                raise RuleInputError(f"{_where(index)}: {kind} by {player!r}, who is not one of "
                                     f"the players {players}")
            events.append(Event(float(t), kind, player=player))
        elif kind == "fall":
            what = item.get("what", "tower")
            try:
                fall = Fall(what)
            except ValueError:
                allowed = ", ".join(f.value for f in Fall)
                raise RuleInputError(f"{_where(index)}: fall \"what\" is {what!r}; allowed: "
                                     f"{allowed}") from None
            blocks = item.get("blocks")
            if blocks is not None and (type(blocks) is not int or blocks < 1):
                raise RuleInputError(f"{_where(index)}: \"blocks\" must be a positive integer")
            events.append(Event(float(t), kind, what=fall, blocks=blocks))
        else:
            raise RuleInputError(f"{_where(index)}: \"type\" is {kind!r}; allowed: touch, place, fall")
    return list(players), events


def judge_round(players: list[str], events: list[Event],
                options: RuleOptions = RuleOptions()) -> tuple[RoundResult, list[Note]]:
    """Feed every event to a referee; the result as of the last event, and the warnings it gave."""
    referee = RoundReferee(players, options)
    for event in events:
        if event.type == "touch":
            referee.touch(event.player, event.t)
        elif event.type == "place":
            referee.place(event.player, event.t)
        else:
            referee.fall(event.what, event.t, blocks=event.blocks)
    return referee.result, referee.notes
