"""Solo play: the robot takes every turn, trying to build the tower as high as it can."""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field
from typing import Callable

from controller.cell_link import CellLink, CellLinkError
from controller.turn.arm_hands import arm_player
from controller.turn.procedure import Player
from controller.turn.report import NoMoveError, Phase, TowerFellError, TurnError, TurnReport
from controller.wording import NO_BLOCK_OUT
from firmware_bridge.errors import ArmError, LinkStalledError, PortClosedError
from perception.observation import PerceptionError
from planning.motion.plans import PlanError
from planning.policies import Policy
from planning.game.rules import RuleOptions


# the phase of a turn a fall came in, as the game's ending
FALL_PHASE = {Phase.PERCEIVE: "look", Phase.PROBE: "probe or push-through", Phase.PULL: "pull",
              Phase.PLACE: "place", Phase.CLEAR: "place", Phase.SETTLE: "settling window"}


@dataclass
class SoloResult:
    turns: list[TurnReport] = field(default_factory=list)
    stories: str = ""
    fell: bool = False
    error: str | None = None
    cell_lost: bool = False     # the cell stopped answering: nobody saw the tower after that
    no_move: bool = False       # the player found no block to attempt
    world_s: float = 0.0        # device time the game took
    wall_s: float = 0.0         # wall-clock time it took (a busy machine runs the world slower)

    @property
    def pace(self) -> float:
        """World seconds per wall second (1: real time)."""
        return self.world_s / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def all_legal(self) -> bool:
        return bool(self.turns) and all(t.legal for t in self.turns)

    @property
    def tower(self) -> str:
        """What is known of the tower at the end, in words."""
        if self.fell:
            return "FELL"
        if self.cell_lost:
            return "unknown (the cell stopped answering)"
        return "standing"

    @property
    def ok(self) -> bool:
        return self.all_legal and not self.fell and self.error is None

    @property
    def moved(self) -> list[TurnReport]:
        """The turns that ended legal with the tower standing: a block moved each."""
        return [t for t in self.turns if t.legal and not t.fell and not t.error]

    @property
    def legal_turns(self) -> int:
        return len(self.moved)

    @property
    def extraction_success(self) -> float:
        return self.legal_turns / len(self.turns) if self.turns else 0.0

    @property
    def probes_per_turn(self) -> float:
        return sum(len(t.probes) for t in self.turns) / len(self.turns) if self.turns else 0.0

    @property
    def median_turn_s(self) -> float | None:
        """Median world time of the legal turns."""
        times = [t.duration_s for t in self.moved]
        return statistics.median(times) if times else None

    @property
    def forced(self) -> list[TurnReport]:
        """The turns in which no block seemed to come out and the least-loaded one was worked."""
        return [t for t in self.turns if t.forced]

    @property
    def recoveries(self) -> list[dict]:
        """Every surprise the game's turns got over (TurnReport.recoveries), each with its turn."""
        return [r | {"turn": t.number} for t in self.turns for r in t.recoveries]

    def ran_as_asked(self, cap: int | None) -> bool:
        """Every turn legal up to the cap with the tower standing; or, uncapped, every turn legal
        up to the one that ended the game as the rules end a solo game (the tower fell, or no
        block would come out)."""
        if cap is not None:
            return self.ok and len(self.turns) == cap
        return (self.fell or self.no_move) and all(t.legal for t in self.turns[:-1])

    def fall_cause(self, rode: bool = False) -> str:
        """Where in its last turn the tower fell. `rode`: blocks rode along on the last drawn
        block (the benchmark's fast hands can tell), so a fall while it was placed or settling is
        the pull's."""
        phase = self.turns[-1].phase if self.turns else None
        if rode and phase in (Phase.PLACE, Phase.CLEAR, Phase.SETTLE):
            return "pull (blocks rode along on the drawn one)"
        return FALL_PHASE.get(phase, "during the turn")

    def ending(self, rode: bool = False) -> str:
        """How the game ended, in words (`rode`: as for fall_cause)."""
        if self.fell:
            return "fell: " + self.fall_cause(rode)
        if self.no_move:
            return NO_BLOCK_OUT
        if self.error:
            return self.error
        return "played every turn asked for"


def play_solo(link: CellLink, turns: int | None = None, options: RuleOptions = RuleOptions(),
              on_turn: Callable[[TurnReport], None] | None = None,
              policy: Policy | None = None,
              on_phase: Callable[[str, TurnReport], None] | None = None,
              on_note: Callable[[str], None] | None = None,
              result: SoloResult | None = None,
              watch: Callable[[Player], None] | None = None) -> SoloResult:
    """`turns`: a move cap (None: to the game's end); `policy`: how blocks are chosen
    (planning/policies.py; the robot's own by default); `on_phase(name, report)` is told as each
    phase of a turn begins, `on_note(text)` of each block a turn gives up on; `result`: see
    play_game; `watch(player)` hooks more to the player (the viewer)."""
    player = arm_player(link, options, policy)
    player.on_phase, player.on_note = on_phase, on_note
    if watch is not None:
        watch(player)
    return play_game(player, turns, on_turn, result)


def play_game(player: Player, turns: int | None = None,
              on_turn: Callable[[TurnReport], None] | None = None,
              result: SoloResult | None = None) -> SoloResult:
    """Turn after turn by `player` until the tower falls, not one block can be worked, a turn
    cannot go on (the arm faulted, the cell stopped answering) or, if a cap is given, `turns`
    are played (an illegal turn is counted, and the game goes on): the solo game of `play --solo` and of the
    game benchmark alike. The game is kept in `result` as it goes (a new one if None), so a
    caller still holds it when Ctrl-C unwinds the game: the turn it stopped is in it too."""
    result = result if result is not None else SoloResult()
    now = player.hands.now
    wall0, world0 = time.monotonic(), now()
    try:
        _play_turns(player, turns, result, on_turn)
    finally:
        result.wall_s = time.monotonic() - wall0
        try:
            result.world_s = now() - world0
        except ArmError:
            pass                # the cell stopped answering: how much world time passed is unknown
    return result


def _play_turns(player: Player, turns: int | None, result: SoloResult,
                on_turn: Callable[[TurnReport], None] | None) -> None:
    number = 0
    while turns is None or number < turns:
        number += 1
        try:
            report = player.play(number, blocks_moved=number - 1)
        except (TurnError, PlanError, PerceptionError, ArmError, CellLinkError) as exc:
            result.error = f"turn {number}: {exc}"
            result.fell = isinstance(exc, TowerFellError)
            result.no_move = isinstance(exc, NoMoveError)
            result.cell_lost = isinstance(exc, (LinkStalledError, PortClosedError, CellLinkError))
            _keep_partial(result, exc)
            break
        except KeyboardInterrupt as exc:
            _keep_partial(result, exc)
            raise
        result.turns.append(report)
        result.stories = report.stories or result.stories
        # A turn the rules call illegal (the tower seen otherwise than the move should leave it)
        # is counted, and the game goes on with the tower as it is: only a fall ends it.
        result.fell = report.fell
        if on_turn:
            on_turn(report)       # the game as it stands after this turn is in `result`
        if report.fell:
            break


def _keep_partial(result: SoloResult, exc: BaseException) -> None:
    """What a turn an error stopped did before it stopped, kept with the game."""
    partial = getattr(exc, "report", None)
    if partial is not None:
        result.turns.append(partial)
