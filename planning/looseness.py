"""What the robot believes about each block: the probability that it is loose (carries no load and
slides out with a light push).

The prior comes from the layer's pattern (in a full layer, usually either the middle block or the
two side blocks carry the load; a layer of two blocks carries the load on both) and, when
perception measured them, from the blocks' heights: a block sitting lower than its layer-mates is
thinner and carries nothing. Each probe (a guarded push) updates it from the force it took and how
far the block moved.

What a probe found stays true for the game until the load on that block changes (`ProbeMemory`): a
block removed or placed in its own layer or in the layers just above or below it. A block placed
higher up adds weight but does not change which blocks of a layer carry it: a block loose because
it is thinner than its mates stays loose, and one that stopped a push only carries more.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from planning.game.tower import SLOTS, Slot, TowerState

# Priors by how many blocks the layer holds (measured on simulated sets: 43-45% of the blocks of
# full layers are loose).
PRIOR_FULL_LAYER = 0.45
PRIOR_TWO_BLOCKS = 0.12
PRIOR_ONE_BLOCK = 0.02
# A block this much lower than the highest in its layer (m) is thinner: it carries nothing.
THINNER_M = 0.00008
# Probe outcomes: a block that followed the push at low force is loose; one that stopped the guard
# without moving is tight. Likelihood ratios (loose : tight) of each outcome.
LOOSE_TRAVEL_M = 0.003
TIGHT_TRAVEL_M = 0.0015
# A block that only gives way near the limit still carries load (pulling it drags the tower):
# it slid freely when it moved at no more than this share of the limit.
LOOSE_FORCE_SHARE = 0.6
LR_SLID = 25.0
LR_STUCK = 1 / 25.0
CONFIDENT = 0.9


def probe_threshold_n(layer: int, top_layer: int, bottom_n: float = 0.7, top_n: float = 0.25,
                      reference_layers: int = 17) -> float:
    """Force at which a test push stops: the load a block carries shrinks with the layers above
    it, and so must the force that says "this one is not loose" (a real robot used 0.7 N at the
    bottom falling to 0.1 N at layer 17; the simulated blocks' friction wants a little more at
    the top)."""
    above = max(top_layer - layer, 0)
    share = min(above / reference_layers, 1.0)
    return top_n + (bottom_n - top_n) * share


@dataclass(frozen=True)
class ProbeOutcome:
    layer: int
    slot: int
    peak_force_n: float
    travel_m: float            # how far the block moved (push travel past contact minus spring)
    guard_tripped: bool
    threshold_n: float

    @property
    def slid(self) -> bool:
        return self.travel_m >= LOOSE_TRAVEL_M and self.peak_force_n < LOOSE_FORCE_SHARE * self.threshold_n

    @property
    def stuck(self) -> bool:
        return self.guard_tripped and self.travel_m < TIGHT_TRAVEL_M


@dataclass
class LoosenessBelief:
    p_loose: dict[tuple[int, int], float] = field(default_factory=dict)
    probes: list[ProbeOutcome] = field(default_factory=list)
    stuck: set[tuple[int, int]] = field(default_factory=set)       # jammed when pushed through
    # blocks whose chance comes from an earlier turn's probe, with their prior
    recalled: dict[tuple[int, int], float] = field(default_factory=dict)

    @classmethod
    def prior(cls, tower: TowerState, heights: dict[tuple[int, int], float] | None = None
              ) -> LoosenessBelief:
        """The prior for every block of `tower`; `heights` (m, block centres, from perception)
        sharpen it where given."""
        belief = cls()
        for layer in range(1, tower.top_layer + 1):
            row = tower.row(layer)
            count = sum(row)
            base = {3: PRIOR_FULL_LAYER, 2: PRIOR_TWO_BLOCKS}.get(count, PRIOR_ONE_BLOCK)
            for slot in SLOTS:
                if row[slot]:
                    belief.p_loose[layer, slot] = base
            if heights and count >= 2:
                mates = {s: heights[layer, s] for s in SLOTS if row[s] and (layer, s) in heights}
                if len(mates) == count:
                    top = max(mates.values())
                    for s, z in mates.items():
                        if top - z > THINNER_M:
                            belief.p_loose[layer, s] = max(belief.p_loose[layer, s], 0.75)
                        elif count == 3 and sorted(mates.values())[1] < top - THINNER_M:
                            belief.p_loose[layer, s] = min(belief.p_loose[layer, s], 0.15)
        return belief

    def update(self, outcome: ProbeOutcome) -> float:
        """Fold in one probe of this turn; returns the block's new probability of being loose. A
        finding recalled from an earlier turn gives way to it: the probe starts again from the
        block's prior."""
        key = (outcome.layer, outcome.slot)
        self.p_loose[key] = self.recalled.pop(key, self.p_loose.get(key, PRIOR_FULL_LAYER))
        self._fold(outcome)
        self.probes.append(outcome)
        return self.p_loose[key]

    def jammed(self, key: tuple[int, int]) -> None:
        """A block that would not push through under the jam limit is not loose, whatever its
        test push said: it must not be chosen again this turn."""
        self.p_loose[key] = 0.0
        self.stuck.add(key)

    def recall(self, outcome: ProbeOutcome) -> None:
        """Take in what a probe of an earlier turn found, still true (`ProbeMemory`): the block's
        chance changes as if it had been probed, but the probe is not one of this turn's."""
        key = (outcome.layer, outcome.slot)
        self.recalled.setdefault(key, self.p_loose.get(key, PRIOR_FULL_LAYER))
        self._fold(outcome)

    def _fold(self, outcome: ProbeOutcome) -> None:
        key = (outcome.layer, outcome.slot)
        p = self.p_loose.get(key, PRIOR_FULL_LAYER)
        odds = p / max(1 - p, 1e-9) * _ratio(outcome)
        self.p_loose[key] = odds / (1 + odds)

    def confident_loose(self, key: tuple[int, int]) -> bool:
        return self.p_loose.get(key, 0.0) >= CONFIDENT

    def probed(self, key: tuple[int, int]) -> bool:
        return any((o.layer, o.slot) == key for o in self.probes)


