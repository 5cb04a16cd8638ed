"""Which blocks may be taken, where a block must go, and what makes a move illegal.

Legal means legal by the rules; whether a move topples the tower is the planner's business.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from planning.game.rules.options import RuleOptions
from planning.game.tower import SLOTS, Axis, TowerState, layer_axis


@dataclass(frozen=True)
class PlacementTarget:
    """Where the next block goes: a layer, the free slots in it, the axis the block must lie along."""

    layer: int
    slots: tuple[int, ...]
    axis: Axis

    def to_json(self) -> dict:
        return {"layer": self.layer, "slots": list(self.slots), "axis": self.axis}


class Severity(Enum):
    # Correctable: put it right; strict play warns first and rules a loss on repeat.
    CORRECTABLE = "correctable"
    # Round-losing at once.
    ROUND_LOSING = "round_losing"


class ViolationCode(Enum):
    FORBIDDEN_LAYER = ("forbidden_layer", Severity.CORRECTABLE)
    EMPTY_SLOT = ("empty_slot", Severity.CORRECTABLE)
    NEW_LAYER_EARLY = ("new_layer_before_top_complete", Severity.CORRECTABLE)
    WRONG_SLOT = ("wrong_slot", Severity.CORRECTABLE)
    WRONG_ORIENTATION = ("wrong_orientation", Severity.CORRECTABLE)
    PUT_BACK = ("block_put_back_in_its_hole", Severity.CORRECTABLE)
    TESTED_BLOCK_DISPLACED = ("tested_block_left_out_of_position", Severity.CORRECTABLE)
    MOVED_BLOCK_NOT_TAKEN = ("moved_block_not_taken", Severity.CORRECTABLE)
    OUT_OF_TURN = ("out_of_turn", Severity.CORRECTABLE)
    TURN_TIME_EXCEEDED = ("turn_time_exceeded", Severity.ROUND_LOSING)
    # No passing: a player who will not attempt a move loses the round.
    NO_MOVE = ("no_move_attempted", Severity.ROUND_LOSING)

    @property
    def label(self) -> str:
        return self.value[0]

    @property
    def severity(self) -> Severity:
        return self.value[1]


@dataclass(frozen=True)
class Violation:
    code: ViolationCode
    message: str

    @property
    def severity(self) -> Severity:
        return self.code.severity


def legal_sources(tower: TowerState, options: RuleOptions = RuleOptions()) -> list[tuple[int, int]]:
    """Every (layer, slot) a player may take a block from, bottom first.

    Default (Hasbro): any block strictly below the highest complete layer. `forbid_top_two`
    additionally never allows the two topmost layers, whatever their state.
    """
    below = tower.highest_complete_layer
    if options.forbid_top_two:
        below = min(below, tower.top_layer - 1)
    return [(layer, slot) for layer, slot in tower.blocks() if layer < below]


def takeable_sources(tower: TowerState,
                     options: RuleOptions = RuleOptions()) -> list[tuple[int, int]]:
    """The legal sources (`legal_sources`) whose layer keeps a block when it is taken. Every legal
    source lies under a complete layer, so the last block of its layer holds up every layer above:
    it cannot come out with the tower standing, and no tower state holds a layer emptied under
    others. The rules allow trying it; a player never chooses it."""
    return [(layer, slot) for layer, slot in legal_sources(tower, options)
            if sum(tower.row(layer)) > 1]


def placement_target(tower: TowerState) -> PlacementTarget:
    """The top layer until it holds three blocks, then a new layer above it."""
    if tower.top_is_complete:
        layer = tower.top_layer + 1
        return PlacementTarget(layer, SLOTS, layer_axis(layer))
    layer = tower.top_layer
    free = tuple(s for s in SLOTS if not tower.has_block(layer, s))
    return PlacementTarget(layer, free, layer_axis(layer))


def check_move(tower: TowerState, source: tuple[int, int], target: tuple[int, int],
               placed_axis: Axis | None = None,
               options: RuleOptions = RuleOptions()) -> list[Violation]:
    """Violations of taking the block at `source` and placing it at `target` lying along
    `placed_axis` (None: orientation not observed). An empty list means the move is legal."""
    violations = []
    src_layer, src_slot = source
    if not tower.has_block(src_layer, src_slot):
        violations.append(Violation(ViolationCode.EMPTY_SLOT,
                                    f"layer {src_layer} slot {src_slot} holds no block"))
    elif source not in legal_sources(tower, options):
        violations.append(Violation(
            ViolationCode.FORBIDDEN_LAYER,
            f"a block from layer {src_layer} is not allowed: sources are below layer "
            f"{tower.highest_complete_layer}, the highest complete layer"
            + (" and below the two topmost layers" if options.forbid_top_two else "")))
    if target == source:
        violations.append(Violation(ViolationCode.PUT_BACK,
                                    "a removed block may not be put back in its hole"))
        return violations
    # A legal source lies below the top layer, so taking it never changes where the block goes;
    # judging the target on the tower before the move names only the root cause of a bad source.
    want = placement_target(tower)
    layer, slot = target
    if layer > want.layer:
        violations.append(Violation(
            ViolationCode.NEW_LAYER_EARLY,
            f"layer {layer} started before layer {want.layer} was complete"))
    elif layer != want.layer or slot not in want.slots:
        violations.append(Violation(
            ViolationCode.WRONG_SLOT,
            f"placed at layer {layer} slot {slot}; free on top: layer {want.layer} "
            f"slots {list(want.slots)}"))
    if placed_axis is not None and layer == want.layer and placed_axis != want.axis:
        violations.append(Violation(
            ViolationCode.WRONG_ORIENTATION,
            f"block on layer {layer} lies along {placed_axis}; layer {layer} runs along {want.axis}, "
            f"at a right angle to the layer below"))
    return violations


def check_tested_blocks(displacements_mm: dict[tuple[int, int], float], taken: tuple[int, int] | None,
                        options: RuleOptions = RuleOptions(),
                        restoring_would_topple: frozenset[tuple[int, int]] = frozenset(),
                        tower: TowerState | None = None) -> list[Violation]:
    """Tested blocks left out of position. `displacements_mm` maps each touched block to how far it
    sits from where it was; the block taken is exempt. With `allow_leave_displaced`, a block whose
    restoring would topple the tower (as the caller judged) may stay. Given the `tower` the turn
    began with, its top blocks are exempt too (`top_block`)."""
    violations = []
    for block, displaced_mm in sorted(displacements_mm.items()):
        if block == taken or displaced_mm <= options.displaced_tolerance_mm:
            continue
        if top_block(tower, block):
            continue
        if options.allow_leave_displaced and block in restoring_would_topple:
            continue
        violations.append(Violation(
            ViolationCode.TESTED_BLOCK_DISPLACED,
            f"tested block at layer {block[0]} slot {block[1]} left {displaced_mm:.1f} mm out of "
            f"position (tolerance {options.displaced_tolerance_mm:g} mm)"))
    return violations


def check_no_testing(moved_blocks: list[tuple[int, int]], taken: tuple[int, int],
                     options: RuleOptions = RuleOptions(), tower: TowerState | None = None
                     ) -> list[Violation]:
    """Variant "no testing": every block deliberately moved must be the one removed (top blocks,
    given the turn's `tower`, are no deliberate move: see `top_block`)."""
    if not options.no_testing:
        return []
    return [Violation(ViolationCode.MOVED_BLOCK_NOT_TAKEN,
                      f"block at layer {b[0]} slot {b[1]} was moved but layer {taken[0]} slot "
                      f"{taken[1]} was taken (no-testing variant)")
            for b in dict.fromkeys(moved_blocks) if b != taken and not top_block(tower, b)]


def top_block(tower: TowerState | None, block: tuple[int, int]) -> bool:
    """Whether `block` is one of the top blocks of the `tower` a turn began with: the highest
    complete layer and above. Nobody may take them, so nobody tests them, and RULES.md lets a
    player align them; a block set down on top shoves the ones it lands on. (False without a
    tower.)"""
    return tower is not None and block[0] >= tower.highest_complete_layer
