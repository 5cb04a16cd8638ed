"""Which block to try, and when to stop trying: candidates ranked by looseness and stability margin
(reachability is the motion planner's to say, as candidates are tried), and the probe policy.

Policy for one turn:
- only legal sources whose removal (and the block's placement on top) leaves a stability margin of
  at least MIN_MARGIN_MM are candidates, and (when the blocks' mass is known) only those that can
  be pushed with at least MIN_PUSH_N while staying within PUSH_SAFETY of the force that would tip
  the tower (`push_limit_n`);
- blocks of the two bottom layers are left alone (LOWEST_LAYER);
- a candidate whose pulled end carries a block that bears no load from above (a loose block of the
  layer above, or any block of the top layer) goes after those that do not: as the pulled block
  slides out, it drags such a rider along with it (see RIDER_P);
- the candidate most likely to come out alone goes first: likely loose, with a block across its
  pulled end that is likely loaded (ties: one that leaves its layer a block to give later, a side
  block of a full layer before its middle; then the larger margin);
- when no one knows whether that block across the pulled end is loaded (an untested side block of a
  full layer), it is tested first, if it is a candidate itself (`next_probe`): loose, it is the
  better block to take; tight, the candidate under it comes out alone;
- a probe that shows a block confidently loose ends the search, unless its pulled end carries a
  rider: that block is pushed through;
- a probed block that moved more than the rules' tolerance is put back before another is touched;
- after MAX_PROBES probes without a confident answer, the most promising probed block is taken
  anyway (the rules allow no passing), unless the probes found it tight and untested candidates
  are left (up to MAX_PROBES_TIGHT probes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

import numpy as np

from planning.looseness import LoosenessBelief, ProbeOutcome
from planning.game.rules import RuleOptions, placement_target, takeable_sources
from planning.stability import (BlockDims, analyse, best_slot, press_limit_n, push_limit_n,
                                removal_margin)
from planning.game.tower import TowerState

MIN_MARGIN_MM = 3.0
# Pushes stay within this share of the force that would tip the tower over an interface below the
# pushed block; a candidate whose safe force is below MIN_PUSH_N cannot be tested (loose blocks of
# the simulated sets slide at 0.05-0.2 N).
PUSH_SAFETY = 0.5
# The robot leaves the two bottom layers alone. Gripping a block that lies on the table brings the
# fingers down to the table (the simulated cell shows contact spikes past the wrist sensor's
# range), and a bottom block taken narrows the base under every later push. Layer 2 can only be
# gripped with the approach pitched down past the table, and in the simulated cell those pulls
# dragged the whole tower along (top layer 4-10 mm, the bottom layer 3 mm) and the block came out
# askew in the grip, striking the top layer as it was set down.
LOWEST_LAYER = 3
MIN_PUSH_N = 0.2
# A block of the layer above lying across the pulled end with at least this chance of being loose
# is a rider: in the simulated cell an unloaded block lying there slid 10-50 mm off the tower with
# the pulled block (a 0.05 mm rise of the gripper along the pull was enough to lift it off its
# other two supports), however slowly or softly the pull was made. Pressing the pulled block down
# does not help: in a fresh seed-1 tower, side block 6.0 rested on pulled block 5.1 and on 5.0 with
# about equal force (0.3 N each), and the pull dragged it 24 mm; with the pull line 0.4 mm lower,
# 30 mm.
RIDER_P = 0.5
# A block across the pulled end at most this likely to be loose is taken to be loaded: a block of a
# layer of two (0.12), or one that did not give way under a probe (0.03). One that perception
# measured as the thickest of its layer (0.15) is still worth a probe: that rests on height
# differences of 0.08 mm, and a rider dragged costs the game. Between this and RIDER_P no one
# knows.
RIDER_SAFE_P = 0.13
MAX_PROBES = 6
# After MAX_PROBES the best block probed is taken, but not one the probes found tight (its chance
# of being loose below FOUND_TIGHT_P) while untested candidates are left, up to MAX_PROBES_TIGHT
# probes: pushed through at the jam limit, a tight block drags the tower above it. In a seed-1
# match two tight blocks of layer 5 taken so moved the layers above them 2.5-5 mm, then 5-8 mm,
# and the tower fell at the next push.
FOUND_TIGHT_P = 0.1
MAX_PROBES_TIGHT = 10
# Setting a block down presses on the tower, and pushing it home pushes the top layer: both stay
# within PLACE_SAFETY of the force that would tip the tower over a weak interface below (a layer
# of two blocks side by side). On a 21-story tower whose layer 8 had lost a side block, a press
# of 4.5 N on a side block of the top layer, or a push of 0.42 N along it (were it to jam), was
# enough. The floors keep the guards above what a normal set-down and slide take (landing reads
# a few tenths of a newton; a block slides home at 0.05-0.1 N).
PLACE_SAFETY = 0.5
MIN_PRESS_N = 1.0
MIN_ALIGN_N = 0.3
# A block set down overhanging must balance on its own by this much until it is pushed home.
SET_DOWN_MARGIN_MM = 5.0
# A probed block displaced by more than this must be put back (RULES.md: 1 mm by default).
RESTORE_M = 0.001


@dataclass(frozen=True)
class CandidateFilter:
    """Which legal blocks are candidates at all: the lowest layer taken from, the stability margin
    left after the move, the safe push force (see the constants above)."""
    lowest_layer: int = LOWEST_LAYER
    min_margin_mm: float = MIN_MARGIN_MM
    min_push_n: float = MIN_PUSH_N


# The robot's own filter.
ROBOT_FILTER = CandidateFilter()


@dataclass(frozen=True)
class Candidate:
    source: tuple[int, int]
    margin_mm: float
    p_loose: float
    push_limit_n: float = float("inf")     # the safe push force (PUSH_SAFETY of tipping)
    rider_p: float = 0.0                     # chance the block across its pulled end is unloaded
    rider_at: tuple[int, int] | None = None  # that block (None: nothing lies there)

    @property
    def rider(self) -> bool:
        """An unloaded block (likely enough) lies across the pulled end: pulling drags it."""
        return self.rider_p >= RIDER_P

    @property
    def rider_unknown(self) -> bool:
        return RIDER_SAFE_P < self.rider_p < RIDER_P

    @property
    def alone_p(self) -> float:
        """Chance the block is loose and comes out alone."""
        return self.p_loose * (1.0 - self.rider_p)


def placement_slot(tower: TowerState, dims: BlockDims) -> tuple[int, int]:
    """Where the next block goes: the placement layer's free slot that keeps the tower most
    stable (the middle of a new layer, then the sides)."""
    target = placement_target(tower)
    return target.layer, best_slot(tower, dims, target.layer, target.slots)


def placement_slots(tower: TowerState, dims: BlockDims) -> list[tuple[int, int]]:
    """Every slot the next block may legally go to, `placement_slot` first, then the placement
    layer's other free slots, most stable first: where a set-down will not land, the next."""
    first = placement_slot(tower, dims)
    target = placement_target(tower)
    others = sorted((s for s in target.slots if s != first[1]),
                    key=lambda s: (-analyse(tower.with_block(target.layer, s), dims).margin_mm,
                                   abs(s - 1), s))
    return [first] + [(target.layer, s) for s in others]


