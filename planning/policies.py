"""How a player chooses the block of a turn: the robot's own strategy and the two baselines that
other Jenga robots used, behind one interface so that the same turn (the real arm's, or the
benchmark's fast hands) can play any of them.

A turn asks its `Chooser` for the next step, carries it out and reports back:
- `Step(StepKind.PROBE, source, guard_n)`: a test push that stops at `guard_n`; then `probed(outcome)`
  says what next (a `Decision` of planning/strategy.py);
- `Step(StepKind.TAKE, source, guard_n)`: push that block through from the back, giving up at `guard_n`;
  a block that would not come (`jammed`) is ruled out for the turn and the chooser asked again.
`NoBlock` is raised when no block is left to try (the rules allow no passing: the round is lost).

Policies:
- `ours`: stable candidates ranked by looseness and the chance the block comes out alone, tested
  with guarded pushes whose force falls with the load above (planning/strategy.py);
- `random`: a random legal block, pushed through without testing;
- `middle-first`: the rule-based strategy of published robots: middle blocks first, top down, then
  side blocks, each tested against one fixed force threshold; the first that gives way is taken,
  and when none does, the one that took the least force.

Every policy leaves the two bottom layers alone: that is the arm's reach, not a strategy (see
`LOWEST_LAYER`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum

import numpy as np

from planning.looseness import LoosenessBelief, ProbeOutcome, probe_threshold_n
from planning.game.rules import RuleOptions, takeable_sources
from planning.stability import BlockDims
from planning.strategy import (JAM_N, LOWEST_LAYER, RESTORE_M, Action, Decision, after_probe,
                               best_probed, next_probe, rank)
from planning.game.tower import TowerState

# The fixed test threshold of the rule-based baseline: the force below which a published robot
# took a block for loose, whatever the load above it.
MIDDLE_FIRST_THRESHOLD_N = 0.5


class NoBlock(RuntimeError):
    """No block is left to try this turn."""


class StepKind(StrEnum):
    PROBE = "probe"             # a test push that stops at the step's guard
    TAKE = "take"               # push the block through, giving up at the step's guard


@dataclass(frozen=True)
class Step:
    kind: StepKind
    source: tuple[int, int]
    guard_n: float


@dataclass
class TurnView:
    """What a chooser knows at the start of a turn."""
    tower: TowerState
    belief: LoosenessBelief
    dims: BlockDims
    options: RuleOptions = field(default_factory=RuleOptions)
    offsets: dict = field(default_factory=dict)         # (layer, slot) -> protrusion (m)
    pulled_end: Callable[[int], int] | None = None      # the end blocks of a layer come out by


class Chooser:
    """One turn's choosing. Subclasses fill in `next_step` and `probed`."""

    def __init__(self, view: TurnView):
        self.view = view
        self.jammed_blocks: set[tuple[int, int]] = set()
        self.limits: dict[tuple[int, int], float] = {}   # safe push force per block, N, where known

    def next_step(self) -> Step:
        raise NotImplementedError

    def probed(self, outcome: ProbeOutcome, probes_so_far: int) -> Decision:
        raise NotImplementedError

    def jammed(self, source: tuple[int, int]) -> None:
        """`source` would not push through (or dragged the tower as it was pulled)."""
        self.jammed_blocks.add(source)
        self.view.belief.jammed(source)

    def jam_n(self, source: tuple[int, int]) -> float:
        """The force at which pushing `source` through (or back home) gives up: the jam limit, or
        less where the tower would tip sooner."""
        return min(JAM_N, self.limits.get(source, np.inf))

    def _reachable_sources(self) -> list[tuple[int, int]]:
        return [s for s in takeable_sources(self.view.tower, self.view.options)
                if s[0] >= LOWEST_LAYER and s not in self.jammed_blocks]


