"""What the reference engine records for tests and measurement: its frames and commands, each
guard trip, and its own errors."""

from __future__ import annotations

from dataclasses import dataclass, field

KEPT_ERRORS = 10      # errors kept word for word; one that repeats every tick is only counted


@dataclass
class GuardRecord:
    """One guard trip, for measurement: when the force first crossed, when the set-point stopped."""

    traj_id: int
    crossing_time: float
    stop_time: float
    force_n: float


@dataclass
class EngineStats:
    frames_ok: int = 0
    frames_corrupt: int = 0
    commands_executed: int = 0
    duplicates: int = 0
    guard_trips: list[GuardRecord] = field(default_factory=list)
    internal_errors: list[str] = field(default_factory=list)   # the first KEPT_ERRORS
    internal_error_count: int = 0                                # every error of the engine's own
