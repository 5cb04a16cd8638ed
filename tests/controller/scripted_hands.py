"""Hands for the turn's procedure whose every outcome is scripted, and a recorder of the steps any
hands are asked to take: the procedure tested without an arm or a simulator."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from controller.turn.hands import Felt, GaveUp, Look, PlaceOrder, Pulled, Pushed
from controller.turn.report import PlaceMissed, TowerFellError
from perception.observation import PerceptionError
from planning.looseness import ProbeOutcome
from planning.motion.contact_geometry import PUSH_THROUGH
from planning.motion.plans import PlanError
from planning.game.tower import SLOTS, Slot, TowerState


def look_at(tower: TowerState, out_of_place=()) -> Look:
    """What a perfect eye sees of `tower`: blocks on their slots, level, flush."""
    h = 0.015
    full = set(tower.blocks())
    return Look(tower, {k: (k[0] - 0.5) * h for k in full}, {k: 0.0 for k in full},
                {(layer, s): (layer, s) in full for layer in range(1, tower.top_layer + 1)
                 for s in SLOTS},
                list(out_of_place), {k: i for i, k in enumerate(sorted(full))})


@dataclass
class Script:
    """The outcomes: each a function of the slot (and how often it was asked)."""
    feel: Callable[[Slot, float], tuple[float, float, bool]] = \
        lambda source, guard_n: (0.1, 0.004, False)              # (peak N, travel m, tripped)
    jams: Callable[[Slot], bool] = lambda source: False
    pull: Callable[[Slot], GaveUp | None] = lambda source: None
    insist: Callable[[Slot], GaveUp | None] = lambda source: None  # a pull to take it after all
    short: Callable[[Slot], float] = lambda source: 0.0          # how far a put-back stops short
    falls_in_window: bool = False
    out_of_place_after_window: tuple = ()                         # blocks seen in no slot then
    seen_again: bool = True       # and by a second look then (False: a trick of the light)
    misses: Callable[[Slot], bool] = lambda target: False         # a set-down there lands high
    unplannable: Callable[[Slot], bool] = lambda target: False    # no way to set it down there
    falls_by_second_look: bool = False    # the tower is down when looked at again after the window
    unread_looks: int = 0         # the first looks read no tower (a camera's frame lost)
    looks: list[Look] = field(default_factory=list)               # looks to give, in turn
    frees_at_n: Callable[[Slot], float] = lambda source: 0.0     # the push a block comes out at
    # no test push nor push-through can be planned from where the hands stand until they clear
    # (once: the next is planned from where that one left them)
    reach_needs_clear: bool = False
    unreachable: Callable[[Slot], bool] = lambda source: False   # from anywhere
    clear_fails: bool = False     # no way home from where the hands stand


class ScriptedHands:
    def __init__(self, tower: TowerState, script: Script | None = None):
        self.tower, self.script = tower, script or Script()
        self.steps: list[tuple] = []
        self.time = 0.0
        self.held: Slot | None = None
        self.moves: list[dict] | None = None
        self.cleared = False

    def now(self) -> float:
        self.time += 0.1
        return self.time

    def pulled_end(self, layer: int) -> int:
        return 1

    def record_moves(self, into: list[dict] | None) -> None:
        self.moves = into

    def _moved(self, name: str, seconds: float) -> None:
        """A move that took `seconds` of the scripted world's time, noted if a turn notes them."""
        start = self.time
        self.time += seconds
        if self.moves is not None:
            self.moves.append({"move": name, "start_s": start, "end_s": self.time})

    def look(self, blocks_moved: int, again: bool = False) -> Look:
        self.steps.append(("look_again",) if again else ("look",))
        if self.script.unread_looks > 0:
            self.script.unread_looks -= 1
            raise PerceptionError("what the cameras see is not a tower: a frame was lost")
        if self.script.looks:
            return self.script.looks.pop(0)
        if again and self.script.falls_by_second_look:
            raise TowerFellError("the tower has fallen")
        lying = self.script.out_of_place_after_window if again and self.script.seen_again else ()
        return look_at(TowerState(self.tower.layers, blocks_moved), lying)

    def _reach(self, source) -> None:
        if self.script.unreachable(source) or (self.script.reach_needs_clear and not self.cleared):
            raise PlanError(f"transit start is in collision: fingers within 8 mm of {source}")
        self.cleared = False

    def probe(self, source, guard_n) -> Felt:
        self._reach(source)
        self.steps.append(("probe", source, round(guard_n, 6)))
        peak, travel, tripped = self.script.feel(source, guard_n)
        return Felt(ProbeOutcome(*source, peak, travel, tripped, guard_n))

    def withdraw(self) -> None:
        self.steps.append(("withdraw",))

    def push_through(self, source, jam_n) -> Pushed:
        self._reach(source)
        self.steps.append(("push_through", source))
        jammed = self.script.jams(source) or self.script.frees_at_n(source) > jam_n
        return Pushed(jammed, 0.01 if jammed else 0.027)

    def restore(self, source, travel_m, jam_n) -> float:
        self.steps.append(("restore", source, round(travel_m, 6)))
        return self.script.short(source)

    def pull(self, source, out_m=PUSH_THROUGH, insist=False) -> Pulled:
        self.steps.append(("take_after_all", source, round(out_m, 6)) if insist else ("pull", source))
        self._moved("pull", 1.5)
        gave_up = (self.script.insist if insist else self.script.pull)(source)
        if gave_up is None:
            self.held = source
        touches = [{"force_n": 0.7, "shift_mm": 0.0}] if gave_up is GaveUp.APPROACH else []
        drawn = 0.0 if gave_up in (None, GaveUp.APPROACH) else 0.012
        # a block the fingers still hold is slid back in part of the way
        return Pulled(gave_up, drawn, 1.0, touches=touches,
                      slid_back_m=0.009 if gave_up in (GaveUp.DRAG, GaveUp.RIDER) else 0.0)

    def place(self, order: PlaceOrder) -> float:
        self.steps.append(("place", order.target))
        if self.script.misses(order.target) and not order.as_landed:
            raise PlaceMissed(f"the block met something 9 mm above its place on {order.target}")
        if self.script.unplannable(order.target):
            raise PlanError(f"no collision-free way to {order.target}")
        self.tower = self.tower.moved(self.held, order.target)
        self.held = None
        return self.time

    def clear(self) -> None:
        if self.script.clear_fails:
            raise PlanError("transit start is in collision: fingers within 8 mm of a block")
        self.steps.append(("clear",))
        self.cleared = True

    def watch(self, released_at, window_s, blocks_moved) -> Look | None:
        self.steps.append(("watch", window_s))
        if self.script.falls_in_window:
            return None
        self.steps.append(("look",))
        return look_at(TowerState(self.tower.layers, blocks_moved), self.script.out_of_place_after_window)