# A forced move (no block seemed to come out, and the rules allow no pass) looks at every legal
# block, whatever its margin or safe push force.
FORCED_FILTER = CandidateFilter(lowest_layer=1, min_margin_mm=-np.inf, min_push_n=0.0)
# A block that needs more than this to push through is jammed (the arm's push-through guard).
JAM_N = 3.0


def forced_order(tower: TowerState, belief: LoosenessBelief, dims: BlockDims,
                 options: RuleOptions = RuleOptions(), offsets: dict | None = None,
                 pulled_end: Callable[[int], int] | None = None, jam_n: float = JAM_N
                 ) -> list[tuple[tuple[int, int], float]]:
    """The legal blocks for a forced move, each with the force its push-through may reach: those
    the tower stands without first (a negative stability margin last), then the least loaded:
    those the turn's probes and push-throughs found loosest (a block that jammed last), then
    the ones that leave the tower the widest margin. The force is `jam_n`, or less where the
    tower would tip sooner (the candidate's safe push force)."""
    ranked = rank(tower, belief, dims, options, offsets=offsets, pulled_end=pulled_end,
                  accept=FORCED_FILTER)
    peaks = {(o.layer, o.slot): o.peak_force_n for o in belief.probes}
    ordered = sorted(ranked, key=lambda c: (c.margin_mm < 0, c.source in belief.stuck,
                                            -c.p_loose, peaks.get(c.source, np.inf),
                                            -c.margin_mm, c.source))
    # Never below MIN_PUSH_N: where the model says the tower tips at no force at all (a support
    # it cannot find under some interface) the tower still stands, and a forced move is made
    # anyway; a zero guard is no guard (the firmware refuses it: tower 11 stopped on that).
    return [(c.source, max(MIN_PUSH_N, min(jam_n, c.push_limit_n))) for c in ordered]


