"""The robot's turn, through the arm's link and the cameras only: perceive, rank the candidates,
feel them with guarded test pushes, push the chosen block through from the back, pull it from the
front, place it on top at a right angle to the layer below, get out of the way, and wait out the
settling window watching for a fall. Everything is timed in device time and reported.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from controller.cell_link import CellLink
from controller.turn_checks import (changed_slots, drag_was_a_spike, outcome_problem, placement_shift,
                                    protrusions)
from controller.turn_report import NoMoveError, PhaseClock, ProbeRecord, TurnError, TurnReport
from controller.wording import slot_name
from firmware_bridge.client import MotionOutcome, MotionResult
from perception.observation import PerceptionError, TowerObservation
from planning.looseness import LoosenessBelief, ProbeOutcome
from planning.motion.planner import (PLACE_GUARD_N, PLACE_OVERHANG, PULL_SPEED, PUSH_THROUGH, STANDOFF,
                                     MotionPlanner)
from planning.motion.plans import ForceGuard, GripStep, MotionPlan, MoveStep, PlanError
from planning.motion.trajectory import time_path
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
WATCH_EVERY_S = 1.0
HELD_SLIP_M = 0.0015         # the fingers' opening may change this much while a block is carried
DWELL_S = 0.3                # stand still before taring, so the reading is the tool's weight only


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
        self.held_width: float | None = None   # the fingers' opening on the block after the pull
        self.on_probe: Callable[[ProbeRecord], None] | None = None   # told of each probe at once
        # told as each phase of the turn begins (its name and the report so far), for the console
        self.on_phase: Callable[[str, TurnReport], None] | None = None
        # why the turn must stop now, if it must (the safety monitor saw the tower fall): asked
        # around every move, so a turn never carries on into a fallen tower
        self.halted: Callable[[], str | None] = lambda: None

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
            place = self.planner.place(self._q(), *target, pull.held,
                                       shift=placement_shift(obs, target, self.dims.width),
                                       guard_n=press_n, align_guard_n=align_n, ends=ends)
            report.released_at = self._run_place(place, target[0])
        report.legal = check_move(state, chosen, target, layer_axis(target[0]), self.options) == []
        with clock("clear"):
            self._transit(self.planner.arm.home, layers + 1)
        if not watch_window:
            return report
        with clock("settle"):
            final = self._watch_settle(report.released_at)
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
        self._check_held()
        return pull

    def _draw(self, pull: MotionPlan, source, into, layers: int, report: TurnReport) -> bool:
        """Run the pull of a grasped block under the guard, recording the drag: held lightly
        while it slides out, squeezed while its end still rests in the tower, then drawn clear.
        False (and a `let_go` entry) when the guard found a steady drag, not a knock, or the
        block slid out of the fingers' light pull grip."""
        self._dwell_and_tare()
        # the block resisting the pull pushes the gripper back toward the tower
        rotation = self.planner.arm.fk(pull.step("pull").trajectory.start, pull.frame).R
        axis = tuple(float(v) for v in rotation.T @ into)
        start = self.planner.arm.fk(self._q(), pull.frame).t
        report.pull_trace = []
        for label in ("pull", "pull_out"):
            if label == "pull_out":
                self._grip(pull.step("squeeze"))
            problem = self._draw_part(pull, label, axis, layers, report)
            if problem:
                drawn = float((start - self.planner.arm.fk(self._q(), pull.frame).t) @ into)
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
            if not self._holds_block(self.arm.telemetry().gripper_width_m):
                return "slip"
            if result.outcome is not MotionOutcome.GUARD:
                return None
            if not drag_was_a_spike(trace, result.device_time) or resumed >= PULL_RESUMES:
                return "pull"
            # a moment's knock, not a drag: on with the rest of the pull
            resumed += 1
            report.pull_resumed += 1
            here = self.planner.arm.fk(self._q(), pull.frame).t
            step = self.planner.straight(self._q(), pull.frame, end - here, tower_layers=layers,
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
        seen = self._seen_offset(source, obs)
        front = self._front_protrusion(source, obs) + PUSH_THROUGH
        across = self.planner.tower.across(source[0])
        tries = [0.0]
        while tries:
            extra = tries.pop(0)
            pull = self.planner.pull(self._q(), *source, front, tower_layers=layers,
                                     guard_n=GRASP_GUARD_N, shift=seen["shift"] + extra,
                                     rise=seen["rise"])
            self._follow(pull.step("transit"))
            self._grip(pull.step("open"))
            self._dwell_and_tare()
            approach = pull.step("approach")
            met = self._follow(approach)
            toward = 1.0
            if met.outcome is not MotionOutcome.GUARD:
                width = self._grip(pull.step("close"))
                if self._holds_block(width):
                    return pull
                # closed on air: the block lies beyond one finger or the other, which is unknown
                report.touches.append({"layer": source[0], "slot": source[1], "force_n": 0.0,
                                       "missed": True, "shift_mm": (seen["shift"] + extra) * 1000})
                self._open_fully()
            else:
                # A finger at +y (tool) pressed back along -z twists the wrist negatively about x.
                torque_x = float(self.arm.telemetry().wrench[3])
                y_world = self.planner.arm.fk(self._q(), pull.frame).R[:, 1]
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
        self._open_fully()
        self._back_off(frame, into, layers, "let_go")
        self._restore(source, obs, travel, layers)

    def _back_off(self, frame: str, into, layers: int, label: str) -> None:
        """Straight out of the tower's way from a block's front end, along the layer."""
        self._run(self.planner.straight(self._q(), frame, -into * (STANDOFF + 0.01),
                                        tower_layers=layers, label=label))

    # --- probing ------------------------------------------------------------------------------

    def _probe(self, source, obs: TowerObservation, layers: int, threshold: float):
        layer, slot = source
        end = -self.planner.tower.front_end(layer)        # push from the back
        protrusion = self._end_protrusion(source, obs, end)
        plan = self.planner.push(self._q(), layer, slot, PROBE_DEPTH, tower_layers=layers, end=end,
                                 protrusion=protrusion, speed=PROBE_SPEED, guard_n=threshold,
                                 retreat=False, through=PUSH_THROUGH,
                                 **self._seen_offset(source, obs))
        self._come_to_face(plan)
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
        protrusion = self._end_protrusion(source, obs, end)
        already = self._block_travel(probe_plan.frame, layer, slot, end, protrusion, 0.0)
        push = self.planner.straight(self._q(), probe_plan.frame, direction * (PUSH_THROUGH - already),
                                     tower_layers=layers, speed=PUSH_SPEED, exempt=("probe",),
                                     label="push_through")
        step = push.moves[0]
        jam = ForceGuard(probe_plan.step("push").guard.direction, self._jam_n(source))
        result = self._follow(MoveStep(step.label, step.trajectory, jam))
        jammed = result.outcome is MotionOutcome.GUARD
        force_n = self._force_along(jam.direction) if jammed else 0.0
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
            result = self._follow(step)
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
        direction = self._push_direction(push_plan, prefix)
        here = self.planner.arm.fk(self._q(), push_plan.frame).t
        began = self.planner.arm.fk(push_plan.step(prefix + "approach").trajectory.start,
                                    push_plan.frame).t
        back = max(float((here - began) @ direction), 0.0)
        self._run(self.planner.straight(self._q(), push_plan.frame, -direction * back,
                                        tower_layers=layers, exempt=("probe",), label=label))

    def _restore(self, source, obs, travel: float, layers: int) -> None:
        """Push a tested block back from the front by as far as the test moved it."""
        layer, slot = source
        front = self.planner.tower.front_end(layer)
        was = self._end_protrusion(source, obs, front)
        plan = self.planner.push(self._q(), layer, slot, -was,
                                 tower_layers=layers, end=front, protrusion=was + travel,
                                 speed=PUSH_SPEED, guard_n=self._jam_n(source), retreat=False,
                                 **self._seen_offset(source, obs))
        self._come_to_face(plan)
        self._follow(plan.step("push"))
        self._retreat(plan, layers, "restore_retreat")

    def _re_engage(self, source, obs, layers: int, belief: LoosenessBelief):
        """Take a block probed earlier: push it through from the back in one go. Returns the
        source, or None when it jammed (it is then back in place and ruled out)."""
        layer, slot = source
        end = -self.planner.tower.front_end(layer)
        plan = self.planner.push(self._q(), layer, slot, PROBE_DEPTH, tower_layers=layers, end=end,
                                 protrusion=self._end_protrusion(source, obs, end), speed=PROBE_SPEED,
                                 guard_n=self._jam_n(source), retreat=False, through=PUSH_THROUGH,
                                 **self._seen_offset(source, obs))
        self._come_to_face(plan)
        self._follow(plan.step("push"))
        return source if self._push_through(source, plan, obs, layers, belief) else None

    # --- placing and watching -----------------------------------------------------------------

    def _run_place(self, plan: MotionPlan, layer: int) -> float:
        """Run a place plan into `layer`; returns the device time the tool last touched the
        placed block: its release, or the end of the push that aligns it, when there is one.
        The settling window runs from then: a block still being pushed has not been let go."""
        released = None
        stopped_early = False
        for step in plan.steps:
            if isinstance(step, GripStep):
                self._grip(step)
                if step.label == "release":
                    released = self.arm.device_time()
                continue
            if step.label == "align_retreat" and stopped_early:
                # the align push met the block sooner than planned: back out from where it stopped
                self._retreat(plan, layer, "align_retreat", "align_")
                continue
            if step.label == "descend":
                self._check_still_held()
            if step.guard is not None:
                # the tool turned since the last tare; its weight would read as a push
                self._dwell_and_tare()
            result = self._follow(step)
            if step.label == "align_push":
                stopped_early = result.outcome is MotionOutcome.GUARD
                released = self.arm.device_time()
        return released if released is not None else self.arm.device_time()

    def _watch_settle(self, released_at: float) -> TowerObservation | None:
        """Observe until the settling window after the release closes; None if the tower fell."""
        last = None
        deadline = released_at + self.options.window_s
        while True:
            now = self.arm.device_time()
            result = self.link.observe(after=now)
            last = result.observation
            if last.fell:
                return None
            if now >= deadline:
                return last
            wait = min(WATCH_EVERY_S, deadline - now)
            self.arm.wait_for(lambda t, until=now + wait: t.device_time >= until, timeout_s=wait + 5)

    # --- motion helpers -----------------------------------------------------------------------

    def _observe(self) -> TowerObservation:
        obs = self.link.observe().observation
        if obs.fell:
            raise TurnError("the tower has fallen")
        return obs

    def _use_perceived_tower(self, obs: TowerObservation) -> None:
        pose = obs.pose
        self.planner.set_tower(self.planner.tower.measured(pose.x, pose.y, pose.yaw, pose.pitch))

    def _end_protrusion(self, source, obs: TowerObservation, end: int) -> float:
        """How far the block's `end` face sticks out of the tower (m), as perceived."""
        observed = obs.block_at(*source)
        along = observed.protrusion_mm / 1000 if observed else 0.0
        return end * along

    def _seen_offset(self, source, obs: TowerObservation) -> dict[str, float]:
        """Where the cameras saw the block from its slot's nominal centre, as the planner's
        `shift` (across the layer) and `rise` (up): blocks differ in size and placed blocks land
        off centre, and the rod has only a few millimetres to spare in a block's gap."""
        observed = obs.block_at(*source)
        if observed is None:
            return {"shift": 0.0, "rise": 0.0}
        shift, rise = self.planner.tower.seen_offset(*source, np.asarray(observed.position_mm) / 1000)
        return {"shift": shift, "rise": rise}

    def _front_protrusion(self, source, obs) -> float:
        return self._end_protrusion(source, obs, self.planner.tower.front_end(source[0]))

    def _push_direction(self, plan: MotionPlan, prefix: str = "") -> np.ndarray:
        push = plan.step(prefix + "push").trajectory
        a = self.planner.arm.fk(push.start, plan.frame).t
        b = self.planner.arm.fk(push.end, plan.frame).t
        return (b - a) / np.linalg.norm(b - a)

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

    def _force_along(self, direction) -> float:
        return float(np.asarray(self.arm.telemetry().wrench[:3]) @ np.asarray(direction, float))

    def _check_held(self) -> None:
        """After a pull the gripper must hold a block: closed on nothing means the block did not
        come out where planned, and carrying on would place air."""
        width = self.arm.telemetry().gripper_width_m
        if not self._holds_block(width):
            raise TurnError(f"the gripper closed to {width * 1000:.1f} mm: it holds no block")
        self.held_width = width

    def _holds_block(self, width_m: float) -> bool:
        """Whether fingers stopped at this opening are on a block, not closed on air."""
        return width_m >= self.dims.width / 2

    def _check_still_held(self) -> None:
        """Before the set-down: a block that turned in the fingers on the way up (seen in the
        simulated cell: turned over, the fingers 3.6 mm further apart) would be set down across
        the top of the tower. The turn stops instead, the block still held."""
        if self.held_width is None:
            return
        width = self.arm.telemetry().gripper_width_m
        if abs(width - self.held_width) > HELD_SLIP_M:
            raise TurnError(f"the block turned in the gripper on the way to the top (the fingers "
                            f"went from {self.held_width * 1000:.1f} to {width * 1000:.1f} mm apart); "
                            f"it was not set down")

    def _q(self) -> np.ndarray:
        """Where the arm is commanded to be: plans start here (the firmware insists)."""
        return np.array(self.arm.telemetry().q_set)

    def _dwell_and_tare(self) -> None:
        start = self.arm.device_time()
        self.arm.wait_for(lambda t: t.device_time >= start + DWELL_S, timeout_s=DWELL_S + 5)
        self.arm.tare()

    def _transit(self, goal: np.ndarray, layers: int | None) -> None:
        layers = layers or self.planner.cell.blocks.layers + 1
        self._run(self.planner.transit(self._q(), goal, tower_layers=layers))

    def _run(self, plan: MotionPlan) -> None:
        for step in plan.steps:
            if isinstance(step, GripStep):
                self._grip(step)
            else:
                self._follow(step)

    def _open_fully(self) -> None:
        self.arm.gripper(self.planner.cell.tool.stroke, 1.0)

    def _grip(self, step: GripStep) -> float:
        """Open or close the fingers as a plan's step says; the opening they stopped at (m)."""
        return self.arm.gripper(step.width_m, max(step.force_n, 1.0))

    def _come_to_face(self, push: MotionPlan) -> None:
        """Bring the fingertip to just short of a block's face and zero the wrist there, so the
        push that follows reads contact force only."""
        self._follow(push.step("transit"))
        self._follow(push.step("approach"))
        self._dwell_and_tare()

    def _follow(self, step: MoveStep) -> MotionResult:
        """Run one move from wherever the arm is: a tiny joint move first joins the arm to the
        move's start if a guarded stop left it a little off."""
        q = self._q()
        traj = step.trajectory
        gap = np.max(np.abs(traj.start - q))
        if gap > 1e-3:
            if gap > 0.05:
                raise TurnError(f"{step.label}: the arm is {np.degrees(gap):.1f} deg from where the "
                                f"move starts")
            cell = self.planner.cell.arm
            join = time_path(np.array([q, traj.start]), cell.speed_max, cell.accel_max, 0.2)
            self.arm.follow(join.times, join.positions)
        guard = None
        if step.guard is not None:
            guard = (step.guard.direction, step.guard.threshold_n)
        self._check_halted(step.label)
        result = self.arm.follow(traj.times, traj.positions, guard=guard)
        self._check_halted(step.label)
        return result

    def _check_halted(self, label: str) -> None:
        reason = self.halted()
        if reason is not None:
            raise TurnError(f"{label}: {reason}")
