"""The robot's turn, through the arm's link and the cameras only: perceive, rank the candidates,
feel them with guarded test pushes, push the chosen block through from the back, pull it from the
front, place it on top at a right angle to the layer below, get out of the way, and wait out the
settling window watching for a fall. Everything is timed in device time and reported.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from controller.arm_moves import ArmMoves, HeldBlockWatch
from controller.cell_link import CellLink
from controller.settling import watch_settling
from controller.turn_checks import (changed_slots, drag_was_a_spike, end_protrusion, outcome_problem,
                                    placement_shift, protrusions, seen_offset)
from controller.turn_report import NoMoveError, PhaseClock, ProbeRecord, TurnError, TurnReport
from controller.wording import slot_name
from firmware_bridge.client import MotionOutcome, MotionResult
from perception.observation import PerceptionError, TowerObservation
from planning.looseness import LoosenessBelief, ProbeOutcome
from planning.motion.planner import (PLACE_GUARD_N, PLACE_OVERHANG, PULL_SPEED, PUSH_THROUGH, STANDOFF,
                                     MotionPlanner)
from planning.motion.plans import ForceGuard, GripStep, MotionPlan, MoveStep, PlanError
from planning.rules import RuleOptions, check_move
from planning.stability import BlockDims
from planning.policies import JAM_N, NoBlock, Policy, TurnView
from planning.strategy import RESTORE_M, placement_guards, placement_slot, set_down_ends
from planning.tower import layer_axis

PROBE_DEPTH = 0.005          # a test push moves the block at most this far
PROBE_SPEED = 0.002          # m/s
PUSH_SPEED = 0.008
# A pull that needs more than this drags the tower: in 23 legal pulls of the simulated cell the
# drag peaked at 0.6-1.8 N (start transients included) with medians under 0.5 N; the one pull that
# toppled the tower ran at a median of 1.6 N and 2.6 N at its 90th percentile. A guard at 2 N also
# let go of loose blocks, and three let-gos in one turn toppled a tower.
PULL_GUARD_N = 2.5
# A guard trip that was a short knock on a light drag (controller/turn_checks.py) lets the pull go
# on, at most this many times.
PULL_RESUMES = 10
# The grasp's approach stops at this: a finger ran into the block. Low, because a loose block slides
# at 0.15 N: at 2 N the fingers of the simulated cell shoved turned blocks 5-23 mm back into the
# tower without tripping. The approach's own speed-up reads 0.13 N on the 1.3 kg tool.
GRASP_GUARD_N = 0.6
REGRASP_SHIFT = 0.008        # a finger met the block: try again this far to its side (m); the open
                             # fingers clear a 25 mm block by 7.5 mm each side


class RobotTurn:
    def __init__(self, link: CellLink, planner: MotionPlanner, options: RuleOptions = RuleOptions(),
                 policy: Policy | None = None):
        self.link = link
        self.arm = link.arm
        self.planner = planner
        self.options = options
        b = link.cell.blocks
        self.dims = BlockDims(b.length.mean, b.width.mean, b.height.mean, b.mass.mean)
        self.policy = policy or Policy()      # how blocks are chosen (planning/policies.py)
        self.chooser = None                   # this turn's
        self.stiffness = link.cell.tool.fingertip_stiffness
        # Blocks whose pull dragged the tower, in any turn of this game: in the simulated cell the
        # same blocks dragged at every pull, turn after turn.
        self.dragged: set[tuple[int, int]] = set()
        self.grip = HeldBlockWatch(self.arm, self.dims.width)   # the fingers on the pulled block
        self.on_probe: Callable[[ProbeRecord], None] | None = None   # told of each probe at once
        # told as each phase of the turn begins (its name and the report so far), for the console
        self.on_phase: Callable[[str, TurnReport], None] | None = None
        # why the turn must stop now, if it must (the safety monitor saw the tower fall): asked
        # around every move, so a turn never carries on into a fallen tower
        self.halted: Callable[[], str | None] = lambda: None
        self.moves = ArmMoves(self.arm, planner, lambda: self.halted())

    # --- the turn -----------------------------------------------------------------------------

    def play(self, number: int, blocks_moved: int = 0, watch_window: bool = True) -> TurnReport:
        """Play one turn. An error that ends it carries what was done so far as `.report`. With
        `watch_window` False the turn ends when the arm is home again, and whoever runs the match
        watches the settling window (the next player may close it early)."""
        report = TurnReport(number)
        try:
            return self._play(report, blocks_moved, watch_window)
        except Exception as exc:
            report.error = str(exc)
            exc.report = report
            raise

    def _play(self, report: TurnReport, blocks_moved: int, watch_window: bool = True) -> TurnReport:
        clock = PhaseClock(self.arm, report, self.on_phase)
        with clock("perceive"):
            obs = self._observe()
            state = obs.tower_state(blocks_moved)
            self._use_perceived_tower(obs)
        belief = self._belief(state, obs)
        offsets = protrusions(obs)
        layers = state.top_layer + 1
        pull = None
        while pull is None:
            with clock("probe"):
                chosen = self._choose(state, belief, obs, offsets, layers, report)
            with clock("pull"):
                pull = self._pull_out(chosen, obs, layers, belief, report)
            if pull is None:
                # A block let go may have dragged others with it (a loose block lying across it
                # rides along): look again before the next block is touched.
                with clock("perceive"):
                    obs = self._observe()
                    changed = changed_slots(set(state.blocks()), obs)
                    if changed:
                        raise TurnError("the tower changed while a block was put back: slots "
                                        + ", ".join(slot_name(l, s) for l, s in changed))
                    self._use_perceived_tower(obs)
                    offsets = protrusions(obs)
        report.source = chosen
        observed = obs.block_at(*chosen)
        report.block = observed.block if observed else None
        after = state.without(*chosen)
        target = placement_slot(after, self.dims)
        report.target = target
        with clock("place"):
            others = {k: v for k, v in offsets.items() if k != chosen}
            press_n, align_n = placement_guards(
                after, self.dims, target, PLACE_OVERHANG, PLACE_GUARD_N, 2 * PLACE_GUARD_N, others)
            ends = set_down_ends(after, self.dims, target, PLACE_OVERHANG, others)
            if not ends:
                raise TurnError(f"a block set down on layer {target[0]} would tip off: the layer "
                                f"below has no support under either end")
            place = self.planner.place(self.moves.q(), *target, pull.held,
                                       shift=placement_shift(obs, target, self.dims.width),
                                       guard_n=press_n, align_guard_n=align_n, ends=ends)
            report.released_at = self._run_place(place, target[0])
        report.legal = check_move(state, chosen, target, layer_axis(target[0]), self.options) == []
        with clock("clear"):
            self.moves.transit(self.planner.arm.home, layers + 1)
        if not watch_window:
            return report
        with clock("settle"):
            final = watch_settling(self.link, report.released_at, self.options.window_s)
        report.fell = final is None or final.fell
        if not report.fell:
            try:
                report.stories = final.tower_state(blocks_moved + 1).stories()
            except PerceptionError as exc:
                report.error = str(exc)
            else:
                problem = outcome_problem(state, final, chosen, target)
                if problem:
                    report.legal, report.error = False, problem
        return report

    # --- choosing -----------------------------------------------------------------------------

    def _belief(self, state, obs: TowerObservation) -> LoosenessBelief:
        """The turn's looseness prior, with the blocks that dragged the tower earlier ruled out."""
        belief = LoosenessBelief.prior(state, {(b.layer, b.slot): b.position_mm[2] / 1000
                                               for b in obs.blocks})
        for key in self.dragged:
            belief.jammed(key)
        return belief

    def _choose(self, state, belief: LoosenessBelief, obs, offsets, layers: int,
                report: TurnReport) -> tuple[int, int]:
        """Probe candidates until one is pushed through; returns it."""
        self.chooser = chooser = self.policy.turn(TurnView(
            state, belief, self.dims, self.options, offsets, self.planner.tower.front_end))
        chosen = None
        while chosen is None:
            try:
                step = chooser.next_step()
            except NoBlock as exc:
                raise NoMoveError(str(exc)) from None
            candidate = step.source
            if step.kind == "take":
                chosen = self._re_engage(candidate, obs, layers, belief)
                continue
            try:
                outcome, record, plan = self._probe(candidate, obs, layers, step.guard_n)
            except PlanError:
                continue
            record.p_loose = belief.update(outcome)
            report.probes.append(record)
            if self.on_probe is not None:
                self.on_probe(record)
            decision = chooser.probed(outcome, len(report.probes))
            # the no-testing variant: a block the probe moved is the one to take
            must_take = self.options.no_testing and outcome.travel_m > RESTORE_M
            if decision.action == "take" or must_take:
                if self._push_through(candidate, plan, obs, layers, belief):
                    chosen = candidate
                elif must_take:
                    raise TurnError(f"no testing: the block in {slot_name(*candidate)} moved and "
                                    f"would not come out, and no other may be taken")
                continue
            self._retreat(plan, layers)
            if decision.restore:
                self._restore(candidate, obs, outcome.travel_m, layers)
            if decision.action == "take_best":
                chosen = self._re_engage(decision.source, obs, layers, belief)
        return chosen

    def _pull_out(self, source, obs, layers: int, belief: LoosenessBelief,
                  report: TurnReport) -> MotionPlan | None:
        """Grasp the pushed-out block and draw it out, recording the drag along the pull. The
        pull is guarded at PULL_GUARD_N: a block that drags the tower with it is let go, pushed
        back home from the front and ruled out for the turn (None); so is one the fingers cannot
        get around."""
        into = -self.planner.tower.front_end(source[0]) * self.planner.tower.axis(source[0])
        pull = self._grasp(source, obs, layers, into, report)
        if pull is None:
            report.gave_up(source, "approach", 0.0, report.touches[-1]["force_n"])
            self._restore(source, obs, PUSH_THROUGH, layers)
            self._rule_out(source, belief)
            return None
        if not self._draw(pull, source, into, layers, report):
            self.dragged.add(source)
            drawn = report.let_go[-1]["drawn_mm"] / 1000
            self._let_go(source, obs, PUSH_THROUGH + max(drawn, 0.0), pull.frame, into, layers)
            self._rule_out(source, belief)
            return None
        self.grip.check_held()
        return pull

    def _draw(self, pull: MotionPlan, source, into, layers: int, report: TurnReport) -> bool:
        """Run the pull of a grasped block under the guard, recording the drag: held lightly
        while it slides out, squeezed while its end still rests in the tower, then drawn clear.
        False (and a `let_go` entry) when the guard found a steady drag, not a knock, or the
        block slid out of the fingers' light pull grip."""
        self.moves.dwell_and_tare()
        # the block resisting the pull pushes the gripper back toward the tower
        rotation = self.planner.arm.fk(pull.step("pull").trajectory.start, pull.frame).R
        axis = tuple(float(v) for v in rotation.T @ into)
        start = self.planner.arm.fk(self.moves.q(), pull.frame).t
        report.pull_trace = []
        for label in ("pull", "pull_out"):
            if label == "pull_out":
                self.moves.grip(pull.step("squeeze"))
            problem = self._draw_part(pull, label, axis, layers, report)
            if problem:
                drawn = float((start - self.planner.arm.fk(self.moves.q(), pull.frame).t) @ into)
                report.gave_up(source, problem, drawn,
                               max((f for _, f in report.pull_trace), default=0.0),
                               report.pull_trace)
                return False
        return True

    def _draw_part(self, pull: MotionPlan, label: str, axis, layers: int,
                   report: TurnReport) -> str | None:
        """One guarded part of the pull, going on after knocks; what stopped it ("pull": a
        steady drag, "slip": the fingers closed on nothing), or None when it ran to its end."""
        step = pull.step(label)
        end = self.planner.arm.fk(step.trajectory.end, pull.frame).t
        resumed = 0
        while True:
            result, trace = self._follow_recording(
                MoveStep(step.label, step.trajectory, ForceGuard(axis, PULL_GUARD_N)), axis)
            report.pull_trace += trace
            # a block that slid out of the light grip held more than the guard allows too
            if not self.grip.holds(self.arm.telemetry().gripper_width_m):
                return "slip"
            if result.outcome is not MotionOutcome.GUARD:
                return None
            if not drag_was_a_spike(trace, result.device_time) or resumed >= PULL_RESUMES:
                return "pull"
            # a moment's knock, not a drag: on with the rest of the pull
            resumed += 1
            report.pull_resumed += 1
            here = self.planner.arm.fk(self.moves.q(), pull.frame).t
            step = self.planner.straight(self.moves.q(), pull.frame, end - here, tower_layers=layers,
                                         speed=PULL_SPEED, exempt=("held",), held=pull.held,
                                         label=label).moves[0]

    def _grasp(self, source, obs, layers: int, into, report: TurnReport) -> MotionPlan | None:
        """Bring the open fingers around the block's protruding end and close them; returns the
        pull plan, its pull still to run, or None when a finger met the block at every try.

        A block pushed by one point turns as it slides out, and the cameras, which look at the
        back of the tower, cannot see its front end. So the fingers feel for it: the approach is
        guarded, and a finger that meets the block backs off and tries again REGRASP_SHIFT to the
        side of the finger that touched (the wrist's torque about the tool's x axis tells which),
        then to the other side. Fingers that close on air open and try both sides too."""
        seen = seen_offset(self.planner.tower, obs, source)
        front = end_protrusion(obs, source, self.planner.tower.front_end(source[0])) + PUSH_THROUGH
        across = self.planner.tower.across(source[0])
        tries = [0.0]
        while tries:
            extra = tries.pop(0)
            pull = self.planner.pull(self.moves.q(), *source, front, tower_layers=layers,
                                     guard_n=GRASP_GUARD_N, shift=seen["shift"] + extra,
                                     rise=seen["rise"])
            self.moves.follow(pull.step("transit"))
            self.moves.grip(pull.step("open"))
            self.moves.dwell_and_tare()
            approach = pull.step("approach")
            met = self.moves.follow(approach)
            toward = 1.0
            if met.outcome is not MotionOutcome.GUARD:
                width = self.moves.grip(pull.step("close"))
                if self.grip.holds(width):
                    return pull
                # closed on air: the block lies beyond one finger or the other, which is unknown
                report.touches.append({"layer": source[0], "slot": source[1], "force_n": 0.0,
                                       "missed": True, "shift_mm": (seen["shift"] + extra) * 1000})
                self.moves.open_fully()
            else:
                # A finger at +y (tool) pressed back along -z twists the wrist negatively about x.
                torque_x = float(self.arm.telemetry().wrench[3])
                y_world = self.planner.arm.fk(self.moves.q(), pull.frame).R[:, 1]
                toward = -np.sign(torque_x) * np.sign(float(y_world @ across)) or 1.0
                report.touches.append({"layer": source[0], "slot": source[1], "force_n": met.force_n,
                                       "torque_x_nm": torque_x,
                                       "shift_mm": (seen["shift"] + extra) * 1000})
            self._back_off(pull.frame, into, layers, "grasp_back_off")
            if extra == 0.0:
                tries = [toward * REGRASP_SHIFT, -toward * REGRASP_SHIFT]
        return None

    def _let_go(self, source, obs, travel: float, frame: str, into, layers: int) -> None:
        """Open, back away from a block that dragged the tower, and push it home by `travel`,
        how far it was pushed through and drawn out."""
        self.moves.open_fully()
        self._back_off(frame, into, layers, "let_go")
        self._restore(source, obs, travel, layers)

    def _back_off(self, frame: str, into, layers: int, label: str) -> None:
        """Straight out of the tower's way from a block's front end, along the layer."""
        self.moves.run(self.planner.straight(self.moves.q(), frame, -into * (STANDOFF + 0.01),
                                        tower_layers=layers, label=label))

    # --- probing ------------------------------------------------------------------------------

    def _probe(self, source, obs: TowerObservation, layers: int, threshold: float):
        layer, slot = source
        end = -self.planner.tower.front_end(layer)        # push from the back
        protrusion = end_protrusion(obs, source, end)
        plan = self.planner.push(self.moves.q(), layer, slot, PROBE_DEPTH, tower_layers=layers, end=end,
                                 protrusion=protrusion, speed=PROBE_SPEED, guard_n=threshold,
                                 retreat=False, through=PUSH_THROUGH,
                                 **seen_offset(self.planner.tower, obs, source))
        self.moves.come_to_face(plan)
        push = plan.step("push")
        result, trace = self._follow_recording(push, push.guard.direction)
        peak = max((f for _, f in trace), default=0.0)
        end_force = trace[-1][1] if trace else 0.0
        travel = self._block_travel(plan.frame, layer, slot, end, protrusion, end_force)
        outcome = ProbeOutcome(layer, slot, peak, travel, result.outcome is MotionOutcome.GUARD, threshold)
        observed = obs.block_at(layer, slot)
        record = ProbeRecord(layer, slot, observed.block if observed else None, threshold, peak,
                             travel * 1000, 0.0, trace)
        return outcome, record, plan

    def _push_through(self, source, probe_plan: MotionPlan, obs, layers: int,
                      belief: LoosenessBelief) -> bool:
        """From where the probe stopped, on until the block sticks out PUSH_THROUGH at the front;
        then back out of the hole. A block that jams is put back where it was and ruled out:
        False."""
        layer, slot = source
        end = -self.planner.tower.front_end(layer)
        direction = -end * self.planner.tower.axis(layer)
        protrusion = end_protrusion(obs, source, end)
        already = self._block_travel(probe_plan.frame, layer, slot, end, protrusion, 0.0)
        push = self.planner.straight(self.moves.q(), probe_plan.frame, direction * (PUSH_THROUGH - already),
                                     tower_layers=layers, speed=PUSH_SPEED, exempt=("probe",),
                                     label="push_through")
        step = push.moves[0]
        jam = ForceGuard(probe_plan.step("push").guard.direction, self._jam_n(source))
        result = self.moves.follow(MoveStep(step.label, step.trajectory, jam))
        jammed = result.outcome is MotionOutcome.GUARD
        force_n = self.moves.force_along(jam.direction) if jammed else 0.0
        moved = self._block_travel(probe_plan.frame, layer, slot, end, protrusion, force_n)
        self._retreat(probe_plan, layers, "back_out")
        if not jammed:
            return True
        self._rule_out(source, belief)
        if moved > RESTORE_M:
            self._restore(source, obs, moved, layers)
        return False

    def _follow_recording(self, step: MoveStep, axis) -> tuple[MotionResult, list[tuple[float, float]]]:
        """Run a move and record the wrist force along `axis` (tool coordinates) while it runs:
        (device time, N) for every telemetry frame."""
        axis = np.asarray(axis, float)
        self.link.forces.start()
        try:
            result = self.moves.follow(step)
        finally:
            samples = self.link.forces.stop()
        return result, [(t, float(w[:3] @ axis)) for t, w in samples]

    def _block_travel(self, frame: str, layer: int, slot: int, end: int, protrusion: float,
                      force_n: float) -> float:
        """How far the fingertip has pushed the block in from its `end` face (m): the tip's travel
        past where the face was, less the fingertip's spring under `force_n`."""
        tip = self.planner.arm.fk(np.array(self.arm.telemetry().q_set), frame).t
        face = self.planner.tower.end_face_centre(layer, slot, end, protrusion)
        direction = -end * self.planner.tower.axis(layer)
        past_face = float((tip - face) @ direction) + self.planner.cell.tool.fingertip_radius
        return max(0.0, past_face - max(force_n, 0.0) / self.stiffness)

    def _retreat(self, push_plan: MotionPlan, layers: int, label: str = "retreat",
                 prefix: str = "") -> None:
        """Straight back out along a push, from wherever it stopped to where its approach began
        (`prefix`: the push's steps are named so inside a bigger plan, as `align_`)."""
        direction = self.moves.push_direction(push_plan, prefix)
        here = self.planner.arm.fk(self.moves.q(), push_plan.frame).t
        began = self.planner.arm.fk(push_plan.step(prefix + "approach").trajectory.start,
                                    push_plan.frame).t
        back = max(float((here - began) @ direction), 0.0)
        self.moves.run(self.planner.straight(self.moves.q(), push_plan.frame, -direction * back,
                                        tower_layers=layers, exempt=("probe",), label=label))

    def _restore(self, source, obs, travel: float, layers: int) -> None:
        """Push a tested block back from the front by as far as the test moved it."""
        layer, slot = source
        front = self.planner.tower.front_end(layer)
        was = end_protrusion(obs, source, front)
        plan = self.planner.push(self.moves.q(), layer, slot, -was,
                                 tower_layers=layers, end=front, protrusion=was + travel,
                                 speed=PUSH_SPEED, guard_n=self._jam_n(source), retreat=False,
                                 **seen_offset(self.planner.tower, obs, source))
        self.moves.come_to_face(plan)
        self.moves.follow(plan.step("push"))
        self._retreat(plan, layers, "restore_retreat")

    def _re_engage(self, source, obs, layers: int, belief: LoosenessBelief):
        """Take a block probed earlier: push it through from the back in one go. Returns the
        source, or None when it jammed (it is then back in place and ruled out)."""
        layer, slot = source
        end = -self.planner.tower.front_end(layer)
        plan = self.planner.push(self.moves.q(), layer, slot, PROBE_DEPTH, tower_layers=layers, end=end,
                                 protrusion=end_protrusion(obs, source, end), speed=PROBE_SPEED,
                                 guard_n=self._jam_n(source), retreat=False, through=PUSH_THROUGH,
                                 **seen_offset(self.planner.tower, obs, source))
        self.moves.come_to_face(plan)
        self.moves.follow(plan.step("push"))
        return source if self._push_through(source, plan, obs, layers, belief) else None

    # --- placing ------------------------------------------------------------------------------

    def _run_place(self, plan: MotionPlan, layer: int) -> float:
        """Run a place plan into `layer`; returns the device time the tool last touched the
        placed block: its release, or the end of the push that aligns it, when there is one.
        The settling window runs from then: a block still being pushed has not been let go."""
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
                self._retreat(plan, layer, "align_retreat", "align_")
                continue
            if step.label == "descend":
                self.grip.check_still_held()
            if step.guard is not None:
                # the tool turned since the last tare; its weight would read as a push
                self.moves.dwell_and_tare()
            result = self.moves.follow(step)
            if step.label == "align_push":
                stopped_early = result.outcome is MotionOutcome.GUARD
                released = self.arm.device_time()
        return released if released is not None else self.arm.device_time()

    # --- seeing and ruling out ----------------------------------------------------------------

    def _observe(self) -> TowerObservation:
        obs = self.link.observe().observation
        if obs.fell:
            raise TurnError("the tower has fallen")
        return obs

    def _use_perceived_tower(self, obs: TowerObservation) -> None:
        pose = obs.pose
        self.planner.set_tower(self.planner.tower.measured(pose.x, pose.y, pose.yaw, pose.pitch))

    def _jam_n(self, source) -> float:
        """Force at which pushing a block through gives up: the policy's jam limit (less where
        the tower would tip sooner)."""
        return self.chooser.jam_n(source) if self.chooser is not None else JAM_N

    def _rule_out(self, source, belief: LoosenessBelief) -> None:
        """`source` would not come out (it jammed, or its pull dragged the tower): not again
        this turn."""
        if self.chooser is not None:
            self.chooser.jammed(source)
        else:
            belief.jammed(source)