def set_down_ends(tower: TowerState, dims: BlockDims, target: tuple[int, int], overhang: float,
                  offsets: dict | None = None) -> tuple[int, ...]:
    """The ends (+1, -1 along the layer's axis) a block may be set down `overhang` out of
    `target` by, on `tower` (the block taken out, not yet placed): those where it balances on
    the layer below by SET_DOWN_MARGIN_MM at least. Under the rules the layer below is full and
    both ends are; after a block was taken from it (a forbidden move), the end over its gap is
    not: the block would tip off when let go."""
    placed = tower if tower.has_block(*target) else tower.with_block(*target)
    below = target[0] - 1
    ends = []
    for end in (1, -1):
        moved = dict(offsets or {})
        moved[target] = end * overhang
        if analyse(placed, dims, moved).margins_mm.get(below, -np.inf) >= SET_DOWN_MARGIN_MM:
            ends.append(end)
    return tuple(ends)


def placement_guards(tower: TowerState, dims: BlockDims, target: tuple[int, int], overhang: float,
                     press_max_n: float, push_max_n: float, offsets: dict | None = None
                     ) -> tuple[float, float]:
    """Guards (N) for setting a block down at `target` on `tower` (which has the block taken out
    but not yet placed), set down overhanging either end by `overhang`: the press, then the push
    home along the block; each the safe share of its tipping force, kept between its floor and
    the planner's default (`press_max_n`, `push_max_n`)."""
    if dims.mass <= 0:
        return press_max_n, push_max_n
    placed = tower if tower.has_block(*target) else tower.with_block(*target)
    press = min(press_limit_n(placed, dims, target, sign * overhang, offsets) for sign in (1, -1))
    push = push_limit_n(placed, dims, target, offsets)
    return (float(np.clip(PLACE_SAFETY * press, MIN_PRESS_N, press_max_n)),
            float(np.clip(PLACE_SAFETY * push, MIN_ALIGN_N, push_max_n)))


def rank(tower: TowerState, belief: LoosenessBelief, dims: BlockDims,
         options: RuleOptions = RuleOptions(), exclude: set | None = None,
         offsets: dict | None = None, pulled_end: Callable[[int], int] | None = None,
         statics: dict | None = None, accept: CandidateFilter = ROBOT_FILTER
         ) -> list[Candidate]:
    """Stable legal candidates (those `accept` lets through), most promising first.
    `pulled_end(layer)`: the end (+1 or -1 along the layer's axis) its blocks are pulled out by;
    without it riders are not looked for.
    `statics`: a dict kept between calls on the same tower and offsets (one turn), in which each
    source's stability margin and safe push force are remembered: they cost most of the ranking
    and only the belief changes between the calls."""
    exclude = exclude or set()
    statics = {} if statics is None else statics
    target = placement_slot(tower, dims)
    out = []
    for source in takeable_sources(tower, options):
        if source in exclude or source[0] < accept.lowest_layer:
            continue
        if source not in statics:
            margin = removal_margin(tower, dims, source, target, offsets)
            limit = PUSH_SAFETY * push_limit_n(tower, dims, source, offsets) \
                if dims.mass > 0 and margin >= accept.min_margin_mm else np.inf
            statics[source] = margin, limit
        margin, limit = statics[source]
        if margin < accept.min_margin_mm or limit < accept.min_push_n:
            continue
        rider_at, rider_p = (None, 0.0) if pulled_end is None else \
            _rider(tower, belief, source, pulled_end(source[0]))
        out.append(Candidate(source, margin, belief.p_loose.get(source, 0.0), float(limit),
                             rider_p, rider_at))
    # Between blocks equally likely to come out alone, the one that leaves its layer something to
    # give later goes first: a side block of a full layer before its middle (`keeps_less`).
    return sorted(out, key=lambda c: (c.rider, -c.alone_p, keeps_less(tower, c.source),
                                      -c.margin_mm, c.source))


