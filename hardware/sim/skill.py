"""How a simulated person of a given skill plays (hardware/sim/person.py): the forces, tries,
care and accuracy a level from 0 (a first game) to 1 (practised) stands for."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


PUT_BACK_N = 2.0


@dataclass(frozen=True)
class Skill:
    """0 (first game) to 1 (practised). A practised player pushes gently and stops at a light
    resistance, tries more blocks and forces the last one less, watches the tower and puts back
    what it moved, judges balance, and places accurately."""

    level: float = 0.7

    def __post_init__(self) -> None:
        if not 0.0 <= self.level <= 1.0:
            raise ValueError(f"a skill level is within 0..1, got {self.level}")

    @property
    def push_limit_n(self) -> float:
        return 0.8 + 2.2 * (1.0 - self.level)

    @property
    def tries(self) -> int:
        """Pushes a player makes in a turn, the last of them by force (a practised player
        forces the block of the gentle tries that gave the most, if one gave at all, instead of
        a new one)."""
        return 2 + round(13 * self.level)

    @property
    def force_factor(self) -> float:
        """How much harder than `push_limit_n` the last block of a turn is pushed: a beginner
        forces it, a practised player hardly more than they push any block."""
        return 1.0 + 2.0 * (1.0 - self.level)

    @property
    def put_back_n(self) -> float:
        """How hard a tested block is pushed back home: firmly, whatever the skill (at least
        PUT_BACK_N, and no less than the turn's last push). Put back at a practised player's
        gentle 0.8 N, a tested block stayed out of its slot in solo games (skill 1, seeds 1 and 2:
        a move that emptied two slots, where skill 0.7 put the same block home at 2.3 N)."""
        return max(PUT_BACK_N, self.push_limit_n * self.force_factor)

    @property
    def balance_mm(self) -> float:
        """The sense of balance: a player leaves for last a block whose removal would leave the tower
        standing by less than this much (the centre of mass of the part above some layer this
        close to the edge of what supports it; 0: takes anything)."""
        return 12.0 * self.level

    @property
    def practised(self) -> bool:
        """A practised player watches the tower while pushing and drawing, puts back what it
        moved, gives up on a block that resists more than `feel_n`, and leaves for last a block
        whose pulled end carries a block of the top layer (nothing holds that one down: it slides
        out with the drawn block)."""
        return self.level >= 0.5

    @property
    def feel_n(self) -> float:
        """The most a practised player lets a tested block resist before trying another: a block
        that carries no load slides at a touch (0.05-0.25 N in the simulated sets), one that
        resists more carries part of the tower and, drawn, takes it along."""
        return 0.25 + 0.4 * (1.0 - self.level)

    @property
    def place_sigma_m(self) -> float:
        return 0.0005 + 0.003 * (1.0 - self.level)

    @property
    def yaw_sigma_rad(self) -> float:
        return np.radians(0.5 + 5.0 * (1.0 - self.level))
