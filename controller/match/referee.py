"""What the robot, as referee, makes of a person's turn from what its cameras saw before and after
it: which block left which slot, where it went and which way it lies, which other blocks were left
out of place, whether the tower fell. The rules (planning/game/rules) then name the violations.

No I/O: it compares two tower observations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from perception.observation import TowerObservation
from perception.tower_estimator import BlockObservation
from planning.game.rules import (RuleOptions, Severity, Violation, ViolationCode, check_move,
                            check_no_testing, check_tested_blocks, placement_target)
from planning.game.tower import across_index, layer_axis

# A block's shift is the difference of two protrusion measurements, each good to 0.54 mm at its
# 95th percentile (jenga-robot bench --suite perception): 0.77 mm for the difference. The referee
# calls a block left out only past the rules' tolerance by this much, never on what it may not
# have seen (a 1.1 mm shift of a block nobody touched was called at a 1 mm tolerance).
# That figure holds for a marker both cameras read (triangulated). One camera alone places the
# marker on the vertical plane through its slot's axis, moved across to where both cameras last
# saw it; a block lying beside that line since (shoved sideways, or turned: 6 degrees puts its end
# 4 mm off) reads along its axis wrong by that offset times the cotangent of the camera's view
# (0.65-1.5 in the default cell). Before that memory, such readings were 3.5-12 mm off the
# simulator's truth in simulated matches, and blocks that had moved 0-1.5 mm were called 4.7-12.2
# mm out, a round lost on a repeat. So a shift is judged only between two readings of the same end
# by the same cameras (whose errors then largely cancel); any other apparent shift is noted, not
# called.
SEEN_MARGIN_MM = 0.8
SAME_PLANE_M = 0.0003


@dataclass
class SeenMove:
    source: tuple[int, int] | None = None
    target: tuple[int, int] | None = None
    block: int | None = None
    laid_across: bool = False                  # seen on top lying the wrong way
    displaced_mm: dict[tuple[int, int], float] = field(default_factory=dict)   # others moved
    # apparent shifts of blocks read differently in the two looks (other cameras or end): not judged
    unsure_mm: dict[tuple[int, int], float] = field(default_factory=dict)
    violations: list[Violation] = field(default_factory=list)
    fell: bool = False
    unclear: str | None = None                 # what could not be made out, if anything

    @property
    def complete(self) -> bool:
        """A block was taken and put somewhere on top (rightly or wrongly)."""
        return self.source is not None and (self.target is not None or self.laid_across)

    def to_json(self) -> dict:
        return {"source": self.source, "target": self.target, "block": self.block,
                "laid_across": self.laid_across,
                "displaced_mm": {f"{k[0]}.{k[1]}": round(v, 2) for k, v in self.displaced_mm.items()},
                "unsure_mm": {f"{k[0]}.{k[1]}": round(v, 2) for k, v in self.unsure_mm.items()},
                "violations": [{"code": v.code.label, "message": v.message} for v in self.violations],
                "fell": self.fell, "unclear": self.unclear}


def judge_seen_move(before: TowerObservation, after: TowerObservation,
                    options: RuleOptions = RuleOptions(), blocks_moved: int = 0) -> SeenMove:
    """The move between two observations of a standing tower, and the rules it broke."""
    if after.fell_since(before):
        return SeenMove(fell=True)
    tower = before.tower_state(blocks_moved)
    removed = after.emptied_since(before)
    added = before.emptied_since(after)        # the slots filled: read empty before, full after
    move = SeenMove()
    ids_before = {(b.layer, b.slot): b.block for b in before.blocks}
    if len(removed) > 1:
        move.unclear = f"{len(removed)} slots emptied: {removed}"
    if removed:
        move.source = removed[0]
        move.block = ids_before.get(move.source)
    if len(added) == 1:
        move.target = added[0]
    elif len(added) > 1:
        move.unclear = f"{len(added)} slots filled: {added}"
    if move.source is not None and move.target is None and move.block in after.out_of_place \
            and move.source not in after.far_out:
        # read, but in no slot: lying across the top (the observer fits slots along each layer)
        move.laid_across = True
    was = {(b.layer, b.slot): b for b in before.blocks}
    was.update({(b.layer, b.slot, b.end): b for b in before.blocks})
    for b in after.blocks:
        key = (b.layer, b.slot)
        prior = was.get((*key, b.end), was.get(key))
        if prior is None or key == move.source:
            continue
        shift = abs(b.protrusion - prior.protrusion) * 1000     # mm, as the rules state it
        if shift > options.displaced_tolerance_mm + SEEN_MARGIN_MM:
            (move.displaced_mm if read_alike(prior, b) else move.unsure_mm)[key] = shift
    if move.source is not None and (move.target is not None or move.laid_across):
        want = placement_target(tower)
        target = move.target or (want.layer, want.slots[0])
        axis = layer_axis(target[0])
        if move.laid_across:
            axis = "y" if axis == "x" else "x"
        move.violations += check_move(tower, move.source, target, axis, options)
        if move.laid_across:
            move.violations = [v for v in move.violations if v.code is not ViolationCode.WRONG_SLOT]
    move.violations += check_tested_blocks(move.displaced_mm, move.source, options, tower=tower)
    if move.source is not None:
        move.violations += check_no_testing(sorted(move.displaced_mm), move.source, options,
                                            tower=tower)
    return move


def read_alike(a: BlockObservation, b: BlockObservation) -> bool:
    """Whether two readings of a block err alike, so that their difference is its shift: the same
    end read by the same cameras, and, by one camera, placed on the same plane across its slot's
    axis (perception moves that plane to where both cameras last saw the marker, and a look
    between the two may have moved it)."""
    if (a.end, a.cameras) != (b.end, b.cameras):
        return False
    across = across_index(a.layer)
    return len(a.cameras) >= 2 or abs(a.position[across] - b.position[across]) <= SAME_PLANE_M


def calls_of_one_move(violations: list[Violation]) -> list[tuple[Violation, bool]]:
    """The referee's calls on one move, each with whether it counts against the player. One move
    is one incident: its first violation is the warning (or, repeated, the loss), and the others
    are named with it; a round-losing violation always counts, and is called first."""
    ordered = sorted(violations, key=lambda v: v.severity is not Severity.ROUND_LOSING)
    return [(v, n == 0 or v.severity is Severity.ROUND_LOSING) for n, v in enumerate(ordered)]