def _ratio(outcome: ProbeOutcome) -> float:
    """The likelihood ratio (loose : tight) of what a probe found."""
    return LR_SLID if outcome.slid else LR_STUCK if outcome.stuck else 1.0


def load_context(tower: TowerState, key: Slot) -> tuple:
    """What decides which blocks carry the load at `key`: which slots are filled in its own layer
    and in the layers just above and below it (below the first layer: the table)."""
    layer = key[0]
    return tuple(tuple(tower.has_block(near, s) for s in SLOTS) if near >= 1 else None
                 for near in (layer - 1, layer, layer + 1))


@dataclass
class ProbeMemory:
    """What the last probe of each block found, kept from turn to turn for one tower: it stays
    while the load on the block has not changed (`load_context`), so a tight block is not probed
    turn after turn. A jam is not kept: its limit was set by the whole tower above, which grows.
    Cleared when a new tower is built."""
    found: dict[Slot, tuple[tuple, ProbeOutcome]] = field(default_factory=dict)

    def remember(self, tower: TowerState, outcome: ProbeOutcome) -> None:
        """Keep a probe of `tower` (as it stood when the probe was made), in place of any
        earlier one of the same block."""
        key = (outcome.layer, outcome.slot)
        self.found[key] = load_context(tower, key), outcome

    def recall(self, tower: TowerState, belief: LoosenessBelief) -> list[Slot]:
        """Give `belief` (a prior for `tower`) every finding that still holds, and forget the
        rest; returns the blocks recalled."""
        self.found = {key: (context, outcome) for key, (context, outcome) in self.found.items()
                      if tower.has_block(*key) and load_context(tower, key) == context}
        for _, outcome in self.found.values():
            belief.recall(outcome)
        return sorted(self.found)

    def clear(self) -> None:
        self.found.clear()
