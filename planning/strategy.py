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
  slides out, the slightest lift drags such a rider along with it (see RIDER_P);
- the candidate most likely loose goes first (ties: the larger margin);
- a probe that shows a block confidently loose ends the search: that block is pushed through;
- a probed block that moved more than the rules' tolerance is put back before another is touched;
- after MAX_PROBES probes without a confident answer, the most promising probed block is taken
  anyway (the rules allow no passing).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from planning.looseness import LoosenessBelief, ProbeOutcome
from planning.rules import RuleOptions, legal_sources, placement_target
from planning.stability import BlockDims, best_slot, push_limit_n, removal_margin
from planning.tower import TowerState

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
# other two supports), however slowly or softly the pull was made.
RIDER_P = 0.5
MAX_PROBES = 6
# A probed block displaced by more than this must be put back (RULES.md: 1 mm by default).
RESTORE_M = 0.001


@dataclass(frozen=True)
class Candidate:
    source: tuple[int, int]
    margin_mm: float
    p_loose: float
    push_limit_n: float = float("inf")     # the safe push force (PUSH_SAFETY of tipping)
    rider: bool = False                      # an unloaded block lies across its pulled end


def placement_slot(tower: TowerState, dims: BlockDims) -> tuple[int, int]:
    """Where the next block goes: the placement layer's free slot that keeps the tower most
    stable (the middle of a new layer, then the sides)."""
    target = placement_target(tower)
    return target.layer, best_slot(tower, dims, target.layer, target.slots)


def rank(tower: TowerState, belief: LoosenessBelief, dims: BlockDims,
         options: RuleOptions = RuleOptions(), exclude: set | None = None,
         offsets: dict | None = None, pulled_end: Callable[[int], int] | None = None
         ) -> list[Candidate]:
    """Stable legal candidates, most promising first. `pulled_end(layer)`: the end (+1 or -1
    along the layer's axis) its blocks are pulled out by; without it riders are not looked for."""
    exclude = exclude or set()
    target = placement_slot(tower, dims)
    out = []
    for source in legal_sources(tower, options):
        if source in exclude or source[0] < LOWEST_LAYER:
            continue
        margin = removal_margin(tower, dims, source, target, offsets)
        if margin < MIN_MARGIN_MM:
            continue
        limit = PUSH_SAFETY * push_limit_n(tower, dims, source, offsets) if dims.mass > 0 else np.inf
        if limit < MIN_PUSH_N:
            continue
        rider = pulled_end is not None and _has_rider(tower, belief, source, pulled_end(source[0]))
        out.append(Candidate(source, margin, belief.p_loose.get(source, 0.0), float(limit), rider))
    return sorted(out, key=lambda c: (c.rider, -c.p_loose, -c.margin_mm, c.source))


def _has_rider(tower: TowerState, belief: LoosenessBelief, source: tuple[int, int], end: int) -> bool:
    """Whether the block of the layer above that lies across `source`'s `end` bears no load:
    slots across a layer run along the axis of the layer below, slot 2 at its +1 end."""
    above = source[0] + 1
    slot = 2 if end > 0 else 0
    if above > tower.top_layer or not tower.row(above)[slot]:
        return False
    return above == tower.top_layer or belief.p_loose.get((above, slot), 0.0) >= RIDER_P


def best_probed(belief: LoosenessBelief) -> tuple[int, int] | None:
    """The most promising block probed so far that has not jammed, if any."""
    tried = [o for o in belief.probes if (o.layer, o.slot) not in belief.stuck]
    if not tried:
        return None
    best = max(tried, key=lambda o: (belief.p_loose[(o.layer, o.slot)], -o.peak_force_n))
    return best.layer, best.slot


@dataclass(frozen=True)
class Decision:
    action: str              # "take", "restore_then_next", "next", "take_best"
    source: tuple[int, int] | None = None


def after_probe(belief: LoosenessBelief, outcome: ProbeOutcome, probes_so_far: int) -> Decision:
    """What to do once a probe is done."""
    key = (outcome.layer, outcome.slot)
    if belief.confident_loose(key):
        return Decision("take", key)
    if probes_so_far >= MAX_PROBES:
        best = best_probed(belief)
        if best is not None:
            return Decision("take_best", best)
    if outcome.travel_m > RESTORE_M:
        return Decision("restore_then_next", key)
    return Decision("next", key)
