"""The game benchmark's fast hands: the turn's skills (controller/turn/hands.py) carried out by
the simulated cell's physics without the arm (hardware/sim/bench_hands.py), the tower read from
the simulator's ground truth. The turn's procedure is the product's own
(controller/turn/procedure.py); only the hands differ.

For benchmarks only: it reads ground truth, which the product never may.
"""

from __future__ import annotations

from controller.turn.arm_hands import PROBE_DEPTH
from controller.turn.arm_pulling import (PULL_GUARD_N, RIDE_LOOK_EVERY_M, RIDE_WATCH_M,
                                        TAKE_GUARD_N)
from controller.turn.checks import DRAG_N, DRAG_WINDOW_S, rides
from controller.turn.hands import Felt, GaveUp, Look, PlaceOrder, Pulled, Pushed, Slot
from controller.turn.report import TowerFellError, TurnError
from hardware.sim.bench_hands import PROBE_SPEED, PUSH_SPEED, BenchHands
from hardware.sim.world import SimWorld
from planning.looseness import ProbeOutcome
from planning.motion.contact_geometry import PUSH_THROUGH
from planning.game.tower import SLOTS, TowerError

# A drawn block is held this long before it is placed, as the arm takes it up and over: a tower
# the pull disturbed falls in this time, and the fall is the pull's.
CARRY_S = 1.0
# Blocks that moved this far by the end of a pull rode along on the drawn block (the layer above
# it, pulled from under the top): when the block is taken away they come down with it.
RODE_ALONG_M = 0.005
TRACE_EVERY = 4              # a probe's force kept every this many physics steps (4 ms)
# The arm's cameras see the pull's riders in frames about 0.1 s after the look is asked for: 3 mm
# further at the arm's 30 mm/s.
LOOK_LAG_M = 0.003


class FastHands:
    def __init__(self, world: SimWorld):
        self.world = world
        self.bench = BenchHands(world)
        self.rode: list[int] = []        # blocks that rode along on the block drawn this turn
        self._at_block: tuple[Slot, float] | None = None   # the probed block, and how far it went
        self._turn_begun = False

    def now(self) -> float:
        return self.world.time

    def pulled_end(self, layer: int) -> int:
        return self.bench.geometry.front_end(layer)

    def record_moves(self, into: list[dict] | None) -> None:
        """No arm moves here to time: the fast hands push and pull the blocks themselves."""

    def look(self, blocks_moved: int, again: bool = False) -> Look:
        if not self._turn_begun and not again:
            # falls and drags are measured from where the blocks are as a turn begins
            self.bench.mark()
            self.rode = []
            self._turn_begun = True
        self._check_standing("while the tower was looked at")
        try:
            seen = self.bench.look(blocks_moved)
        except TowerError as exc:
            raise TowerFellError(f"no tower stands: {exc}") from None
        occupancy = {(layer, slot): (layer, slot) in seen.blocks
                     for layer in range(1, seen.tower.top_layer + 1) for slot in SLOTS}
        return Look(seen.tower, seen.heights, seen.offsets, occupancy, seen.out_of_place,
                    seen.blocks)

    def probe(self, source: Slot, guard_n: float) -> Felt:
        r = self._push(source, PROBE_DEPTH, guard_n, PROBE_SPEED, "a test push")
        self._at_block = (source, r.block_travel)
        trace = [(float(t), float(f)) for t, f in zip(r.times[::TRACE_EVERY],
                                                      r.forces_n[::TRACE_EVERY])]
        return Felt(ProbeOutcome(*source, r.peak_force_n, r.block_travel, r.tripped, guard_n), trace)

    def withdraw(self) -> None:
        self._at_block = None

    def push_through(self, source: Slot, jam_n: float) -> Pushed:
        at = self._at_block
        already = at[1] if at is not None and at[0] == source else 0.0
        self._at_block = None
        r = self._push(source, max(PUSH_THROUGH - already, 0.0), jam_n, PUSH_SPEED,
                       "a push-through")
        return Pushed(r.tripped, already + r.block_travel)

    def restore(self, source: Slot, travel_m: float, jam_n: float) -> float:
        self._at_block = None
        r = self._push(source, travel_m, jam_n, PUSH_SPEED, "a push back home", from_front=True)
        return max(travel_m - r.block_travel, 0.0)

    def pull(self, source: Slot, out_m: float = PUSH_THROUGH, insist: bool = False) -> Pulled:
        """The hand holds the block where it lies (the truth), so `out_m` is not needed."""
        bench = self.bench
        try:
            if insist:      # slid back, if let go, under the pull's own guard, as the arm does
                p = bench.pull(source, TAKE_GUARD_N, DRAG_N, DRAG_WINDOW_S,
                               slide_guard_n=PULL_GUARD_N)
            else:
                p = bench.pull(source, PULL_GUARD_N, DRAG_N, DRAG_WINDOW_S,
                               RIDE_WATCH_M + LOOK_LAG_M, rides, RIDE_LOOK_EVERY_M)
        except LookupError as exc:
            raise TurnError(str(exc)) from None
        bench.wait(CARRY_S)
        if bench.fallen(bench.held):
            raise TowerFellError("the tower fell as the block was drawn out")
        if not p.came:
            return Pulled(GaveUp.RIDER if p.riders else GaveUp.DRAG, p.drawn_m, p.peak_force_n,
                          riders=p.riders, slid_back_m=p.slid_back_m)
        self.rode = [b for b in bench.truth.displaced(RODE_ALONG_M) if b != bench.held]
        return Pulled(None, p.drawn_m, p.peak_force_n)

    def place(self, order: PlaceOrder) -> float:
        self.bench.place(order.target)
        self._check_standing("as the block was set down")
        return self.world.time

    def clear(self) -> None:
        """No arm to take away."""

    def watch(self, released_at: float, window_s: float, blocks_moved: int) -> Look | None:
        self.bench.wait(max(released_at + window_s - self.world.time, 0.0))
        try:
            return self.look(blocks_moved)
        except TowerFellError:
            return None
        finally:
            self._turn_begun = False

    def _push(self, source: Slot, depth: float, guard_n: float, speed: float, what: str,
              from_front: bool = False):
        try:
            r = self.bench.push(source, depth, guard_n, speed, from_front=from_front)
        except LookupError as exc:
            raise TurnError(str(exc)) from None
        self._check_standing(f"in {what}")
        return r

    def _check_standing(self, when: str) -> None:
        if self.bench.fallen(self.bench.held):
            raise TowerFellError(f"the tower fell {when}")
