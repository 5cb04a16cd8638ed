"""What the turn's procedure (controller/turn/procedure.py) asks of whoever carries it out: a look
at the tower and the block skills. Two carry it out:

- the arm (controller/turn/arm_hands.py): through the serial link and the cameras only, as the
  product plays;
- the game benchmark's fast hands (controller/bench/fast_hands.py): the same block work through
  the simulated cell's physics, the tower read from its ground truth, no arm transits; for
  benchmarks only.

Every length is in metres, every time in the world's seconds (device time on the arm, simulated
time in the benchmark). A skill that finds the tower down raises `TowerFellError`
(controller/turn/report.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Protocol

from planning.looseness import ProbeOutcome
from planning.motion.contact_geometry import PUSH_THROUGH
from planning.game.tower import Slot, TowerState
Trace = list[tuple[float, float]]        # (world time, force N) along a push or a pull


class GaveUp(StrEnum):
    """Why a pull was given up (the block is then back in its slot, or on its way there)."""
    APPROACH = "approach"     # the fingers met the block at every try
    DRAG = "pull"             # a steady drag: the tower came along
    SLIP = "slip"             # the block slid out of the fingers' light grip
    RIDER = "rider"           # a block above came along with it


@dataclass(frozen=True)
class Look:
    """The tower as the hands see it."""
    tower: TowerState
    heights: dict[Slot, float]           # each block's centre height above the table (m)
    offsets: dict[Slot, float]           # how far each block sticks out along its layer (m)
    occupancy: dict[Slot, bool]          # every slot looked at: full or empty
    out_of_place: list[int] = field(default_factory=list)   # blocks seen lying in no slot
    blocks: dict[Slot, int] = field(default_factory=dict)   # which block is where, where known

    def changed(self, full: set[Slot]) -> list[Slot]:
        """Slots seen full or empty against the expected `full` ones."""
        return sorted(k for k, seen in self.occupancy.items() if seen != (k in full))


@dataclass(frozen=True)
class Felt:
    """A test push: what the policy learns, and the force along it."""
    outcome: ProbeOutcome
    trace: Trace = field(default_factory=list)


@dataclass(frozen=True)
class Pushed:
    """A push-through: `jammed` when the force passed the jam limit before the block stuck out
    at the front; `moved_m` how far the block went in all."""
    jammed: bool
    moved_m: float


@dataclass(frozen=True)
class Pulled:
    """A grasp and pull. Drawn clear (`gave_up` None), the block is held for the place; given up,
    the block was drawn `drawn_m` further than it stood out, then slid `slid_back_m` back in
    still held, and the fingers are open and out of the way."""
    gave_up: GaveUp | None = None
    drawn_m: float = 0.0
    peak_force_n: float = 0.0
    trace: Trace = field(default_factory=list)
    touches: list[dict] = field(default_factory=list)   # grasp approaches that met the block
    resumed: int = 0            # guard trips on a short knock, after which the pull went on
    riders: dict[Slot, float] = field(default_factory=dict)   # blocks above that came along (m)
    slid_back_m: float = 0.0

    @property
    def left_out_m(self) -> float:
        """Given up: how much further than it stood out before the pull the block sticks out."""
        return max(self.drawn_m - self.slid_back_m, 0.0)

    @property
    def came(self) -> bool:
        return self.gave_up is None


@dataclass(frozen=True)
class PlaceOrder:
    """Where and how gently to set the held block down."""
    target: Slot
    press_n: float              # the set-down's guard
    align_n: float              # the align push's guard
    ends: tuple                 # which ends of the block may take the align push
    # every place missed: let the block go where the set-down lands (a block held is never
    # kept), instead of lifting it from a landing on something (`PlaceMissed`)
    as_landed: bool = False


class Hands(Protocol):
    def now(self) -> float:
        """The world's time (s)."""

    def record_moves(self, into: list[dict] | None) -> None:
        """From now on, note each move the hands make in `into` (None: no longer): its name and
        its start and end in the world's time, `start_s` and `end_s` (hands that make no timed
        moves note nothing)."""

    def look(self, blocks_moved: int, again: bool = False) -> Look:
        """The tower now. Raises TowerFellError when it is down. `again`: a second look at a
        tower the hands just saw (the window's, or one the turn's moves met a surprise in), to
        tell a surprise that lasted a look from one that stays: always a new look, and not the
        start of a turn."""

    def pulled_end(self, layer: int) -> int:
        """The end (+1 or -1, along the layer's blocks) that blocks of `layer` come out by."""

    def probe(self, source: Slot, guard_n: float) -> Felt:
        """Push the block gently from the back until it has moved a few millimetres or the force
        reaches `guard_n`; the fingertip stays at the block."""

    def withdraw(self) -> None:
        """Back the fingertip out of a probe whose block is not taken."""

    def push_through(self, source: Slot, jam_n: float) -> Pushed:
        """Push the block from the back until it sticks out at the front (on from the probe when
        the fingertip is still at it), giving up at `jam_n`; then back out of the hole."""

    def restore(self, source: Slot, travel_m: float, jam_n: float) -> float:
        """Push a block moved `travel_m` toward the front back home from the front; returns how
        far short of home it stopped (m)."""

    def pull(self, source: Slot, out_m: float = PUSH_THROUGH, insist: bool = False) -> Pulled:
        """Grasp the block's protruding end (`out_m` further out than the turn's look saw it) and
        draw it clear, guarded against a drag and watched for riders; with `insist` (a block that
        dragged and would not go back) guarded only at the firmer TAKE_GUARD_N
        (controller/turn/arm_pulling.py), and not watched."""

    def place(self, order: PlaceOrder) -> float:
        """Set the held block down; the world time the hands last touched it. Raises PlaceMissed
        (controller/turn/report.py), the block lifted and still held, when the set-down will not
        land on its place (unless `order.as_landed`)."""

    def clear(self) -> None:
        """Out of the tower's way."""

    def watch(self, released_at: float, window_s: float, blocks_moved: int) -> Look | None:
        """Watch the tower until the settling window after `released_at` closes; the last look,
        or None if the tower fell."""
