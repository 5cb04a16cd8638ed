"""One round, as a referee follows it: turns, settling windows, falls, winner and loser.

The referee is fed what happened (touches, placements, falls, observed violations) with the time of
the world they happened in, in time order. It never reads a clock: `advance_to(t)` closes windows and
turn limits that have run out by time t.

Turn end (RULES.md, A turn, 6): a turn completes when its settling window closes, `window_s` after the
placed block was released, or at the next player's first touch, whichever comes first. From then on
the next player's turn is open, touched or not. A tower fall is charged to the player whose turn is
open (a turn in its window is still open); the winner is the last player who completed a turn before
it, or nobody.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Iterable

from planning.game.rules.moves import Severity, Violation, ViolationCode
from planning.game.rules.options import MINOR_FALL_MAX_BLOCKS, RuleOptions
from planning.game.rules.turn_order import TurnOrder
from planning.game.tower import SLOTS_PER_LAYER


class RuleInputError(ValueError):
    """Events a referee cannot follow: out of time order, unknown players, malformed."""


class RoundStatus(Enum):
    IN_PLAY = "in_play"
    FELL = "fell"
    VOID = "void"
    # Lost by rule rather than by a fall: a repeated correctable violation in strict play, a
    # round-losing violation, or (timed variant) the turn limit run out.
    FORFEIT = "forfeit"


class Fall(Enum):
    TOWER = "tower"            # the tower, or blocks other than the moved one, fell
    MOVED_ONLY = "moved_only"  # only the block being moved dropped: pick it up, continue
    OUTSIDE = "outside"        # an outside event (table, pet, bystander): the round is void
    MINOR = "minor"            # a few blocks dropped, the tower stands (see continue_after_minor_fall)


class Phase(Enum):
    OPEN = "open"      # the current player's turn: not yet placed
    WINDOW = "window"  # placed; the settling window is running
    OVER = "over"


@dataclass(frozen=True)
class RoundResult:
    status: RoundStatus
    loser: str | None
    winner: str | None
    completed_turns: dict[str, int]
    reason: str = ""

    def to_json(self) -> dict:
        return {"status": self.status.value, "loser": self.loser, "winner": self.winner,
                "completed_turns": dict(self.completed_turns)}


@dataclass(frozen=True)
class Note:
    """Something the referee saw and ruled on without changing the round: a warning."""

    t: float
    player: str | None
    violation: Violation


@dataclass
class _Turn:
    player: str
    first_touch_t: float | None = None
    place_t: float | None = None


class RoundReferee:
    """Follows one round. `sequence` is the turn order starting with the first mover (the builder);
    it defaults to `players`. `top_blocks` is how many blocks the top layer holds beyond a complete
    layer at the start (0 for a fresh tower); the reverse-direction variant needs it."""

    def __init__(self, players: Iterable[str], options: RuleOptions = RuleOptions(),
                 sequence: Iterable[str] | None = None, top_blocks: int = 0):
        self.players = tuple(players)
        if not self.players or len(set(self.players)) != len(self.players):
            raise RuleInputError(f"players must be distinct names, got {list(self.players)}")
        self.options = options
        self.order = TurnOrder(tuple(sequence) if sequence is not None else self.players)
        strangers = set(self.order.sequence) - set(self.players)
        if strangers:
            raise RuleInputError(f"turn order names unknown players: {sorted(strangers)}")
        self.time = float("-inf")
        self.completed_turns = {p: 0 for p in self.players}
        self.last_completer: str | None = None
        self.notes: list[Note] = []
        self._warned: set[str] = set()
        self._top_blocks = top_blocks % SLOTS_PER_LAYER
        self._turn = _Turn(self.order.current)
        self._result: RoundResult | None = None

    # --- what the referee knows ---------------------------------------------------------------

    @property
    def phase(self) -> Phase:
        if self._result is not None:
            return Phase.OVER
        return Phase.OPEN if self._turn.place_t is None else Phase.WINDOW

    @property
    def current_player(self) -> str:
        """The player whose turn is open (a turn in its settling window is still open)."""
        return self._turn.player

    @property
    def touched_at(self) -> float | None:
        """When the open turn's player first touched the tower (None: not yet)."""
        return self._turn.first_touch_t

    @property
    def window_closes_at(self) -> float | None:
        if self.phase is not Phase.WINDOW:
            return None
        return self._turn.place_t + self.options.window_s

    @property
    def turn_deadline(self) -> float | None:
        """Timed variant: when the open turn runs out of time (None: untimed or not yet touched)."""
        if self.options.turn_limit_s is None or self._turn.first_touch_t is None:
            return None
        if self.phase is not Phase.OPEN:
            return None
        return self._turn.first_touch_t + self.options.turn_limit_s

    @property
    def result(self) -> RoundResult:
        if self._result is not None:
            return self._result
        return RoundResult(RoundStatus.IN_PLAY, None, None, dict(self.completed_turns))

    # --- what happens -------------------------------------------------------------------------

    def advance_to(self, t: float) -> None:
        """Let time run to `t`: close a settling window or run out a turn limit that expired."""
        if t != t or t < self.time:  # NaN, or going back in time
            raise RuleInputError(f"time {t} is before the last event at {self.time}")
        if self._result is None:
            closes = self.window_closes_at
            if closes is not None and t >= closes:
                self._complete_turn()
            deadline = self.turn_deadline
            if deadline is not None and t > deadline:
                self._end(RoundStatus.FORFEIT, self._turn.player,
                          f"{self._turn.player} ran out of the {self.options.turn_limit_s:g} s limit")
        self.time = t

    def touch(self, player: str, t: float) -> None:
        """`player` touched the tower at time t."""
        self._contact(player, t, "touched the tower")

    def place(self, player: str, t: float) -> None:
        """`player` released a block on top at time t; the settling window starts."""
        if not self._contact(player, t, "placed a block"):  # placing is touching, too
            return
        if self._turn.place_t is not None:
            self._note(t, player, ViolationCode.OUT_OF_TURN,
                       f"{player} placed a second block in the same turn")
            return
        self._turn.place_t = t
        self._top_blocks = (self._top_blocks + 1) % SLOTS_PER_LAYER
        if self._top_blocks == 0 and self.options.reverse_direction:
            self.order.reverse()  # this placement completed the top layer

    def fall(self, what: Fall, t: float, blocks: int | None = None, caused_by: str | None = None) -> None:
        """Something fell at time t. `blocks` is how many fell (for MINOR). `caused_by` names a
        non-active player who interfered, when the referee saw it; otherwise the open turn's player
        is charged."""
        if caused_by is not None:
            self._check_player(caused_by)
        self.advance_to(t)
        if self._result is not None or what is Fall.MOVED_ONLY:
            return
        if what is Fall.OUTSIDE:
            self._end(RoundStatus.VOID, None, "an outside event toppled the tower")
            return
        if what is Fall.MINOR and self.options.continue_after_minor_fall:
            if blocks is not None and 0 < blocks <= MINOR_FALL_MAX_BLOCKS:
                return
        loser = caused_by or self._turn.player
        self._end(RoundStatus.FELL, loser, f"the tower fell in {loser}'s turn")

    def report_violation(self, player: str, violation: Violation, t: float) -> None:
        """A violation the referee saw. Round-losing ones end the round; a correctable one is a
        warning the first time a player commits one and a loss on repeat (strict play)."""
        self._check_player(player)
        self.advance_to(t)
        if self._result is not None:
            return
        if violation.severity is Severity.ROUND_LOSING or player in self._warned:
            self._end(RoundStatus.FORFEIT, player, f"{player}: {violation.message}")
            return
        self._warned.add(player)
        self.notes.append(Note(t, player, violation))

    # --- inside -------------------------------------------------------------------------------

    def _contact(self, player: str, t: float, what: str) -> bool:
        """A hand on the tower; True when it is the open turn's player's."""
        self._check_player(player)
        self.advance_to(t)
        if self._result is not None:
            return False
        if self.phase is Phase.WINDOW and player == self.order.next and player != self._turn.player:
            self._complete_turn()  # the next player's first touch ends the window early
        if player != self._turn.player:
            self._note(t, player, ViolationCode.OUT_OF_TURN,
                       f"{player} {what} during {self._turn.player}'s turn")
            return False
        if self._turn.first_touch_t is None:
            self._turn.first_touch_t = t
        return True

    def _complete_turn(self) -> None:
        player = self._turn.player
        self.completed_turns[player] += 1
        self.last_completer = player
        self._turn = _Turn(self.order.advance())

    def _end(self, status: RoundStatus, loser: str | None, reason: str) -> None:
        winner = None
        if status is not RoundStatus.VOID and self.last_completer != loser:
            winner = self.last_completer
        self._result = RoundResult(status, loser, winner, dict(self.completed_turns), reason)

    def _note(self, t: float, player: str | None, code: ViolationCode, message: str) -> None:
        self.notes.append(Note(t, player, Violation(code, message)))

    def _check_player(self, player: str) -> None:
        if player not in self.players:
            raise RuleInputError(f"unknown player {player!r}; players are {list(self.players)}")