def keeps_less(tower: TowerState, source: tuple[int, int]) -> bool:
    """Whether taking `source` leaves its layer with no block that could still be taken: the middle
    of a full layer leaves two side blocks, and taking either would leave a lone side block that
    cannot carry the tower; a side block taken first leaves the other side to take, and then a
    middle block alone, which can."""
    layer, slot = source
    return slot == 1 and sum(tower.row(layer)) == 3


def _rider(tower: TowerState, belief: LoosenessBelief, source: tuple[int, int], end: int
           ) -> tuple[tuple[int, int] | None, float]:
    """The block of the layer above that lies across `source`'s `end`, and the chance that it
    bears no load (a top-layer block never does)."""
    rider = tower.across_end(*source, end)
    if rider is None:
        return None, 0.0
    if rider[0] == tower.top_layer:
        return rider, 1.0
    return rider, belief.p_loose.get(rider, 0.0)


def next_probe(candidates: list[Candidate]) -> Candidate:
    """The candidate to test next: the best one, unless no one knows whether the block across its
    pulled end is loaded and that block is an (untested) candidate too: then that block first."""
    best = candidates[0]
    if best.rider_unknown:
        for c in candidates:
            if c.source == best.rider_at:
                return c
    return best


def best_probed(belief: LoosenessBelief, rider_p: dict | None = None) -> tuple[int, int] | None:
    """The most promising block probed so far that has not jammed, if any; `rider_p`: for each
    block, the chance that the block across its pulled end is unloaded."""
    rider_p = rider_p or {}
    tried = [o for o in belief.probes if (o.layer, o.slot) not in belief.stuck]
    if not tried:
        return None

    def promise(o: ProbeOutcome):
        key = (o.layer, o.slot)
        return belief.p_loose[key] * (1.0 - rider_p.get(key, 0.0)), -o.peak_force_n

    best = max(tried, key=promise)
    return best.layer, best.slot


class Action(StrEnum):
    """What to do once a probe is done."""
    TAKE = "take"                            # push the probed block on through
    NEXT = "next"                            # on to the next candidate
    RESTORE_THEN_NEXT = "restore_then_next"  # push the probed block back home first
    TAKE_BEST = "take_best"                  # no more probes: take the best block probed


@dataclass(frozen=True)
class Decision:
    action: Action
    source: tuple[int, int] | None = None
    restore: bool = False    # push the probed block back home before anything else is touched


def after_probe(belief: LoosenessBelief, outcome: ProbeOutcome, probes_so_far: int,
                rider_p: dict | None = None) -> Decision:
    """What to do once a probe is done; `rider_p` as for `best_probed`."""
    key = (outcome.layer, outcome.slot)
    if belief.confident_loose(key) and (rider_p or {}).get(key, 0.0) < RIDER_P:
        return Decision(Action.TAKE, key)
    if probes_so_far >= MAX_PROBES:
        best = best_probed(belief, rider_p)
        if best is not None and (belief.p_loose[best] >= FOUND_TIGHT_P
                                 or probes_so_far >= MAX_PROBES_TIGHT):
            return Decision(Action.TAKE_BEST, best, restore=outcome.travel_m > RESTORE_M and best != key)
    if outcome.travel_m > RESTORE_M:
        return Decision(Action.RESTORE_THEN_NEXT, key, restore=True)
    return Decision(Action.NEXT, key)
