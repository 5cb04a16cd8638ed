"""The pull skill of the arm's hands (controller/turn/arm_hands.py `ArmHands` is made of it):
the fingers brought around a pushed-out block's end, feeling for it, and the block drawn out under
a guard against a drag while the cameras watch for blocks riding out on it. Every time is device
time.
"""

from __future__ import annotations

import logging
from dataclasses import replace

import numpy as np

from controller.turn.arm_moves import works_block
from controller.turn.checks import (drag_was_a_spike, end_protrusion, felt_offset,
                                    next_grasp_shift, riders, seen_offset, touch_side)
from controller.turn.hands import GaveUp, Pulled, Slot, Trace
from controller.turn.report import TowerFellError
from firmware_bridge.client import MotionOutcome, MotionResult
from firmware_bridge.errors import ArmTimeout
from firmware_bridge.messages import Status
from perception.observation import FALLEN_SLOTS_EMPTIED, TowerObservation
from planning.motion.contact_geometry import PUSH_THROUGH, STANDOFF
from planning.motion.paces import PULL_SPEED, retreat_pace
from planning.motion.plans import ForceGuard, MotionPlan, MoveStep, PlanError

log = logging.getLogger(__name__)

# A pull that needs more than this drags the tower: in 23 legal pulls of the simulated cell the
# drag peaked at 0.6-1.8 N (start transients included) with medians under 0.5 N; the one pull that
# toppled the tower ran at a median of 1.6 N and 2.6 N at its 90th percentile. A guard at 2 N also
# let go of loose blocks, and three let-gos in one turn toppled a tower.
PULL_GUARD_N = 2.5
# A block given up that would not go back is pulled again and taken (controller/turn/
# procedure.py) under this firmer guard: under the 4 N the light pull grip holds along the pull
# (planning/motion/contact_geometry.py PULL_GRIP_N), so the guard, not a slip, ends a pull that
# will not come.
TAKE_GUARD_N = 3.5
# A guard trip that was a short knock on a light drag (controller/turn/checks.py) lets the pull go
# on, at most this many times.
PULL_RESUMES = 10
# The grasp's approach stops at this: a finger ran into the block. Low, because a loose block slides
# at 0.15 N: at 2 N the fingers of the simulated cell shoved turned blocks 5-23 mm back into the
# tower without tripping. The approach's own speed-up reads 0.13 N on the 1.3 kg tool.
GRASP_GUARD_N = 0.6
GRASP_TRIES = 4              # grasp approaches to a block before it is given up
# The cameras look for blocks riding out on the drawn one (controller/turn/checks.py `riders`) as
# the pull passes this far out: a rider of the seed-3 game had gone 3-4 mm at 6 mm, past what the
# cameras take for a move, and the look's frames come about 0.1 s (3 mm of pull) later.
RIDE_WATCH_M = 0.005
# and again each time the block has come this much further while its end still rests in the tower
# (the "pull"; not the "pull_out" after the squeeze): a rider on the block's pulled end can start
# later (seed 1, 15.2 over 14.1's end: the drag stayed at 0.2-0.3 N from 18 to 33 mm out, where a
# clean pull's falls under 0.05 N, and 15.2 was gone after the turn).
RIDE_LOOK_EVERY_M = 0.01
# Slots the arm and a drawn block in front of the tower can hide from the cameras: three did (a
# resumed match's turn 16); a fall that brings the top layers down (seed 2: four layers above the
# pulled block went) empties more.
ARM_HIDES_SLOTS = 5
# A slide back that ended this close to where the pull began is there.
SLIDE_BACK_THERE_M = 0.0005
# Telemetry this long after a move started shows it running (the device starts it on the command).
MOTION_SEEN_S = 0.02

