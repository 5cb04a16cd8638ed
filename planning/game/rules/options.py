"""The rule options and variants of RULES.md, chosen before a game is built.

Defaults are the project's Decisions: Hasbro's source rule, testing allowed, strict play on falls,
tested blocks restored within 1 mm, a 10-second settling window, no turn limit.
"""

from __future__ import annotations

from dataclasses import dataclass, fields, replace

SETTLING_WINDOW_S = 10.0
DISPLACED_TOLERANCE_MM = 1.0
# Variant "timed turns": RULES.md names 30 s and 60 s limits.
TIMED_TURN_LIMITS_S = (30.0, 60.0)
# "If only a few blocks dropped and the tower stands": how many is a few, for the
# continue_after_minor_fall option.
MINOR_FALL_MAX_BLOCKS = 3


@dataclass(frozen=True)
class RuleOptions:
    """Every option and variant a game can be played with.

    forbid_top_two: never take from the two topmost layers, whatever their state (on top of the
        default rule, so it only ever removes sources).
    no_testing: a block deliberately moved must be the one removed.
    reverse_direction: turn order reverses after each completed top layer.
    turn_limit_s: timed turns; the limit counts from the player's first touch (None: untimed).
    allow_leave_displaced: a tested block may stay displaced when putting it back would topple the
        tower.
    continue_after_minor_fall: a fall of a few blocks (tower still standing) does not end the round.
    displaced_tolerance_mm: a tested block displaced by more than this must be restored.
    window_s: the settling window after a placed block is released.
    """

    forbid_top_two: bool = False
    no_testing: bool = False
    reverse_direction: bool = False
    turn_limit_s: float | None = None
    allow_leave_displaced: bool = False
    continue_after_minor_fall: bool = False
    displaced_tolerance_mm: float = DISPLACED_TOLERANCE_MM
    window_s: float = SETTLING_WINDOW_S

    def __post_init__(self) -> None:
        if self.turn_limit_s is not None and not self.turn_limit_s > 0:
            raise ValueError(f"turn_limit_s must be positive or None, got {self.turn_limit_s}")
        if not self.displaced_tolerance_mm >= 0:
            raise ValueError(f"displaced_tolerance_mm must be >= 0, got {self.displaced_tolerance_mm}")
        if not self.window_s >= 0:
            raise ValueError(f"window_s must be >= 0, got {self.window_s}")

    @classmethod
    def with_variants(cls, names: list[str] | tuple[str, ...], **values) -> RuleOptions:
        """Options with the named boolean variants switched on (`["forbid_top_two", ...]`)."""
        options = cls(**values)
        flags = {f.name for f in fields(cls) if f.type in ("bool", bool)}
        unknown = [n for n in names if n not in flags]
        if unknown:
            raise ValueError(f"unknown variant {unknown[0]!r}; known: {', '.join(sorted(flags))}")
        return replace(options, **{n: True for n in names})


VARIANT_NAMES = tuple(f.name for f in fields(RuleOptions) if f.type in ("bool", bool))
