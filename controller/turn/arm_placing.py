"""The place skill of the arm's hands (controller/turn/arm_hands.py `ArmHands` is made of it):
the held block set down on its place with a guarded descent, lifted and set again when it landed
on a neighbour's edge, and pushed home along its layer when the plan aligns it. Every time is
device time.
"""

from __future__ import annotations

import logging

import numpy as np

from controller.turn.arm_moves import AT_START_RAD
from controller.turn.checks import (away_from_neighbours, neighbours_in, placement_shift,
                                    support_rise)
from controller.turn.hands import PlaceOrder
from controller.turn.report import HeldDropped, PlaceMissed, TurnError
from controller.wording import slot_name
from firmware_bridge.client import MotionOutcome, MotionResult
from planning.game.tower import SLOTS
from planning.motion.paces import PUSH_HOME_SPEED, guarded_pace, retreat_pace
from planning.motion.contact_geometry import PLACE_OVERHANG
from planning.motion.plans import GripStep, MotionPlan, MoveStep, PlanError

# A push home stopped by its guard this far or more short of its end goes on after a fresh tare, at
# most ALIGN_RESUMES times: in HIL runs and a seed-1 match the guard tripped as the push began
# (the wrist's reading of the start, the block untouched) and left the block 29 mm out of its
# slot, where the cameras read no block, and the next place was set down on it.
ALIGN_SHORT_M = 0.003
ALIGN_RESUMES = 2

# A set-down whose guard stopped it this far or more above the block's rest met something that is
# not the layer below: the edge of a neighbour in the layer (a block is 15 mm high). The block is
# lifted and set down again PLACE_RETRY_SHIFT further from its neighbours, at most PLACE_TRIES
# times in all.
LANDED_HIGH_M = 0.006
PLACE_RETRY_SHIFT = 0.003
PLACE_TRIES = 3
PLACE_LIFT = 0.01            # over the guarded set-down's start, where the block is lifted to

log = logging.getLogger(__name__)


class _LandedHigh(Exception):
    """The set-down met something above the block's rest (how far, in words); the block was
    lifted back."""