class ArmPulling:
    """Pulling, for `ArmHands`: it runs on the hands' `moves`, `planner`, `link`, `arm`, `grip`,
    `obs`, `layers`, `_felt`, and their `withdraw`, `_stands`, `_follow_recording` and
    `_follow_sampled`; it
    leaves the held block's pull plan in `_pull` for the place."""

    @works_block
    def pull(self, source: Slot, out_m: float = PUSH_THROUGH, insist: bool = False) -> Pulled:
        """Grasp the block pushed `out_m` out at the front and draw it out, recording the drag
        along the pull. The pull is guarded at PULL_GUARD_N (TAKE_GUARD_N if it must `insist`,
        with no look for riders): a block that drags the tower with it is let go, and the
        fingers open and back off; so do fingers that cannot get around the block."""
        self.withdraw()
        into = -self.planner.tower.front_end(source[0]) * self.planner.tower.axis(source[0])
        touches: list[dict] = []
        pull = self._grasp(source, into, touches, out_m)
        if pull is None:
            return Pulled(GaveUp.APPROACH, 0.0, touches[-1]["force_n"] if touches else 0.0,
                          touches=touches)
        drawn = self._draw(source, pull, into, insist)
        slid = 0.0
        if drawn.came and not self.grip.check_held():
            # drawn out, yet the fingers closed on nothing: it slipped out of them, like one that
            # slips during the pull (a turn that stopped here conceded the round)
            drawn = replace(drawn, gave_up=GaveUp.SLIP)
        if drawn.came:
            self._pull = pull
            self.planner.block_moved(source, 0.0)     # out of the tower: in the fingers
            self._check_standing()
        else:
            if drawn.gave_up is not GaveUp.SLIP:       # still in the fingers
                slid = self._slide_back(pull, into, drawn.drawn_m)
            stands = self._stands(source)
            if stands is not None:      # drawn further out than it stood, less the slide back
                front = self.planner.tower.front_end(source[0])
                self.planner.block_moved(source, stands + front * max(drawn.drawn_m - slid, 0.0))
            self.moves.open_fully()
            self._back_off(pull.frame, into, "let_go", gentle=True)
        return replace(drawn, touches=touches, slid_back_m=slid)

    def _slide_back(self, pull: MotionPlan, into, drawn_m: float) -> float:
        """Slide a block given up in the pull `drawn_m` back into the tower, still held, under the
        pull's guard, going on after knocks as the pull does; how far it went (m). Let go where it
        stopped, a block drawn past its middle tips over the tower's edge (fast mode, seed 1: 14.1
        let go 38 mm out for a rider), and the push home from the front then stops on it, the
        slot left empty. The first try stopped at once in a seed-1 game, 1.8 of 28.6 mm back in,
        on the knock of reversing the stopped pull."""
        into = np.asarray(into, float)
        start = self.planner.arm.fk(self.moves.q(), pull.frame)
        goal = start.t + into * drawn_m
        # the block held back by the tower pushes the gripper away from it
        axis = tuple(float(v) for v in -(start.R.T @ into))
        resumed = 0
        while True:
            here = self.planner.arm.fk(self.moves.q(), pull.frame).t
            if float((goal - here) @ into) < SLIDE_BACK_THERE_M:
                break
            try:
                step = self._draw_to(pull, "slide_back", goal)
            except PlanError:
                break       # let go where it is: the push home from the front brings it in
            result, part = self._follow_recording(
                MoveStep(step.label, step.trajectory, ForceGuard(axis, PULL_GUARD_N)), axis)
            if result.outcome is not MotionOutcome.GUARD or resumed >= PULL_RESUMES or \
                    not drag_was_a_spike(part, result.device_time):
                break
            resumed += 1
        there = self.planner.arm.fk(self.moves.q(), pull.frame).t
        return max(float((there - start.t) @ into), 0.0)

    def _check_standing(self) -> None:
        """Raise TowerFellError if the cameras see the tower down: a pull can bring the top
        down with it (seed 2: the four layers above 18.0 went as it came out, the guard never
        tripped, and the arm carried the block over, set it down on the fallen blocks and pushed
        it home). The block is held; the turn stops before it is carried over the tower.

        The look's own call counts here (blocks on the table, the tower tilted, too few blocks
        where the tower stands), and slots seen empty since the turn's look only past what the
        arm and the drawn block, in front of the tower now, can hide (ARM_HIDES_SLOTS): a
        resumed match's turn 16 was called fallen on three hidden slots with the tower
        standing. Fewer slots that truly emptied are seen by the window's look, the arm clear."""
        seen = self.link.observe().observation
        emptied = len(seen.emptied_since(self.obs)) if self.obs is not None else 0
        if seen.fell or emptied > ARM_HIDES_SLOTS:
            raise TowerFellError("the tower fell as the block was pulled out")
        if emptied >= FALLEN_SLOTS_EMPTIED:
            log.info("after the pull %d slots look empty with the arm at the tower; the "
                     "window's look, the arm clear, will tell", emptied)

    def _draw(self, source: Slot, pull: MotionPlan, into, insist: bool = False) -> Pulled:
        """Run the pull of a grasped block under the guard, recording the drag: held lightly
        while it slides out, squeezed while its end still rests in the tower, then drawn clear.
        Given up when the guard found a steady drag, not a knock, when the block slid out of the
        fingers' light pull grip, or (unless it must `insist`) when the cameras, looking as the
        block passed RIDE_WATCH_M out and every RIDE_LOOK_EVERY_M after while its end rests in
        the tower, saw a block above it come along."""
        self.moves.dwell_and_tare()
        before = self.link.observe().observation     # the tower with the block in the fingers
        self._riders, self._next_look_m = {}, RIDE_WATCH_M
        # the block resisting the pull pushes the gripper back toward the tower
        rotation = self.planner.arm.fk(pull.step("pull").trajectory.start, pull.frame).R
        axis = tuple(float(v) for v in rotation.T @ into)
        start = self.planner.arm.fk(self.moves.q(), pull.frame).t
        watch = None if insist else \
            self._rider_watch(source[0], before, pull.frame, start, -np.asarray(into, float))
        guard_n = TAKE_GUARD_N if insist else PULL_GUARD_N
        trace: Trace = []
        resumed = 0
        for label in ("pull", "pull_out"):
            if label == "pull_out":
                self.moves.grip(pull.step("squeeze"))
            problem, resumed = self._draw_part(pull, label, axis, trace, resumed, watch, guard_n)
            if problem is not None:
                drawn = float((start - self.planner.arm.fk(self.moves.q(), pull.frame).t) @ into)
                return Pulled(problem, drawn, max((f for _, f in trace), default=0.0), trace,
                              resumed=resumed, riders=self._riders)
        return Pulled(None, 0.0, max((f for _, f in trace), default=0.0), trace, resumed=resumed)

    def _draw_part(self, pull: MotionPlan, label: str, axis, trace: Trace, resumed: int,
                   watch, guard_n: float) -> tuple[GaveUp | None, int]:
        """One part of the pull guarded at `guard_n`, going on after knocks, with the cameras'
        `watch` for riders (if any) running beside it; what stopped it, or None when it ran to
        its end; and the knocks gone on after so far."""
        step = pull.step(label)
        end = self.planner.arm.fk(step.trajectory.end, pull.frame).t
        while True:
            result, part = self._follow_recording(
                MoveStep(step.label, step.trajectory, ForceGuard(axis, guard_n)), axis,
                watch if label == "pull" else None)
            trace += part
            # a block that slid out of the light grip held more than the guard allows too
            if not self.grip.holds(self.arm.telemetry().gripper_width_m):
                return GaveUp.SLIP, resumed
            if self._riders:
                return GaveUp.RIDER, resumed
            if result.outcome is not MotionOutcome.GUARD:
                return None, resumed
            if not drag_was_a_spike(part, result.device_time) or resumed >= PULL_RESUMES:
                return GaveUp.DRAG, resumed
            # a moment's knock, not a drag: on with the rest of the pull
            resumed += 1
            step = self._draw_to(pull, label, end)

    def _rider_watch(self, layer: int, before: TowerObservation, frame: str, origin: np.ndarray,
                     out: np.ndarray):
        """A `during` for the pull's moves: when the tool (`frame`) has drawn the block
        RIDE_WATCH_M out from `origin` (world, m; `out` the way it is drawn), and every
        RIDE_LOOK_EVERY_M after, the cameras look, and blocks above `layer` that came along since
        `before` stop the arm (kept in `_riders`). The pull does not stop for the look: a block
        stopped and drawn on again under its load tripped the guard as it started (seed 3, 4.1 at
        6.5 mm: 1.2 N to 2.5 N in 44 ms). A move that ends short of the mark (a knock, a guard)
        leaves the look to the move that goes on."""
        def drawn(q) -> float:
            return float((self.planner.arm.fk(np.asarray(q, float), frame).t - origin) @ out)

        def during(started: float, trajectory) -> None:
            last = drawn(trajectory.positions[-1])
            while self._next_look_m <= last:
                mark_m = self._next_look_m

                def there_or_ended(t) -> bool:
                    return drawn(t.q_set) >= mark_m or (
                        t.device_time > started + MOTION_SEEN_S and not t.status & Status.MOVING)
                try:
                    mark = self.arm.wait_for(there_or_ended,
                                             float(trajectory.times[-1]) * 1.5 + 2.0)
                except ArmTimeout:
                    return   # held paused: the move's own wait says what became of it
                if drawn(mark.q_set) < mark_m:
                    return   # ended short of the mark: the move that goes on looks
                seen = self.link.observe().observation
                # the pull went on while the frames came: no rider went further than that
                far = drawn(mark.q_set) + PULL_SPEED * max(seen.time - mark.device_time, 0.0)
                self._riders = riders(before, seen, layer, self.planner.tower.front_end(layer),
                                      far)
                if self._riders:
                    self.arm.stop()
                    return
                self._next_look_m = max(mark_m, drawn(self.moves.q())) + RIDE_LOOK_EVERY_M
        return during

    def _draw_to(self, pull: MotionPlan, label: str, goal: np.ndarray) -> MoveStep:
        """The pull's straight move from where the tool stands to `goal` (world, m)."""
        here = self.planner.arm.fk(self.moves.q(), pull.frame).t
        return self.planner.straight(self.moves.q(), pull.frame, goal - here,
                                     tower_layers=self.layers, speed=PULL_SPEED,
                                     exempt=("held",), held=pull.held, label=label).moves[0]

    def _grasp(self, source: Slot, into, touches: list[dict],
               out_m: float = PUSH_THROUGH) -> MotionPlan | None:
        """Bring the open fingers around the block's protruding end and close them; returns the
        pull plan, its pull still to run, or None when no try of GRASP_TRIES got around it.

        A block pushed by one point turns as it slides out (in the simulated cell a side block
        turned 13 degrees and its front end lay 14 mm across from its slot's line), and the
        cameras, which look at the back of the tower, cannot see its front end. So the fingers
        feel for it: the approach is guarded, and a finger that meets the block backs off, and the
        next try goes to that finger's side (the wrist's twist at the touch tells which,
        `touch_side`; checks.py `next_grasp_shift` chooses the aim). Fingers that close on air
        open and try either side too."""
        self._felt.pop(source, None)
        seen = seen_offset(self.planner.tower, self.obs, source)
        front = end_protrusion(self.obs, source, self.planner.tower.front_end(source[0])) + out_m
        across = self.planner.tower.across(source[0])
        outward = source[1] - 1           # a side block's open side, along `across`
        tried: list[tuple[float, int | None]] = []
        extra: float | None = 0.0
        while extra is not None and len(tried) < GRASP_TRIES:
            aim = {"layer": source[0], "slot": source[1], "shift_mm": (seen["shift"] + extra) * 1000}
            try:
                pull = self.planner.pull(self.moves.q(), *source, front, tower_layers=self.layers,
                                         guard_n=GRASP_GUARD_N, shift=seen["shift"] + extra,
                                         rise=seen["rise"])
            except PlanError as exc:
                # No grasp the fingers could reach without touching the tower: in a seed-1 match
                # a block pushed out under a layer of two stopped the match there ("fingers
                # within 2 mm of the tower"); it goes back home like one the fingers met.
                touches.append({**aim, "force_n": 0.0, "unplanned": str(exc)})
                tried.append((extra, None))
                extra = next_grasp_shift(tried, outward)
                continue
            self.moves.follow(pull.step("transit"))
            self.moves.grip(pull.step("open"))
            self.moves.dwell_and_tare()
            met, wrench = self._approach_feeling(pull.step("approach"))
            if met.outcome is not MotionOutcome.GUARD:
                width = self.moves.grip(pull.step("close"))
                if self.grip.holds(width):
                    return pull
                # closed on air: the block lies beyond one finger or the other, which is unknown
                touches.append({**aim, "force_n": 0.0, "missed": True})
                tried.append((extra, None))
                self.moves.open_fully()
            else:
                y_world = self.planner.arm.fk(self.moves.q(), pull.frame).R[:, 1]
                side = touch_side(wrench, float(y_world @ across))
                # all of the reading at the touch (tool frame, N and N m), and the side it told
                touches.append({**aim, "force_n": met.force_n, "torque_x_nm": wrench[3],
                                "wrench": wrench, "side": side})
                tried.append((extra, side))
            self._back_off(pull.frame, into, "grasp_back_off")
            extra = next_grasp_shift(tried, outward)
        felt = felt_offset(tried, outward)
        if felt is not None:
            self._felt[source] = felt
        return None

    def _approach_feeling(self, step: MoveStep) -> tuple[MotionResult, list[float]]:
        """Run a guarded approach; how it ended and the wrist's whole reading (tool frame, N and
        N m) at its strongest force while it ran: read after the stop, the reading has often
        rung down already (a touch at 2.5 N read 0.25 N)."""
        result, samples = self._follow_sampled(step)
        if not samples:
            return result, [float(v) for v in self.arm.telemetry().wrench]
        _, peak = max(samples, key=lambda s: float(np.linalg.norm(np.asarray(s[1][:3], float))))
        return result, [float(v) for v in peak]

    def _back_off(self, frame: str, into, label: str, gentle: bool = False) -> None:
        """Straight out of the tower's way from a block's front end, along the layer, at the free
        pace unless `gentle` (the open fingers may still be beside a block that dragged, turned in
        the pads)."""
        self.moves.run(self.planner.straight(self.moves.q(), frame, -into * (STANDOFF + 0.01),
                                             tower_layers=self.layers, label=label,
                                             **retreat_pace(gentle)))
