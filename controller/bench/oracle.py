"""The `oracle`: a benchmark-only policy that knows what the robot never can, each block's true load
from the simulator, to show how high the simulated tower can go with perfect knowledge of which
blocks are loose.

It chooses among the same stable candidates as the robot's own strategy (planning/strategy.py
`rank`: legal, reachable layers, a stability margin, a safe push force) and plays through the same
turn procedure, so the gap between it and `ours` is what sensing and choosing can still win; it only
replaces the testing with the truth:
- a block nothing presses on goes first (it slides out freely), and among those, one whose layer can
  give another block after it (`keeps_less` of planning/strategy.py: a side block of a full layer
  before its middle); then the least loaded;
- a block whose pulled end carries an unloaded block (a rider that would slide out with it) goes
  after every block that does not;
- it is pushed through at once, no test push; one that jams is ruled out and the next taken.

Only the benchmark's fast mode can play it: the loads are read from the simulator in the same
process. It is named as the oracle in every table, never mistaken for the robot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from planning.looseness import ProbeOutcome
from planning.policies import POLICIES, Chooser, NoBlock, Policy, Step, StepKind, TurnView
from planning.strategy import Candidate, Decision, keeps_less, rank

ORACLE = "oracle"
# every policy the game benchmark can play: the product's, and the oracle
BENCH_POLICIES = POLICIES + (ORACLE,)
# A block pressed on by less than this (N) bears no load: about a tenth of a block's weight.
UNLOADED_N = 0.02

Loads = Callable[[], dict[tuple[int, int], float]]


def check_mode(full: bool, policies) -> None:
    """The oracle reads the loads from a simulator in its own process: the full pipeline, whose
    simulator runs in another, cannot give them."""
    if full and ORACLE in policies:
        raise ValueError("the oracle plays only in the fast mode (it reads the simulator's loads in "
                         "its own process): leave out --full or the oracle")


class OracleChooser(Chooser):
    """One turn's choosing with the true loads: `loads()` gives them for the tower as it stands."""

    def __init__(self, view: TurnView, loads: Loads):
        super().__init__(view)
        self.loads = loads
        self.statics: dict = {}

    def next_step(self) -> Step:
        v = self.view
        candidates = rank(v.tower, v.belief, v.dims, v.options, exclude=self.jammed_blocks,
                          offsets=v.offsets, pulled_end=v.pulled_end, statics=self.statics)
        if not candidates:
            raise NoBlock("no stable, reachable block would come out")
        loads = self.loads()     # read now: a jammed push may have shifted the tower

        def order(c: Candidate):
            drags = c.rider_at is not None and loads.get(c.rider_at, 0.0) < UNLOADED_N
            load = loads.get(c.source, np.inf)
            return (drags, load >= UNLOADED_N, keeps_less(v.tower, c.source), load, -c.margin_mm,
                    c.source)
        best = min(candidates, key=order)
        self.limits[best.source] = best.push_limit_n
        return Step(StepKind.TAKE, best.source, self.jam_n(best.source))

    def probed(self, outcome: ProbeOutcome, probes_so_far: int) -> Decision:
        raise RuntimeError("the oracle does not test blocks")


@dataclass
class OraclePolicy(Policy):
    """The oracle as a policy the turn procedure can play; `loads` reads the simulator."""
    name: str = ORACLE
    loads: Loads = field(default=dict)

    def __post_init__(self) -> None:
        pass     # the oracle's name is the benchmark's, not one of the product's policies

    def turn(self, view: TurnView) -> Chooser:
        return OracleChooser(view, self.loads)