class Recording:
    """Any hands, with every step they are asked to take recorded as ScriptedHands records it,
    and what they gave back (or raised)."""

    def __init__(self, hands):
        self.hands, self.steps, self.outcomes = hands, [], []

    def __getattr__(self, name):
        return getattr(self.hands, name)

    def _step(self, step, call):
        self.steps.append(step)
        try:
            result = call()
        except Exception as exc:
            self.outcomes.append(exc)
            raise
        self.outcomes.append(result)
        return result

    def look(self, blocks_moved, again=False):
        return self._step(("look_again",) if again else ("look",),
                          lambda: self.hands.look(blocks_moved, again))

    def probe(self, source, guard_n):
        return self._step(("probe", source, round(guard_n, 6)), lambda: self.hands.probe(source, guard_n))

    def withdraw(self):
        return self._step(("withdraw",), self.hands.withdraw)

    def push_through(self, source, jam_n):
        return self._step(("push_through", source), lambda: self.hands.push_through(source, jam_n))

    def restore(self, source, travel_m, jam_n):
        return self._step(("restore", source, round(travel_m, 6)),
                          lambda: self.hands.restore(source, travel_m, jam_n))

    def pull(self, source, out_m=PUSH_THROUGH, insist=False):
        step = ("take_after_all", source, round(out_m, 6)) if insist else ("pull", source)
        return self._step(step, lambda: self.hands.pull(source, out_m, insist))

    def place(self, order):
        return self._step(("place", order.target), lambda: self.hands.place(order))

    def clear(self):
        return self._step(("clear",), self.hands.clear)

    def watch(self, released_at, window_s, blocks_moved):
        return self._step(("watch", window_s),
                          lambda: self.hands.watch(released_at, window_s, blocks_moved))


class Replay:
    """Hands that give back, step by step, what another pair of hands gave (a Recording), and
    record the steps they are asked to take."""

    def __init__(self, recording: Recording):
        self._outcomes = list(recording.outcomes)
        self.steps: list[tuple] = []
        self.time = 0.0
        self.pulled_end = recording.hands.pulled_end

    def record_moves(self, into: list[dict] | None) -> None:
        """A replay makes no moves to time."""

    def now(self) -> float:
        self.time += 0.1
        return self.time

    def _next(self, step):
        self.steps.append(step)
        outcome = self._outcomes.pop(0)
        if isinstance(outcome, Exception):
            raise outcome
        return outcome

    def look(self, blocks_moved, again=False):
        return self._next(("look_again",) if again else ("look",))

    def probe(self, source, guard_n):
        return self._next(("probe", source, round(guard_n, 6)))

    def withdraw(self):
        return self._next(("withdraw",))

    def push_through(self, source, jam_n):
        return self._next(("push_through", source))

    def restore(self, source, travel_m, jam_n):
        return self._next(("restore", source, round(travel_m, 6)))

    def pull(self, source, out_m=PUSH_THROUGH, insist=False):
        return self._next(("take_after_all", source, round(out_m, 6)) if insist else ("pull", source))

    def place(self, order):
        return self._next(("place", order.target))

    def clear(self):
        return self._next(("clear",))

    def watch(self, released_at, window_s, blocks_moved):
        return self._next(("watch", window_s))
