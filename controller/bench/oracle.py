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

`oracle-relaxed` is the same player with the robot's candidate filter relaxed (any layer, any
stability margin the model calls standing, any safe push force): how high the simulated physics
lets a tower go when neither knowledge nor the robot's caution holds it back.

Only the benchmark's fast mode can play them: the loads are read from the simulator in the same
process. They are named as oracles in every table, never mistaken for the robot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from planning.looseness import ProbeOutcome
from planning.policies import POLICIES, Chooser, NoBlock, Policy, Step, StepKind, TurnView
from planning.strategy import (ROBOT_FILTER, Candidate, CandidateFilter, Decision, keeps_less,
                               rank)

ORACLE = "oracle"
ORACLE_RELAXED = "oracle-relaxed"
ORACLES = (ORACLE, ORACLE_RELAXED)
# every policy the game benchmark can play: the product's, and the oracles
BENCH_POLICIES = POLICIES + ORACLES
# The relaxed oracle's candidates: any layer, and any move the stability model says leaves the
# tower standing; the safe push force still guards the push-through, but no floor rules a block out.
RELAXED_FILTER = CandidateFilter(lowest_layer=1, min_margin_mm=0.0, min_push_n=0.0)
# the oracles' names in tables
TABLE_NAMES = {ORACLE: f"{ORACLE} (knows the true loads; not the robot)",
               ORACLE_RELAXED: f"{ORACLE_RELAXED} (knows the true loads, any stable block; "
                               f"not the robot)"}
# A block pressed on by less than this (N) bears no load: about a tenth of a block's weight.
UNLOADED_N = 0.02

Loads = Callable[[], dict[tuple[int, int], float]]


def check_mode(full: bool, policies) -> None:
    """The oracle reads the loads from a simulator in its own process: the full pipeline, whose
    simulator runs in another, cannot give them."""
    if full and set(ORACLES) & set(policies):
        raise ValueError("the oracles play only in the fast mode (they read the simulator's loads "
                         "in their own process): leave out --full or the oracles")


class OracleChooser(Chooser):
    """One turn's choosing with the true loads: `loads()` gives them for the tower as it stands."""

    def __init__(self, view: TurnView, loads: Loads, accept: CandidateFilter = ROBOT_FILTER):
        super().__init__(view)
        self.loads, self.accept = loads, accept
        self.statics: dict = {}

    def next_step(self) -> Step:
        v = self.view
        candidates = rank(v.tower, v.belief, v.dims, v.options, exclude=self.jammed_blocks,
                          offsets=v.offsets, pulled_end=v.pulled_end, statics=self.statics,
                          accept=self.accept)
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
    """An oracle as a policy the turn procedure can play; `loads` reads the simulator."""
    name: str = ORACLE
    loads: Loads = field(default=dict)
    accept: CandidateFilter = ROBOT_FILTER

    def __post_init__(self) -> None:
        pass     # the oracle's name is the benchmark's, not one of the product's policies

    def turn(self, view: TurnView) -> Chooser:
        return OracleChooser(view, self.loads, self.accept)


def oracle_policy(name: str, loads: Loads) -> OraclePolicy:
    """The oracle called `name` (one of ORACLES), reading the loads with `loads()`."""
    if name not in ORACLES:
        raise ValueError(f"unknown oracle {name!r}; known: {', '.join(ORACLES)}")
    accept = RELAXED_FILTER if name == ORACLE_RELAXED else ROBOT_FILTER
    return OraclePolicy(name, loads=loads, accept=accept)