class OursChooser(Chooser):
    """The robot's strategy: see planning/strategy.py."""

    def __init__(self, view: TurnView):
        super().__init__(view)
        self.tried: set[tuple[int, int]] = set()
        self.rider_p: dict[tuple[int, int], float] = {}  # chance the block across its pulled end is unloaded
        self.statics: dict = {}                          # ranking's figures that the turn keeps

    def next_step(self) -> Step:
        v = self.view
        candidates = rank(v.tower, v.belief, v.dims, v.options, exclude=self.tried | v.belief.stuck,
                          offsets=v.offsets, pulled_end=v.pulled_end, statics=self.statics)
        if not candidates:
            best = best_probed(v.belief, self.rider_p)
            if best is None:
                raise NoBlock("no stable, reachable block would come out")
            return Step(StepKind.TAKE, best, self.jam_n(best))
        self.limits.update({c.source: c.push_limit_n for c in candidates})
        self.rider_p.update({c.source: c.rider_p for c in candidates})
        source = next_probe(candidates).source
        self.tried.add(source)
        threshold = min(probe_threshold_n(source[0], v.tower.top_layer), self.limits[source])
        return Step(StepKind.PROBE, source, threshold)

    def probed(self, outcome: ProbeOutcome, probes_so_far: int) -> Decision:
        return after_probe(self.view.belief, outcome, probes_so_far, self.rider_p)


class RandomChooser(Chooser):
    """A random legal block, pushed through without a test; another when it jams."""

    def __init__(self, view: TurnView, rng: np.random.Generator):
        super().__init__(view)
        self.rng = rng

    def next_step(self) -> Step:
        sources = self._reachable_sources()
        if not sources:
            raise NoBlock("every legal block jammed")
        source = sources[int(self.rng.integers(len(sources)))]
        return Step(StepKind.TAKE, source, self.jam_n(source))

    def probed(self, outcome: ProbeOutcome, probes_so_far: int) -> Decision:
        raise RuntimeError("the random policy does not test blocks")


class MiddleFirstChooser(Chooser):
    """Middle blocks first (top down), then side blocks, each tested at one fixed threshold."""

    def __init__(self, view: TurnView, threshold_n: float = MIDDLE_FIRST_THRESHOLD_N):
        super().__init__(view)
        self.threshold_n = threshold_n
        sources = self._reachable_sources()
        self.order = sorted(sources, key=lambda s: (s[1] != 1, -s[0], s[1]))
        self.peaks: dict[tuple[int, int], float] = {}

    def next_step(self) -> Step:
        untested = [s for s in self.order if s not in self.peaks and s not in self.jammed_blocks]
        if untested:
            return Step(StepKind.PROBE, untested[0], self.threshold_n)
        left = [s for s in self.peaks if s not in self.jammed_blocks]
        if not left:
            raise NoBlock("every legal block jammed")
        least = min(left, key=lambda s: (self.peaks[s], s))
        return Step(StepKind.TAKE, least, self.jam_n(least))

    def probed(self, outcome: ProbeOutcome, probes_so_far: int) -> Decision:
        key = (outcome.layer, outcome.slot)
        self.peaks[key] = outcome.peak_force_n
        if not outcome.guard_tripped:
            return Decision(Action.TAKE, key)
        restore = outcome.travel_m > RESTORE_M
        return Decision(Action.RESTORE_THEN_NEXT if restore else Action.NEXT, key, restore=restore)


POLICIES = ("ours", "random", "middle-first")


@dataclass
class Policy:
    """A named way of choosing; `turn(view)` gives one turn's chooser. `rng` drives the random
    policy (seeded, so a benchmark game replays its choices)."""
    name: str = "ours"
    rng: np.random.Generator = field(default_factory=lambda: np.random.default_rng(0))

    def __post_init__(self) -> None:
        if self.name not in POLICIES:
            raise ValueError(f"unknown policy {self.name!r}; known: {', '.join(POLICIES)}")

    def turn(self, view: TurnView) -> Chooser:
        if self.name == "random":
            return RandomChooser(view, self.rng)
        if self.name == "middle-first":
            return MiddleFirstChooser(view)
        return OursChooser(view)
