"""Where a match stands, built by applying its logged events in order.

Live play and `play --resume` go through the same `apply`: the runner logs an event, then applies
it, so a resumed match is exactly the match that was logged (score, whose turn, the tower as last
accepted, a turn cut short). No I/O here.

Events (besides the fields every log line has):
- `match`: the header: `config` (MatchConfig.to_json), anything else the runner keeps.
- `round_start`: `tower` (layers) the round starts from.
- `turn_start`: `player`, `turn` (its number in the round), `t`.
- `touch`, `place`: `player`, `t` (and for a place, `source` and `target`).
- `violation`: `player`, `code` (ViolationCode label), `message`, `t`.
- `fall`: `what` (Fall value), `t`, optional `blocks`, `caused_by`.
- `advance`: `t`: time ran on to t (a settling window closed, a turn limit ran out).
- `turn_end`: `player`, `turn`, `tower` (layers and blocks_moved as the referee now sees it).
- `clock`: `world_t`, `match_t`: from now on match time is world time + (match_t - world_t).
- `probe`: one of the robot's test pushes: `turn`, `layer`, `slot`, `peak_force_n`, `travel_mm`,
  `threshold_n`, `trace` ([match time, force N] pairs); for the report.
- `round_end`, `match_end`, `note`: for the reader; `round_end` is checked against the rules.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from planning.game.rules import (Fall, Match, MatchConfig, RoundReferee, RoundStatus, RuleInputError,
                            Violation, ViolationCode)
from planning.game.tower import TowerError, TowerState

_CODES = {code.label: code for code in ViolationCode}


class MatchProgressError(ValueError):
    """A logged event that does not fit the match so far: the log is not this program's, or it
    was edited."""


@dataclass
class OpenTurn:
    """A turn that started and has not ended."""

    player: str
    number: int
    started_t: float
    probes: int = 0         # test pushes logged in it, before a restart too


class MatchProgress:
    def __init__(self, config: MatchConfig):
        self.config = config
        self.match = Match(config)
        self.referee: RoundReferee | None = None
        self.tower: TowerState | None = None        # as the referee last accepted it
        self.rounds_started = 0
        self.turns_in_round = 0
        self.open_turn: OpenTurn | None = None
        # the open turn's move, once placed and until its turn_end: (source, target), the target
        # None when the block was not seen in a slot
        self.placed: tuple[tuple[int, int], tuple[int, int] | None] | None = None
        self.offset_s = 0.0                          # match time minus world time
        self.time = float("-inf")                    # the latest match time logged

    @classmethod
    def from_events(cls, events: list[dict[str, Any]]) -> MatchProgress:
        """The match as its log leaves it (the first event is the header)."""
        if not events or events[0].get("event") != "match":
            raise MatchProgressError("a match log starts with its header")
        try:
            config = MatchConfig.from_json(events[0].get("config"))
        except ValueError as exc:
            raise MatchProgressError(f"the header's configuration: {exc}") from None
        progress = cls(config)
        for event in events[1:]:
            progress.apply(event)
        return progress

    # --- the match as it stands ------------------------------------------------------------------

    def match_time(self, world_t: float) -> float:
        return world_t + self.offset_s

    def expected_tower(self) -> TowerState | None:
        """The tower as the log leaves it: the last one accepted, with the open turn's move when
        it was placed (a move the log could not place in a slot is left out)."""
        if self.tower is None or self.placed is None or self.placed[1] is None:
            return self.tower
        try:
            return self.tower.moved(*self.placed)
        except TowerError:
            return self.tower

    @property
    def in_round(self) -> bool:
        return self.referee is not None

    @property
    def over(self) -> bool:
        return self.match.is_over

    # --- events ----------------------------------------------------------------------------------

    def apply(self, event: dict[str, Any]) -> None:
        kind = event.get("event")
        handler = getattr(self, f"_on_{kind}", None)
        if handler is None:
            raise MatchProgressError(f"event {event.get('seq')}: unknown kind {kind!r}")
        try:
            handler(event)
        except (KeyError, TypeError) as exc:
            raise MatchProgressError(f"event {event.get('seq')} ({kind}) lacks or garbles "
                                     f"{exc}") from None
        except (RuleInputError, TowerError, ValueError) as exc:
            raise MatchProgressError(f"event {event.get('seq')} ({kind}): {exc}") from None

    def _on_match(self, event) -> None:
        raise MatchProgressError(f"event {event.get('seq')}: a second match header")

    def _on_round_start(self, event) -> None:
        if self.referee is not None:
            raise MatchProgressError("a round started before the last one ended")
        if self.match.is_over:
            raise MatchProgressError("a round started after the match is over")
        self.referee = self.match.new_round()
        self.tower = TowerState.from_json(event["tower"])
        self.rounds_started += 1
        self.turns_in_round = 0
        self.open_turn = None
        self.placed = None

    def _on_turn_start(self, event) -> None:
        referee = self._referee()
        t = self._at(event)
        referee.advance_to(t)
        self._check_round_end()
        if self.referee is None:
            return
        if event["player"] != referee.current_player:
            raise MatchProgressError(f"{event['player']} started a turn in "
                                     f"{referee.current_player}'s place")
        self.turns_in_round += 1
        self.open_turn = OpenTurn(event["player"], int(event["turn"]), t)

    def _on_touch(self, event) -> None:
        self._referee().touch(event["player"], self._at(event))
        self._check_round_end()

    def _on_place(self, event) -> None:
        self._referee().place(event["player"], self._at(event))
        move = event.get("seen") or event        # the person's move, as the referee saw it
        if move.get("source") is not None:
            target = move.get("target")
            self.placed = (tuple(move["source"]), None if target is None else tuple(target))
        self._check_round_end()

    def _on_violation(self, event) -> None:
        code = _CODES.get(event["code"])
        if code is None:
            raise MatchProgressError(f"unknown violation {event['code']!r}")
        self._referee().report_violation(event["player"], Violation(code, event["message"]),
                                         self._at(event))
        self._check_round_end()

    def _on_fall(self, event) -> None:
        self._referee().fall(Fall(event["what"]), self._at(event), blocks=event.get("blocks"),
                             caused_by=event.get("caused_by"))
        self._check_round_end()

    def _on_advance(self, event) -> None:
        self._referee().advance_to(self._at(event))
        self._check_round_end()

    def _on_turn_end(self, event) -> None:
        self.tower = TowerState.from_json(event["tower"])
        self.open_turn = None
        self.placed = None

    def _on_clock(self, event) -> None:
        self.offset_s = float(event["match_t"]) - float(event["world_t"])

    def _on_round_end(self, event) -> None:
        last = self.match.results[-1] if self.match.results else None
        if self.referee is not None or last is None or last.to_json() != event["result"]:
            raise MatchProgressError(f"the log says the round ended {event['result']}, the rules "
                                     f"say {last.to_json() if last else 'it did not'}")

    def _on_match_end(self, event) -> None:
        if event.get("winner") != self.match.winner:
            raise MatchProgressError(f"the log names {event.get('winner')} the winner, the rules "
                                     f"{self.match.winner}")

    def _on_note(self, event) -> None:
        pass

    def _on_person_tried(self, event) -> None:
        pass           # the simulated person's account is for whoever reads the log

    def _on_probe(self, event) -> None:
        if self.open_turn is not None:      # what the robot felt is for the report; the count
            self.open_turn.probes += 1      # is for the console

    # --- inside ----------------------------------------------------------------------------------

    def _referee(self) -> RoundReferee:
        if self.referee is None:
            raise MatchProgressError("no round is in play")
        return self.referee

    def _at(self, event) -> float:
        t = float(event["t"])
        if t < self.time:
            raise MatchProgressError(f"t={t} is before the last event (t={self.time})")
        self.time = t
        return t

    def _check_round_end(self) -> None:
        if self.referee is not None and self.referee.result.status is not RoundStatus.IN_PLAY:
            self.match.record(self.referee.result)
            self.referee = None
            self.open_turn = None
