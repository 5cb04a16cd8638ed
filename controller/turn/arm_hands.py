"""The turn's hands on the real arm (and on the simulated cell's, which speaks the same protocol):
the block skills of controller/turn/hands.py carried out through the arm's link and the cameras
only. Test pushes from the back, push-through, pushing a block back home from the front, a grasp
that feels for a block's turned end, a pull guarded against a drag, the place, and watching the
settling window. Every time is device time.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from controller.cell_link import CellLink
from controller.turn.arm_moves import ArmMoves, HeldBlockWatch, works_block
from controller.turn.arm_placing import ArmPlacing
from controller.turn.arm_pulling import ArmPulling
from controller.turn.checks import end_protrusion, seen_offset
from controller.turn.procedure import Player
from controller.turn.hands import Felt, Look, Pushed, Slot, Trace
from controller.turn.report import TowerFellError, TurnError
from controller.turn.settling import WATCH_EVERY_S, WindowEnd, watch_settling
from firmware_bridge.client import MotionOutcome, MotionResult
from perception.observation import PerceptionError, TowerObservation
from planning.looseness import ProbeOutcome
from planning.motion.paces import guarded_pace, retreat_pace
from planning.motion.contact_geometry import PUSH_THROUGH
from planning.collision import STICKING_OUT_M
from planning.motion.planner import MotionPlanner
from planning.motion.retrace import retrace
from planning.motion.plans import ForceGuard, MotionPlan, MoveStep, PlanError
from planning.motion.trajectory import JointTrajectory
from planning.policies import Policy
from planning.game.rules import RuleOptions
from planning.stability import BlockDims

PROBE_DEPTH = 0.005          # a test push moves the block at most this far
# m/s. At 3 mm/s (2 before) the probes of a seed-4 game read as at 2: 0.62 N / 0.7 mm against
# 0.64 N / 0.6 mm, 0.14 N / 5.3 mm on the same loose block; a loose block's push 2.3 s, not 3.5.
PROBE_SPEED = 0.003
PUSH_SPEED = 0.015           # push-through and push back home
# A retreat along a push that ends this far or more short of where its approach began goes again
# (RETREAT_TRIES moves in all).
RETREAT_THERE_M = 0.0005
RETREAT_TRIES = 2


def look_from(obs: TowerObservation, blocks_moved: int) -> Look:
    """The cameras' observation as the turn's look (raises PerceptionError when it reads as no
    tower)."""
    return Look(obs.tower_state(blocks_moved),
                {(b.layer, b.slot): b.position[2] for b in obs.blocks},
                obs.protrusions(), dict(obs.occupancy), list(obs.out_of_place),
                {(b.layer, b.slot): b.block for b in obs.blocks})


class ArmHands(ArmPlacing, ArmPulling):
    """`halted()` says why the turn must stop now, if it must (the safety monitor saw the tower
    fall): asked around every move, so a turn never carries on into a fallen tower."""

    def __init__(self, link: CellLink, planner: MotionPlanner,
                 halted: Callable[[], str | None] = lambda: None):
        self.link, self.arm, self.planner = link, link.arm, planner
        self.halted = halted
        self.moves = ArmMoves(self.arm, planner, lambda: self.halted())
        self.stiffness = link.cell.tool.fingertip_stiffness
        self.block_width = link.cell.blocks.width.mean
        self.grip = HeldBlockWatch(self.arm, self.block_width)   # the fingers on a pulled block
        self.obs: TowerObservation | None = None      # the last look
        self._ids: dict[Slot, int] = {}    # the block last seen in each slot the planner knows of
        self.layers = link.cell.blocks.layers         # the tower's layers at the last look
        self._at_block: tuple[Slot, MotionPlan] | None = None   # a probe's fingertip at its block
        self._pull: MotionPlan | None = None          # the pull that holds the block
        # where a grasp given up felt its block, across from where the cameras saw it (m)
        self._felt: dict[Slot, float] = {}
        self._riders: dict[Slot, float] = {}     # the blocks above seen riding on the pull
        self._next_look_m = 0.0            # how far out the pull's next look for riders comes
        self._window_look: TowerObservation | None = None   # the look that closed a window

    def now(self) -> float:
        return self.arm.device_time()

    @property
    def holding(self) -> bool:
        """A block drawn out is in the fingers, not yet placed."""
        return self._pull is not None

    def pulled_end(self, layer: int) -> int:
        return self.planner.tower.front_end(layer)

    def record_moves(self, into: list[dict] | None) -> None:
        self.moves.timeline = into

    # --- seeing -------------------------------------------------------------------------------

    def look(self, blocks_moved: int, again: bool = False) -> Look:
        """The cameras' look at the tower. The look that closed the last settling window is
        taken again if it is at most WATCH_EVERY_S old (the watch's own pace): the arm stood
        home and nothing touched the tower since, so a solo turn starts moving at once."""
        closing, self._window_look = self._window_look, None
        if not again and closing is not None and 0.0 <= self.now() - closing.time <= WATCH_EVERY_S:
            obs = closing
        else:
            obs = self.link.observe().observation
        if obs.fell:
            raise TowerFellError("the tower has fallen")
        self.planner.set_tower(self.planner.tower.measured(obs.pose), self._sticking_out(obs))
        self.obs = obs
        self._felt.clear()        # what the fingers felt was of the tower before this look
        seen = look_from(obs, blocks_moved)
        self.layers = seen.tower.top_layer + 1
        return seen

    def _sticking_out(self, obs: TowerObservation) -> dict[Slot, float]:
        """Where the blocks stand along their layers' axes, for the planner to keep clear of: as
        `obs` sees them, and where the hands last knew those out of their slots that it reads as
        empty slots and sees nowhere else. A block out at the front shows the cameras (which
        see the back ends) a face too deep in its hole to read: in a seed-1 match one let go so
        was read as an empty slot, and the next pull beside it met it (a 200 N fault). A block
        out too far to be read in its slot stands where its marker says (`far_out`)."""
        seen = {b.block for b in obs.blocks} | set(obs.out_of_place) | set(obs.on_table)
        kept = {}
        for key, along in self.planner.sticking_out.items():
            if abs(along) < STICKING_OUT_M or obs.occupancy.get(key, False) \
                    or key[0] > obs.top_layer or self._ids.get(key) in seen:
                continue
            kept[key] = along
        self._ids = {k: v for k, v in self._ids.items() if k in kept}
        self._ids.update({(b.layer, b.slot): b.block for b in obs.blocks})
        self._ids.update({key: block for key, (block, _) in obs.far_out.items()})
        far = {key: along for key, (_, along) in obs.far_out.items()}
        return {**kept, **far, **obs.protrusions()}

    def _stands(self, source: Slot) -> float | None:
        """Where the block at `source` stands along its layer's axis (m, its centre) as the hands
        know it: the last look and their own moves since; None if neither told."""
        return self.planner.sticking_out.get(source)

    def watch(self, released_at: float, window_s: float, blocks_moved: int) -> Look | None:
        settled = watch_settling(self.link, released_at, window_s)
        if settled.end is WindowEnd.FELL:
            return None
        try:
            seen = look_from(settled.seen, blocks_moved)
        except PerceptionError as exc:
            raise TurnError(str(exc)) from exc
        self._window_look = settled.seen
        return seen

    # --- the fingertip ------------------------------------------------------------------------

    @works_block
    def probe(self, source: Slot, guard_n: float) -> Felt:
        layer, slot = source
        end = -self.planner.tower.front_end(layer)        # push from the back
        protrusion = end_protrusion(self.obs, source, end)
        plan = self._push_plan(source, end, protrusion, guard_n)
        self.moves.come_to_face(plan)
        push = plan.step("push")
        result, trace = self._follow_recording(push, push.guard.direction)
        self._at_block = (source, plan)
        peak = max((f for _, f in trace), default=0.0)
        end_force = trace[-1][1] if trace else 0.0
        travel = self._block_travel(plan.frame, source, end, protrusion, end_force)
        self._moved(source, -end * travel)
        return Felt(ProbeOutcome(layer, slot, peak, travel, result.outcome is MotionOutcome.GUARD,
                                 guard_n), trace)

    def withdraw(self) -> None:
        if self._at_block is not None:
            source, plan = self._at_block
            with self.planner.working_on(*source):
                self._retreat(plan)
            self._at_block = None

    @works_block
    def push_through(self, source: Slot, jam_n: float) -> Pushed:
        """From where the probe stopped (or, for a block not probed just now, from its back face
        at the probe's pace), on until the block sticks out PUSH_THROUGH at the front; then back
        out of the hole."""
        layer, slot = source
        end = -self.planner.tower.front_end(layer)
        protrusion = end_protrusion(self.obs, source, end)
        direction = -end * self.planner.tower.axis(layer)
        probed = self._at_block is not None and self._at_block[0] == source
        for fresh in (False, True) if probed else (True,):
            if fresh:
                self.withdraw()
                plan = self._push_plan(source, end, protrusion, jam_n)
                self.moves.come_to_face(plan)
                self.moves.follow(plan.step("push"))
            else:
                plan = self._at_block[1]
            already = self._block_travel(plan.frame, source, end, protrusion, 0.0)
            try:
                push = self.planner.straight(self.moves.q(), plan.frame,
                                             direction * (PUSH_THROUGH - already),
                                             tower_layers=self.layers, speed=PUSH_SPEED,
                                             exempt=("probe",), label="push_through",
                                             **guarded_pace(jam_n))
                break
            except PlanError:
                # From where a probe of layer 3 stopped in a seed-2 game no straight push on
                # could be planned (a joint's jump); from the back face again, with a pose of
                # its own planned for the whole push, it can.
                if fresh:
                    self._at_block = None
                    raise
        self._at_block = None
        step = push.moves[0]
        jam = ForceGuard(plan.step("push").guard.direction, jam_n)
        result = self.moves.follow(MoveStep(step.label, step.trajectory, jam))
        jammed = result.outcome is MotionOutcome.GUARD
        force_n = self.moves.force_along(jam.direction) if jammed else 0.0
        moved = self._block_travel(plan.frame, source, end, protrusion, force_n)
        self._moved(source, -end * moved)
        self._retreat(plan, "back_out", pushed_on=step.trajectory)
        return Pushed(jammed, moved)

    @works_block
    def restore(self, source: Slot, travel_m: float, jam_n: float) -> float:
        """Push a block back from the front by `travel_m` from where it stands (as the hands know:
        the look and their moves since; a block neither tells of, `travel_m` out of its slot),
        never past its home; returns how far short of that the block stopped (m; the tool's
        shortfall and the fingertip's spring). Aimed at the look's face, a neighbour the look saw
        carried out was pushed to where it already stood."""
        self.withdraw()
        layer, slot = source
        front = self.planner.tower.front_end(layer)
        stands = self._stands(source)
        now = front * stands if stands is not None else travel_m     # its front face (m out)
        # never past its home: a let-go block read empty, pushed again by as far as one the hands
        # knew nothing of would be (let_go.py LOST_OUT_M), was aimed 23 mm into the tower from
        # where they knew it stood, 19 mm out (make play seed 2 at 0928567)
        home = max(now - travel_m, min(now, 0.0))
        seen = seen_offset(self.planner.tower, self.obs, source)
        def push_at(shift: float) -> MotionPlan:
            return self.planner.push(self.moves.q(), layer, slot, -home, tower_layers=self.layers,
                                     end=front, protrusion=now, speed=PUSH_SPEED,
                                     guard_n=jam_n, retreat=False, gentle_approach=True,
                                     shift=shift, rise=seen["rise"])

        # aimed where a grasp given up felt the block, if it did and that can be reached
        felt = self._felt.pop(source, 0.0)
        plan = None
        if felt:
            try:
                plan = push_at(seen["shift"] + felt)
            except PlanError:
                pass          # out of reach there: where the cameras saw it, then
        plan = plan or push_at(seen["shift"])
        self.moves.come_to_face(plan)
        step = plan.step("push")
        # Not resumed when its guard stops it, as a push home is: under a light jam limit it starts
        # as gently as the push-through (planning/motion/paces.py LIGHT_ACCEL), and the blocks that
        # stopped it at the 3 N jam limit in a seed-1 match were tight ones whose push-through had
        # dragged the tower above them.
        result = self.moves.follow(step)
        # under the force that stopped it the fingertip gave: the block stands that much further
        # out than the tool
        spring = self._tip_give(result.force_n) if result.outcome is MotionOutcome.GUARD else 0.0
        short = float(np.linalg.norm(self._left_of(plan, step))) + spring
        self.planner.block_moved(source, front * (home + short))
        self._retreat(plan, "restore_retreat")
        return short

    def _moved(self, source: Slot, by_m: float) -> None:
        """The block at `source` was pushed `by_m` along its layer's axis since the last look:
        the moves after keep clear of where it now sticks out."""
        seen = self.obs.block_at(*source) if self.obs is not None else None
        self.planner.block_moved(source, (seen.protrusion if seen else 0.0) + by_m)

    def _push_plan(self, source: Slot, end: int, protrusion: float, guard_n: float) -> MotionPlan:
        """A slow guarded push on the block's `end` face, planned so that it may go on through: to
        PROBE_DEPTH inside the tower's face, or past the face if it stands deeper in already (a
        block out at the other end). Planned to the face's plane, the push on a face 7 mm in had
        no length and one 9 mm in went backwards; its withdrawal then found no way back, the
        fingertip stayed in the tower, and no later plan could start (seed-12 game, turn 13)."""
        depth = PROBE_DEPTH + max(0.0, -protrusion)
        return self.planner.push(self.moves.q(), *source, depth, tower_layers=self.layers,
                                 end=end, protrusion=protrusion, speed=PROBE_SPEED,
                                 guard_n=guard_n, retreat=False, through=PUSH_THROUGH,
                                 **seen_offset(self.planner.tower, self.obs, source))

    def _follow_recording(self, step: MoveStep, axis, during=None) -> tuple[MotionResult, Trace]:
        """Run a move and record the wrist force along `axis` (tool coordinates) while it runs:
        (device time, N) for every telemetry frame. `during`: as for `ArmMoves.follow`."""
        axis = np.asarray(axis, float)
        result, samples = self._follow_sampled(step, during)
        return result, [(t, float(w[:3] @ axis)) for t, w in samples]

    def _follow_sampled(self, step: MoveStep, during=None) -> tuple[MotionResult, list]:
        """Run a move; how it ended and the wrist's readings while it ran: (device time, wrench
        in tool coordinates) for every telemetry frame."""
        self.link.forces.start()
        try:
            result = self.moves.follow(step, during)
        finally:
            samples = self.link.forces.stop()
        return result, samples

    def _block_travel(self, frame: str, source: Slot, end: int, protrusion: float,
                      force_n: float) -> float:
        """How far the fingertip has pushed the block in from its `end` face (m): the tip's travel
        past where the face was, less the fingertip's spring under `force_n`."""
        layer, slot = source
        tip = self.planner.arm.fk(np.array(self.arm.telemetry().q_set), frame).t
        face = self.planner.tower.end_face_centre(layer, slot, end, protrusion)
        direction = -end * self.planner.tower.axis(layer)
        past_face = float((tip - face) @ direction) + self.planner.cell.tool.fingertip_radius
        return max(0.0, past_face - self._tip_give(force_n))

    def _tip_give(self, force_n: float) -> float:
        """How far (m) the sprung fingertip gives under `force_n` pressing on it."""
        return max(force_n, 0.0) / self.stiffness

    def _retreat(self, push_plan: MotionPlan, label: str = "retreat", prefix: str = "",
                 gentle: bool = False, pushed_on: JointTrajectory | None = None) -> None:
        """Straight back out along a push, from wherever it stopped to where its approach began
        (`prefix`: the push's steps are named so inside a bigger plan, as `align_`), at the free
        pace unless `gentle`; where no straight move out can be planned, back along the way in.
        `pushed_on`: the straight move that went on from where the push stopped (a
        push-through), if one did: part of the way in."""
        direction = self.moves.push_direction(push_plan, prefix)
        began = self.planner.arm.fk(push_plan.step(prefix + "approach").trajectory.start,
                                    push_plan.frame).t
        # once more if the first did not get there: in a seed-3 game a withdrawal from a probe
        # ended 8 ms after it began, the fingertip still 6 mm in the tower, and no transit could
        # start from there
        for _ in range(RETREAT_TRIES):
            here = self.planner.arm.fk(self.moves.q(), push_plan.frame).t
            back = float((here - began) @ direction)
            if back < RETREAT_THERE_M:
                return
            try:
                plan = self.planner.straight(self.moves.q(), push_plan.frame, -direction * back,
                                             tower_layers=self.layers, exempt=("probe",),
                                             label=label, **retreat_pace(gentle))
            except PlanError as exc:
                # In a seed-2 game no straight retreat could be planned from where a probe of
                # layer 3 stopped (a joint's jump), and the game stopped. Whatever the reason (a
                # jump, a contact, no inverse kinematics), the way in was planned and run.
                came_by = (push_plan.step(prefix + "approach").trajectory,
                           push_plan.step(prefix + "push").trajectory)
                try:
                    plan = retrace(self.planner, self.moves.q(), push_plan.frame,
                                   came_by + ((pushed_on,) if pushed_on else ()), direction,
                                   tower_layers=self.layers, exempt=("probe",), label=label,
                                   **retreat_pace(gentle))
                except PlanError as retrace_exc:
                    raise PlanError(f"{exc}; {retrace_exc}") from None
            self.moves.run(plan)

    def clear(self) -> None:
        self.moves.transit(self.planner.arm.home, self.layers + 1)


def arm_player(link: CellLink, options: RuleOptions = RuleOptions(), policy: Policy | None = None,
               planner: MotionPlanner | None = None) -> Player:
    """The robot as a game's player, its turns carried out by the arm."""
    hands = ArmHands(link, planner or MotionPlanner(link.cell))
    return Player(hands, BlockDims.of(link.cell.blocks), options, policy)
