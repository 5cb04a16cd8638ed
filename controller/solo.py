"""Solo play: the robot takes every turn, trying to build the tower as high as it can."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

from controller.cell_link import CellLink, CellLinkError
from controller.turn.arm_hands import arm_player
from controller.turn.procedure import Player
from controller.turn.report import NoMoveError, TowerFellError, TurnError, TurnReport
from firmware_bridge.errors import ArmError, LinkStalledError, PortClosedError
from perception.observation import PerceptionError
from planning.motion.plans import PlanError
from planning.policies import Policy
from planning.game.rules import RuleOptions


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


def play_solo(link: CellLink, turns: int, options: RuleOptions = RuleOptions(),
              on_turn: Callable[[TurnReport], None] | None = None,
              policy: Policy | None = None,
              on_phase: Callable[[str, TurnReport], None] | None = None) -> SoloResult:
    """`policy`: how blocks are chosen (planning/policies.py; the robot's own by default);
    `on_phase(name, report)` is told as each phase of a turn begins."""
    player = arm_player(link, options, policy)
    player.on_phase = on_phase
    return play_game(player, turns, on_turn)


def play_game(player: Player, turns: int,
              on_turn: Callable[[TurnReport], None] | None = None) -> SoloResult:
    """Turn after turn by `player` until the tower falls, a turn goes wrong or `turns` are played:
    the solo game of `play --solo` and of the game benchmark alike."""
    result = SoloResult()
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


def _play_turns(player: Player, turns: int, result: SoloResult,
                on_turn: Callable[[TurnReport], None] | None) -> None:
    for number in range(1, turns + 1):
        try:
            report = player.play(number, blocks_moved=number - 1)
        except (TurnError, PlanError, PerceptionError, ArmError, CellLinkError) as exc:
            result.error = f"turn {number}: {exc}"
            result.fell = isinstance(exc, TowerFellError)
            result.no_move = isinstance(exc, NoMoveError)
            result.cell_lost = isinstance(exc, (LinkStalledError, PortClosedError, CellLinkError))
            partial = getattr(exc, "report", None)
            if partial is not None:
                result.turns.append(partial)      # what the turn did before it stopped
            break
        result.turns.append(report)
        if on_turn:
            on_turn(report)
        result.stories = report.stories or result.stories
        if report.fell or not report.legal or report.error:
            result.fell = report.fell
            result.error = report.error
            break
