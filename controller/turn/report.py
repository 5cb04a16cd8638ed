"""What a robot turn reports (the block taken, each probe, the time of each phase) and the errors
that end it; the clock that times its phases in the world's time."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Callable


class Phase(StrEnum):
    PERCEIVE = "perceive"
    PROBE = "probe"
    PULL = "pull"
    PLACE = "place"
    CLEAR = "clear"
    SETTLE = "settle"


class TurnError(RuntimeError):
    """The turn could not be played (no reachable block, a plan failed mid-turn, the tower fell)."""


class TowerFellError(TurnError):
    """The tower was seen down during the turn."""


class NoMoveError(TurnError):
    """Not one legal block could be worked at all, not even as a forced move (every one out of the
    hands' reach): the robot would have to pass, which the rules do not allow (whoever runs the
    game rules on it: the round is lost)."""


class PlaceMissed(TurnError):
    """A set-down that would not land where it was aimed: the block was lifted back and is still
    held over the tower (the turn tries another place)."""


class HeldDropped(TurnError):
    """The block fell out of the fingers on the way to the top: nothing is left to place. The
    turn's move cannot be completed (the block lies where it fell); the window still runs, for
    what the fall of the block did to the tower."""


class HeldTurned(PlaceMissed):
    """The block turned in the fingers on the way to the top: still held over the tower, not set
    down (the turn lets it down where it lands, as it is held: trying other places would not
    turn it back)."""


class Recovery(StrEnum):
    """A surprise the turn met and got over, as the report names it."""
    LOOKED_AGAIN = "looked again"              # a look that read no tower, taken again
    TOWER_CHANGED = "went on with the tower as it is now"   # blocks moved by a let-go
    NEIGHBOUR_RESTORED = "put a moved neighbour back"
    PUT_BACK_AGAIN = "put a let-go block back again"   # its slot read empty after the first
    FORCED_MOVE = "forced move"                # no block seemed to come out: the best one worked
    REACHED_FROM_CLEAR = "reached again from clear of the tower"   # no plan from where it stood
    PLACED_ELSEWHERE = "placed elsewhere"      # a set-down that would not land, moved on
    SET_DOWN_AS_LANDED = "set down where it landed"   # every place missed: let go, not held
    OUTCOME_LOOKED_AGAIN = "looked again after the turn"   # what the window saw, seen again


@dataclass
class ProbeRecord:
    layer: int
    slot: int
    block: int | None
    threshold_n: float
    peak_force_n: float
    travel_mm: float
    p_loose: float
    trace: list[tuple[float, float]] = field(default_factory=list)   # (device time, force N)


@dataclass
class TurnReport:
    number: int
    source: tuple[int, int] | None = None
    target: tuple[int, int] | None = None
    block: int | None = None
    probes: list[ProbeRecord] = field(default_factory=list)
    recalled: list[tuple[int, int]] = field(default_factory=list)  # earlier findings that held
    phases_s: dict[str, float] = field(default_factory=dict)
    moves: list[dict] = field(default_factory=list)   # each move: its name, start and end times
    legal: bool = False
    fell: bool = False
    stories: str = ""
    released_at: float | None = None      # device time the tool last touched the placed block
    pull_trace: list[tuple[float, float]] = field(default_factory=list)   # the last pull's drag, N
    let_go: list[dict] = field(default_factory=list)   # blocks given up and put back: `gave_up`
    touches: list[dict] = field(default_factory=list)  # grasp approaches that met the block
    pull_resumed: int = 0       # guard trips on a short knock, after which the pull went on
    taken_after_all: bool = False   # given up (a drag, a rider), it would not go back: taken
    forced: bool = False        # no block seemed to come out: the least-loaded one was worked
    recoveries: list[dict] = field(default_factory=list)   # each: `kind` (a Recovery), `detail`
    notes: list[str] = field(default_factory=list)   # what it gave up on and got over, in words
    error: str | None = None
    phase: Phase | None = None  # the phase under way when the turn ended, or the last one

    def recovered(self, kind: Recovery, detail: str) -> None:
        self.recoveries.append({"kind": str(kind), "detail": detail})

    @property
    def duration_s(self) -> float:
        return sum(self.phases_s.values())

    @property
    def moving_s(self) -> float:
        """World time the hands spent in moves, grips and tares (the rest of the turn went to
        looking, choosing, planning, and the settling window)."""
        return sum(m["end_s"] - m["start_s"] for m in self.moves)

    def gave_up(self, source, at: str, drawn_m: float, peak_force_n: float,
                trace: list[tuple[float, float]] | None = None, slid_back_m: float = 0.0) -> None:
        """Record a block let go and put back: where (`at`: a GaveUp value), how far
        it had been drawn, how far it was slid back in still held, and the peak force."""
        entry = {"layer": source[0], "slot": source[1], "drawn_mm": drawn_m * 1000,
                 "slid_back_mm": slid_back_m * 1000, "peak_force_n": peak_force_n, "at": at}
        if trace is not None:
            entry["trace"] = trace
        self.let_go.append(entry)


class PhaseClock:
    """Times each phase of the turn by the world's clock `now`."""

    def __init__(self, now: Callable[[], float], report: TurnReport,
                 on_start: Callable[[str, TurnReport], None] | None):
        self.now, self.report, self.on_start = now, report, on_start

    def __call__(self, name: Phase):
        phases = self

        class _Timer:
            def __enter__(self):
                phases.report.phase = name
                if phases.on_start is not None:
                    phases.on_start(name, phases.report)
                self.start = phases.now()

            def __exit__(self, *exc):
                spent = phases.now() - self.start
                phases.report.phases_s[name] = phases.report.phases_s.get(name, 0.0) + spent
        return _Timer()