class ArmPlacing:
    """Placing, for `ArmHands`: it runs on the hands' `moves`, `planner`, `grip`, `obs`, `layers`,
    the held block's pull plan `_pull` and their straight `_retreat` along a push."""

    def place(self, order: PlaceOrder) -> float:
        """Plan the place of the held block and run it; returns the device time the tool last
        touched the placed block: its release, or the end of the push that aligns it, when there
        is one. The settling window runs from then: a block still being pushed has not been let
        go.

        A slot whose neighbours in the layer the cameras see empty takes the block home at once
        (the fingers stand in those slots): no push home, and the window runs from the release.
        Otherwise, when the block is held pitched, or when a set-down home met something, it is
        set down overhanging and pushed home."""
        if self._pull is None:
            raise TurnError("no block is held to place")
        target = order.target
        shift = placement_shift(self.obs, target, self.planner.tower)
        # a slot the cameras call full counts, read marker or not (`neighbours_in` needs one)
        full = [other for other in SLOTS if other != target[1]
                and self.obs.occupancy.get((target[0], other), False)]
        beside = bool(full) or bool(neighbours_in(self.obs, target))
        direct = all(abs(other - target[1]) != 1 for other in full)
        rise = support_rise(self.planner.tower, self.obs, target)
        for attempt in range(1, PLACE_TRIES + 1):
            plan, overhang = self._plan_place(order, shift, beside, rise, direct)
            try:
                released = self.run_place(plan, layer=target[0], as_landed=order.as_landed)
                break
            except HeldDropped:
                self._pull = None
                self.moves.open_fully()       # nothing in them: open, as after any release
                raise
            except _LandedHigh as high:
                away = away_from_neighbours(self.obs, target, self.planner.tower)
                if attempt == PLACE_TRIES or (away == 0 and overhang > 0):
                    raise PlaceMissed(
                        f"the block met something {high} above its place on "
                        f"{slot_name(*target)} at each of {attempt} set-downs; it is held "
                        f"above the tower") from None
                if overhang == 0.0:
                    direct = False    # set down home it met something: next, overhanging
                else:
                    shift += away * PLACE_RETRY_SHIFT
        self._pull = None
        return released

    def _plan_place(self, order: PlaceOrder, shift: float, beside: bool, rise: float,
                    direct: bool) -> tuple[MotionPlan, float]:
        """The place plan and the overhang it sets the block down with: home if `direct` and it
        can be planned (the block held level), else PLACE_OVERHANG out."""
        def plan(overhang: float) -> MotionPlan:
            return self.planner.place(self.moves.q(), *order.target, self._pull.held, shift=shift,
                                      guard_n=order.press_n, align_guard_n=order.align_n,
                                      ends=tuple(order.ends), beside=beside, rise=rise,
                                      overhang=overhang)

        if direct:
            try:
                return plan(0.0), 0.0
            except PlanError:
                pass          # held pitched, or no room for the fingers: overhanging, then
        return plan(PLACE_OVERHANG), PLACE_OVERHANG

    def run_place(self, plan: MotionPlan, layer: int | None = None, as_landed: bool = False
                  ) -> float:
        """Run a place plan onto `layer` (None: somewhere on the tower, as the cameras saw it);
        see `place`. `as_landed`: a set-down that meets something is let go there, not lifted."""
        released = None
        stopped_early = False
        for step in plan.steps:
            if isinstance(step, GripStep):
                self.moves.grip(step)
                if step.label == "release":
                    released = self.arm.device_time()
                continue
            if step.label == "align_retreat" and stopped_early:
                # the align push met the block sooner than planned: back out from where it stopped
                self._let_go_plan(self._retreat, plan, "align_retreat", "align_", gentle=True)
                continue
            if step.label == "align_transit" and self.moves.gap(step.trajectory) > AT_START_RAD:
                try:
                    self._transit_from_here(step, layer)
                except PlanError as exc:
                    # the block is down, overhanging: left so, as a person would leave it
                    log.warning("no way to the push home from where the back-off left the "
                                "arm (%s): the block is left where it was set down", exc)
                    break
                continue
            if step.label == "back_off":
                self._back_off_from_here(step, layer)
                continue
            if step.label == "descend" and not as_landed:
                self.grip.check_still_held()
            if step.guard is not None:
                # the tool turned since the last tare; its weight would read as a push
                self.moves.dwell_and_tare()
            result = self.moves.follow(step)
            if step.label == "settle" and not as_landed:
                self._check_landing(step, result, self.layers if layer is None else layer - 1)
            if step.label == "align_push":
                result = self._let_go_plan(self._push_home_on, plan, step, result)
                stopped_early = result.outcome is MotionOutcome.GUARD
                released = self.arm.device_time()
        return released if released is not None else self.arm.device_time()

    @staticmethod
    def _let_go_plan(move, *args, **kwargs):
        """A move planned from where the arm stands after the block was let go: one that cannot
        be planned stops the turn (TurnError), not a place missed with the block still held."""
        try:
            return move(*args, **kwargs)
        except PlanError as exc:
            raise TurnError(f"after the block was let go: {exc}") from None

    def _transit_from_here(self, step: MoveStep, layer: int | None) -> None:
        """The transit to the push home, planned again from where the back-off left the arm (the
        block let go: nothing held)."""
        keep_out = self.layers if layer is None else layer
        transit = self.planner.transit(self.moves.q(), step.trajectory.end, tower_layers=keep_out)
        self.moves.follow(MoveStep(step.label, transit.steps[0].trajectory))

    def _back_off_from_here(self, step: MoveStep, layer: int | None) -> None:
        """The open fingers' back-off from the block set down, from where the arm stands: a
        set-down its guard stopped short (let go where it landed, higher than planned: a tower 24
        turn stopped on the 2.9 deg between) leaves the fingers elsewhere than the plan has them.
        They leave by the plan's own way back and up, else straight up by as much."""
        if self.moves.gap(step.trajectory) <= AT_START_RAD:
            self.moves.follow(step)
            return
        keep_out = self.layers if layer is None else layer
        fk = self.planner.arm.fk
        way = fk(step.trajectory.end, "grasp").t - fk(step.trajectory.start, "grasp").t
        errors = []
        # the fingers were around the block's end in the layer placed on: they keep out of the
        # layer below it
        for move in (way, np.array([0.0, 0.0, max(way[2], 0.0)])):
            try:
                self.moves.run(self.planner.straight(self.moves.q(), "grasp", move,
                                                     tower_layers=keep_out - 1, label=step.label,
                                                     **retreat_pace(gentle=False)))
                return
            except PlanError as exc:
                errors.append(str(exc))
        raise TurnError(f"the fingers cannot leave the block they set down: {'; '.join(errors)}")

    def _check_landing(self, settle: MoveStep, result: MotionResult, keep_out: float) -> None:
        """A set-down stopped by its guard well above the block's rest sat on something: lift
        the block back out of the layer (still held), keeping out of the tower's first `keep_out`
        layers (a block set down home has its fingers in the layer, beside it), and say how high
        it stopped."""
        if result.outcome is not MotionOutcome.GUARD:
            return
        at = {name: float(self.planner.arm.fk(q, "grasp").t[2]) for name, q in (
            ("here", self.moves.q()), ("start", settle.trajectory.start),
            ("end", settle.trajectory.end))}
        held = self._pull.held if self._pull is not None else None
        # a block held above its centre line hangs that much lower, and lands that much sooner
        height = at["here"] - at["end"] - (held.raised if held is not None else 0.0)
        if height < LANDED_HIGH_M:
            return
        up = np.array([0.0, 0.0, at["start"] + PLACE_LIFT - at["here"]])
        self.moves.run(self.planner.straight(self.moves.q(), "grasp", up, tower_layers=keep_out,
                                             exempt=("held",), held=held, label="lift",
                                             **retreat_pace(gentle=True)))
        raise _LandedHigh(f"{height * 1000:.0f} mm")

    def _push_home_on(self, plan: MotionPlan, step: MoveStep, result: MotionResult) -> MotionResult:
        """Go on with a push home its guard stopped well short of its end (see ALIGN_SHORT_M),
        from where it stopped, after a fresh tare; a block that truly jams trips it again."""
        for _ in range(ALIGN_RESUMES):
            left = self._left_of(plan, step)
            if result.outcome is not MotionOutcome.GUARD or np.linalg.norm(left) < ALIGN_SHORT_M:
                break
            self.moves.dwell_and_tare()
            on = self.planner.straight(self.moves.q(), plan.frame, left, tower_layers=self.layers,
                                       speed=PUSH_HOME_SPEED, exempt=("probe",), label=step.label,
                                       **guarded_pace(step.guard.threshold_n))
            result = self.moves.follow(MoveStep(step.label, on.moves[0].trajectory, step.guard))
        return result

    def _left_of(self, plan: MotionPlan, step: MoveStep) -> np.ndarray:
        """From where the tool stands to the end of `step` (m, world): for a push stopped short,
        the rest of its way to where the plan would have left the block's face."""
        end = self.planner.arm.fk(step.trajectory.end, plan.frame).t
        return end - self.planner.arm.fk(self.moves.q(), plan.frame).t
