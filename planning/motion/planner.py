"""Motion plans for every move the robot makes at the tower: push, pull, place and transit.

- push: fingertip on a block's end face, straight along the block axis to a given depth (the last
  leg under a force guard), then straight back out.
- pull: open, approach the protruding end on the far face, close, pull straight out.
- place: hover above a slot of the top layer holding the block by one end, slow guarded descent,
  release, retreat, then push the block home (it is set down overhanging by `PLACE_OVERHANG` so the
  fingers never come over the layer's other blocks); or, into a slot with no neighbour beside it,
  set down home with no push.
- transit: joint space, every part of the arm and tool out of the keep-out box around the tower and
  off the table.

Each begins at the joints the arm is at (`q_start`), so a plan can be run as it comes.
"""

from __future__ import annotations

import functools
from contextlib import contextmanager
from dataclasses import dataclass, replace

import numpy as np

from planning.game.cell.model import Cell
from planning.collision import TABLE_MARGIN, CollisionChecker, describe
from planning.kinematics import ArmModel, HeldBlock, IKError
from planning.motion import tool_poses
from planning.motion.paces import (APPROACH_SPEED, FREE_ACCEL, LINE_ACCEL, LINE_STEP,
                                   PLACE_SLOW_SPEED, PLACE_SPEED, PULL_SPEED, PLACE_FEEL_SPEED,
                                   PUSH_HOME_SPEED, guarded_pace, ramped_durations, retreat_pace)
from planning.motion.contact_geometry import (BESIDE_CLEARANCE, CONTACT_LEAD, CONTACT_MARGIN,
                                              DIRECT_FINGER_MARGIN, FINGER_MARGIN, GRASP_RAISES,
                                              GRIP_DEPTH, MAX_JOINT_STEP, PLACE_GUARD_N,
                                              PLACE_HOVER, PLACE_OVERHANG, PLACE_PRESS, PLACE_SLOW,
                                              PROBE_TABLE_CLEARANCE, PULL_CLEARANCE, PULL_GRIP_N,
                                              SQUEEZE_INSIDE, STANDOFF, TRANSIT_MARGIN)
from planning.motion.plans import ForceGuard, GripStep, MotionPlan, MoveStep, PlanError
from planning.motion.transit import transit_between
from planning.motion.trajectory import JointTrajectory, TrajectoryError, time_path
from planning.game.geometry import TowerGeometry

@dataclass(frozen=True)
class _Contact:
    """How the arm may touch the tower during one leg of a plan."""

    tower_layers: float
    margin: float
    exempt: tuple[str, ...] = ()
    held: HeldBlock | None = None
    fine_margin: float | None = FINGER_MARGIN
    every_block: bool = False    # the worked blocks' sticking-out parts too (transit paths)
    table_margin: float | None = None   # every part at least this far from the table


def _works_block(plan):
    """A plan for a move that works the block at (layer, slot), its arguments after the start
    joints: the tool may go where that block sticks out."""
    @functools.wraps(plan)
    def planned(self, q_start, layer, slot, *args, **kwargs):
        with self.working_on(layer, slot):
            return plan(self, q_start, layer, slot, *args, **kwargs)
    return planned


class MotionPlanner:
    """Plans against the cell's nominal geometry; measured block offsets come in as arguments."""

    def __init__(self, cell: Cell, arm: ArmModel | None = None):
        self.cell = cell
        self.arm = arm or ArmModel(cell)
        self.tower = TowerGeometry.from_cell(cell)
        self.sticking_out: dict[tuple[int, int], float] = {}
        self._working: list[tuple[int, int]] = []
        self._checker()
        self.level_grip = self.held_block((0.0, 0.0, 1.0))
        self.limits = (self.arm.q_min, self.arm.q_max, self.cell.arm.speed_max)

    def set_tower(self, tower: TowerGeometry,
                  sticking_out: dict[tuple[int, int], float] | None = None) -> None:
        """Plan against the tower where it really stands (as perceived), not the nominal one, and
        the blocks that stick out of it (`sticking_out`: along each one's layer axis, m), which
        every move keeps clear of but those that work that block (`working_on`)."""
        self.tower = tower
        self.sticking_out = dict(sticking_out or {})
        self._checker()

    def block_moved(self, slot: tuple[int, int], protrusion: float) -> None:
        """A move put the block at `slot` `protrusion` out along its layer's axis (m; 0: home)
        since the tower was last seen."""
        self.sticking_out[slot] = protrusion
        self._checker()

    @contextmanager
    def working_on(self, layer: int, slot: int):
        """Plans, while in this, for moves that work the block at (layer, slot): the tool may go
        where it sticks out (the fingertip pushes it, the fingers close on it, back off it)."""
        self._working.append((layer, slot))
        self._checker()
        try:
            yield
        finally:
            self._working.pop()
            self._checker()

    def _checker(self) -> None:
        self._every_block = CollisionChecker(self.arm, self.tower, self.sticking_out)
        self.checker = self._every_block if not self._working else CollisionChecker(
            self.arm, self.tower,
            {k: v for k, v in self.sticking_out.items() if k not in self._working})

    def straight(self, q_start: np.ndarray, frame: str, displacement: np.ndarray, *,
                 tower_layers: float, speed: float = APPROACH_SPEED, exempt: tuple[str, ...] = (),
                 held: HeldBlock | None = None, label: str = "straight",
                 accel: float = LINE_ACCEL, step: float = LINE_STEP,
                 decel: float | None = None) -> MotionPlan:
        """Move `frame` by `displacement` (world, m) in a straight line at fixed orientation, from
        wherever the arm is (a retreat after a guarded stop, a lift), at `speed`, speeding up at
        `accel` and slowing down at `decel` (default `accel`), sampled every `step`."""
        q_start = np.asarray(q_start, float)
        pose = self.arm.fk(q_start, frame)
        start = pose.t
        contact = _Contact(tower_layers, CONTACT_MARGIN, exempt=exempt, held=held)
        try:
            line = self._line(pose.R, start, start + np.asarray(displacement, float), frame, q_start,
                              speed, contact, accel, step, decel)
        except PlanError as exc:
            raise PlanError(f"cannot plan the straight move '{label}': {exc}") from None
        return MotionPlan("straight", (MoveStep(label, line),), held=held)

    # --- push ---------------------------------------------------------------------------------

    @_works_block
    def push(self, q_start: np.ndarray, layer: int, slot: int, depth: float, *, tower_layers: int,
             end: int | None = None, protrusion: float = 0.0, speed: float = 0.002,
             guard_n: float | None = None, retreat: bool = True, shift: float = 0.0,
             rise: float = 0.0, through: float = 0.0, gentle_approach: bool = False,
             gentle_retreat: bool = False) -> MotionPlan:
        """Push the block at (layer, slot) from its `end` face (default: the back end, away from
        the arm) until that face is `depth` inside the tower's face plane. `protrusion` is how far
        the face sticks out now (measured), `shift` how far the block lies across the layer from
        its slot's centre and `rise` how far above its layer's nominal height. The guarded leg runs at
        `speed`. `through`: the tool must be able to
        go on that much further in a straight line (a probe whose block may then be pushed
        through picks a tool pose that allows it). The approach and the retreat run at the free
        pace, or the gentle one if `gentle_approach` (a face whose place is only estimated) or
        `gentle_retreat`."""
        end = -self.tower.front_end(layer) if end is None else end
        axis = self.tower.axis(layer)
        direction = -end * axis  # into the tower
        face = self.tower.end_face_centre(layer, slot, end, protrusion, shift, rise)
        face[2] = max(face[2], self.cell.tool.fingertip_radius + PROBE_TABLE_CLEARANCE)
        # The fingertip frame is the centre of the rod's rounded end: it stops one radius short
        # of whatever the tip's surface must reach (without this every approach ended pressed
        # 2 mm into the block, and the tare before the push took that preload for zero).
        face = face - direction * self.cell.tool.fingertip_radius
        start = face - direction * STANDOFF
        touch = face - direction * CONTACT_LEAD
        finish = face + direction * (depth + protrusion)
        work = _Contact(tower_layers, CONTACT_MARGIN, exempt=("probe",))
        errors = []
        what = f"cannot push layer {layer} slot {slot} from its {'+' if end > 0 else '-'} end"
        if depth + protrusion < 0.0:
            raise PlanError(f"{what}: its face stands {-protrusion * 1000:.1f} mm in, already "
                            f"past the push's end {depth * 1000:.1f} mm in")
        try:
            candidates = self._push_candidates(q_start, direction, start, work)
        except PlanError as exc:
            raise PlanError(f"{what}: {exc}") from None
        for tip, rotation, q in candidates:
            sign = 1.0 if self.arm.frames[tip].t[0] > 0 else -1.0
            try:
                # unguarded, it ends CONTACT_LEAD short of the face
                approach = self._line(rotation, start, touch, tip, q, contact=work,
                                      **retreat_pace(gentle_approach))
                pushing = self._line(rotation, touch, finish, tip, approach.end, speed, work,
                                     **guarded_pace(guard_n))
                if through > 0:
                    self._line(rotation, finish, finish + direction * through, tip, pushing.end,
                               speed, work)
                steps = [MoveStep("transit", self._transit(q_start, approach.start, tower_layers)),
                         MoveStep("approach", approach),
                         MoveStep("push", pushing, self._guard(guard_n, (-sign, 0.0, 0.0)))]
                if retreat:
                    back = self._line(rotation, finish, start, tip, pushing.end, contact=work,
                                      **retreat_pace(gentle_retreat))
                    steps.append(MoveStep("retreat", back))
                return MotionPlan("push", tuple(steps), frame=tip)
            except PlanError as exc:
                errors.append(str(exc))
        raise PlanError(f"{what}: {_main_reason(errors)}")

    # --- pull ---------------------------------------------------------------------------------

    @_works_block
    def pull(self, q_start: np.ndarray, layer: int, slot: int, protrusion: float, *,
             tower_layers: int, end: int | None = None, shift: float = 0.0,
             rise: float = 0.0, guard_n: float | None = None) -> MotionPlan:
        """Grasp the block at (layer, slot) by its `end` (default: the front end), which sticks
        `protrusion` out of the tower, and pull it straight out until it is clear of the tower.
        `shift` and `rise`: where the block lies from its slot's nominal centre (across, up); the
        fingers must close centred on it, or the first pad to touch levers the block sideways
        into its neighbour and the pull drags the neighbour out with it. `guard_n`: the approach
        stops at this force against it (a finger meeting the block instead of passing beside it).
        The fingers close lightly (PULL_GRIP_N) for the "pull", squeeze at the full grip force
        while SQUEEZE_INSIDE of the block still rests in the tower, and draw it clear ("pull_out")."""
        end = self.tower.front_end(layer) if end is None else end
        axis = self.tower.axis(layer)
        into = -end * axis
        face = self.tower.end_face_centre(layer, slot, end, protrusion, shift, rise)
        reach = _Contact(tower_layers, CONTACT_MARGIN)
        errors = []
        what = f"cannot pull layer {layer} slot {slot} from its {'+' if end > 0 else '-'} end"
        try:
            candidates = self._grasp_candidates(q_start, face, into, reach)
        except PlanError as exc:
            raise PlanError(f"{what}: {exc}") from None
        for rotation, q, raise_by in candidates:
            grasp = face + into * GRIP_DEPTH + np.array([0.0, 0.0, raise_by])
            before = grasp - into * (STANDOFF + 0.01)
            inside = self.cell.blocks.length.mean - protrusion
            squeeze_at = grasp - into * max(inside - SQUEEZE_INSIDE, 0.0)
            out = grasp - into * (inside + PULL_CLEARANCE)
            held = self.held_block(rotation.T @ into, raise_by)
            holding = _Contact(tower_layers, CONTACT_MARGIN, exempt=("held",), held=held)
            try:
                approach = self._line(rotation, before, grasp, "grasp", q, APPROACH_SPEED, reach)
                pulling = self._line(rotation, grasp, squeeze_at, "grasp", approach.end, PULL_SPEED,
                                     holding)
                drawing = self._line(rotation, squeeze_at, out, "grasp", pulling.end, PULL_SPEED,
                                     holding)
                return MotionPlan("pull", (
                    MoveStep("transit", self._transit(q_start, approach.start, tower_layers)),
                    GripStep("open", self.cell.tool.stroke, 0.0),
                    MoveStep("approach", approach,
                             self._guard(guard_n, tuple(float(v) for v in rotation.T @ -into))),
                    GripStep("close", 0.0, PULL_GRIP_N),
                    MoveStep("pull", pulling),
                    GripStep("squeeze", 0.0, self.cell.tool.grip_force),
                    MoveStep("pull_out", drawing),
                ), held=held, frame="grasp")
            except PlanError as exc:
                errors.append(str(exc))
        raise PlanError(f"{what}: {_main_reason(errors)}")

    # --- place --------------------------------------------------------------------------------

    def place(self, q_start: np.ndarray, layer: int, slot: int, held: HeldBlock | None = None, *,
              align: bool = True, shift: float = 0.0, guard_n: float = PLACE_GUARD_N,
              align_guard_n: float = 2 * PLACE_GUARD_N, ends: tuple[int, ...] = (1, -1),
              beside: bool = False, rise: float = 0.0,
              overhang: float = PLACE_OVERHANG) -> MotionPlan:
        """Put the block held as `held` (from the pull plan; default a level grip) into `slot` of
        `layer` (the top layer, or a new one above it), `shift` across the layer from the slot's
        centre (clear of a neighbour that lies off its own centre). It is set down overhanging
        one of `ends` (+1, -1 along the layer's axis; the one facing the arm first). `guard_n`
        stops the descent onto the tower, `align_guard_n` the push home. `beside`: blocks already
        lie in the layer; the descent is guarded from above their tops ("settle" then starts at
        PLACE_FEEL_SPEED and slows for its last PLACE_SLOW). `rise`: how far above its nominal
        height the block will rest (the layer below as measured). `overhang` 0 sets the block down
        home, with no push home (`align` is then ignored): only for a slot whose neighbours in the
        layer are both empty (the fingers stand in their slots) and a block held level (tilted
        fingers reach into the layer below); the fingers pass DIRECT_FINGER_MARGIN over the layer
        below."""
        held = held or self.level_grip
        direct = overhang <= 0.0
        # Home, the fingers stand over the layer below and in the neighbours' (empty) slots; that
        # layer's top is where it was measured (`rise`): a tall tower's top layers sit lower than
        # nominal, and a box at the nominal height refused every set-down home at layers 22-23 of
        # a seed-2 game.
        keep_out, finger_margin = ((layer - 1 + rise / self.tower.layer_pitch, DIRECT_FINGER_MARGIN)
                                   if direct else (layer, FINGER_MARGIN))
        axis = self.tower.axis(layer)
        errors = []
        front = self.tower.front_end(layer)
        for end in (e for e in (front, -front) if e in ends):
            into = -end * axis
            centre = (self.tower.block_pose(layer, slot).t + end * axis * overhang
                      + self.tower.across(layer) * shift + np.array([0.0, 0.0, rise]))
            grasp = centre + end * axis * (self.cell.blocks.length.mean / 2 - GRIP_DEPTH)
            rest = grasp + np.array([0.0, 0.0, 0.0005])
            hover = rest + np.array([0.0, 0.0, PLACE_HOVER])
            # a block held above its centre line hangs lower: the slow part starts that much higher
            slow = rest + np.array([0.0, 0.0, PLACE_SLOW + held.raised])
            above = self.cell.blocks.height.mean + BESIDE_CLEARANCE if beside else 0.0
            feel = slow + np.array([0.0, 0.0, above])
            carry = _Contact(keep_out, CONTACT_MARGIN, exempt=("held",), held=held,
                             fine_margin=finger_margin)
            free = _Contact(keep_out, CONTACT_MARGIN, fine_margin=finger_margin)
            rotations = tool_poses.holding_orientations(into, np.asarray(held.direction))
            try:
                candidates = self._by_distance(q_start, "grasp", rotations, hover, carry)
            except PlanError as exc:
                errors.append(str(exc))
                continue
            for rotation, q in candidates:
                try:
                    down = self._line(rotation, hover, feel, "grasp", q, PLACE_SPEED, carry,
                                      FREE_ACCEL)
                    # The guarded descent aims a little below the nominal surface, since the real
                    # one varies with the blocks; the guard stops it on contact.
                    down_to = rest - np.array([0.0, 0.0, PLACE_PRESS])
                    past = None
                    if beside:
                        past = self._line(rotation, feel, slow, "grasp", down.end, PLACE_FEEL_SPEED,
                                          carry)
                    settle = self._line(rotation, slow, down_to, "grasp",
                                        (down if past is None else past).end, PLACE_SLOW_SPEED, carry)
                    if past is not None:
                        settle = past.then(settle)
                    # the open fingers leave the block's end backward and upward in one move
                    backed = down_to - into * (STANDOFF + 0.01) + np.array([0.0, 0.0, 0.03])
                    away = self._line(rotation, down_to, backed, "grasp", settle.end, contact=free,
                                      **retreat_pace(gentle=False))
                    steps = [MoveStep("transit", self._transit(q_start, down.start, layer, held)),
                             MoveStep("descend", down),
                             MoveStep("settle", settle, self._guard(guard_n, (0.0, 0.0, 0.0),
                                                                    world_up=rotation)),
                             GripStep("release", self.cell.tool.stroke, 0.0),
                             MoveStep("back_off", away)]
                    plan = MotionPlan("place", tuple(steps))
                    if align and not direct:
                        home = self.push(away.end, layer, slot, 0.0, tower_layers=layer, end=end,
                                         protrusion=overhang, speed=PUSH_HOME_SPEED,
                                         guard_n=align_guard_n, shift=shift, rise=rise,
                                         gentle_retreat=True)
                        plan = MotionPlan("place", plan.steps + tuple(
                            _relabel(s, "align_") for s in home.steps), frame=home.frame)
                    return plan
                except PlanError as exc:
                    errors.append(str(exc))
        if not errors:
            raise PlanError(f"cannot place on layer {layer} slot {slot}: no end to set it down by")
        raise PlanError(f"cannot place on layer {layer} slot {slot}: {_main_reason(errors)}")

    # --- transit ------------------------------------------------------------------------------

    def transit(self, q_start: np.ndarray, q_goal: np.ndarray, *, tower_layers: float,
                held: HeldBlock | None = None) -> MotionPlan:
        """Joint-space move with every link (and a held block) out of the tower's keep-out box and
        off the table."""
        return MotionPlan("transit", (MoveStep("transit", self._transit(q_start, q_goal, tower_layers,
                                                                        held)),), held=held)

    def held_block(self, direction, raised: float = 0.0) -> HeldBlock:
        """The block as gripped GRIP_DEPTH from its end, its axis along `direction` (grasp frame),
        `raised` above its centre line."""
        b = self.cell.blocks
        d = np.asarray(direction, float)
        return HeldBlock(tuple(d / np.linalg.norm(d)), behind=GRIP_DEPTH,
                         ahead=b.length.mean - GRIP_DEPTH - 0.002, radius=b.height.mean / 2,
                         raised=raised)

    def _transit(self, q_start, q_goal, tower_layers, held=None) -> JointTrajectory:
        # Clear of every block that sticks out, the worked one too, and off the table by the big
        # parts' margin (a finger's box reaches 6 mm past its capsule: 2 mm off, a transit of
        # tower 13 hit it at 343 N); near its ends, to the margins the ends keep.
        wide = _Contact(tower_layers, TRANSIT_MARGIN, held=held, fine_margin=None,
                        every_block=True, table_margin=TABLE_MARGIN)
        close = _Contact(tower_layers, CONTACT_MARGIN, held=held)
        return transit_between(self, q_start, q_goal, tower_layers, held, wide, close)

    # --- building blocks ----------------------------------------------------------------------

    def _grasp_candidates(self, q_start, face, into, contact):
        """(rotation, joints, raise) for grasps of a block whose end face is at `face`: level and
        pitched approaches, the nearest first; at layer 1 the pitched fingers reach the table, so
        the grasp may also ride up the block by GRASP_RAISES, still holding it over most of its
        height. Level grasps are not preferred, though a block held level can be set down home
        (`place` with no overhang): with them first, three whole games ended early on pulls from
        layers 14-18 that dragged the layers above; seed 3 again with the nearest grasp ended the
        same way, so the grasp was not shown to be the cause, and the nearest, played in every
        game before, is kept until more games say otherwise (docs/benchmarks.md, 2026-12-04)."""
        found = []
        for raise_by in GRASP_RAISES:
            before = face + into * (GRIP_DEPTH - STANDOFF - 0.01) + np.array([0.0, 0.0, raise_by])
            try:
                found += [(r, q, raise_by) for r, q in self._by_distance(
                    q_start, "grasp", tool_poses.grasp_orientations(into), before, contact)]
            except PlanError:
                continue
        if not found:
            raise PlanError(f"no collision-free joint configuration grasps the block end at "
                            f"({face[0]:.3f}, {face[1]:.3f}, {face[2]:.3f}) m")
        return found

    def _push_candidates(self, q_start, direction, position, contact):
        """(tip frame, rotation, joints) for every fingertip and roll, nearest first."""
        found = []
        for tip in self.arm.fingertip_frames:
            sign = 1.0 if self.arm.frames[tip].t[0] > 0 else -1.0
            try:
                found += [(tip, r, q) for r, q in self._by_distance(
                    q_start, tip, tool_poses.push_orientations(direction, sign), position, contact)]
            except PlanError:
                continue
        if not found:
            p = position
            raise PlanError(f"no collision-free joint configuration puts a fingertip at "
                            f"({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}) m")
        return sorted(found, key=lambda c: float(np.max(np.abs(c[2] - q_start))))

    def _by_distance(self, q_start, frame, rotations, position, contact):
        """(rotation, joints) for every collision-free configuration (each IK branch found) of
        each candidate rotation that reaches `position`, the nearest to `q_start` first: a plan
        that fails from one branch may succeed from another."""
        found = []
        for rotation in rotations:
            target = tool_poses.pose(rotation, position)
            try:
                branches = self.arm.ik_all(target, frame, q_start,
                                           accept_many=lambda qs: self._clear_many(qs, contact))
            except IKError:
                continue
            found += [(rotation, q) for q in branches]
        if not found:
            p = position
            raise PlanError(f"no collision-free joint configuration puts the {frame} at "
                            f"({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}) m")
        return sorted(found, key=lambda c: float(np.max(np.abs(c[1] - q_start))))

    def _line(self, rotation, a, b, frame, q_seed, speed, contact, accel=LINE_ACCEL,
              step=LINE_STEP, decel=None) -> JointTrajectory:
        """A straight tool move from a to b at constant orientation, sampled every `step`, at
        `speed`, speeding up at `accel` and slowing down at `decel` (default `accel`)."""
        rotation = np.asarray(rotation)
        length = float(np.linalg.norm(b - a))
        n = max(1, int(np.ceil(length / step)))
        qs = [np.asarray(q_seed, float)]
        stopped = None                 # why the line cannot go on past the samples in qs
        for i in range(n + 1):
            target = tool_poses.pose(rotation, a + (b - a) * (i / n))
            try:
                q = self.arm.ik(target, frame, qs[-1], extra_seeds=0)
            except IKError as exc:
                stopped = str(exc)
                break
            if np.max(np.abs(q - qs[-1])) > MAX_JOINT_STEP:
                stopped = "the straight move passes a singularity or a joint limit"
                break
            qs.append(q)
        # The samples reached are checked together; the first one in contact is the reason,
        # before any reason further along.
        self._refuse_contacts(np.array(qs[1:]).reshape(-1, len(q_seed)), contact)
        if stopped is not None:
            raise PlanError(stopped)
        waypoints = np.array(qs[1:])
        if len(waypoints) < 2:
            waypoints = np.vstack([waypoints, waypoints])
        return self.timed(waypoints, 1.0, ramped_durations(length, n, speed, accel, decel))

    def timed(self, waypoints, speed_scale, min_durations=None) -> JointTrajectory:
        arm = self.cell.arm
        traj = time_path(waypoints, arm.speed_max, arm.accel_max, speed_scale, min_durations)
        try:
            traj.check(*self.limits)
        except TrajectoryError as exc:
            raise PlanError(str(exc)) from None
        return traj

    def refuse_contacts_at_work(self, qs: np.ndarray, tower_layers: float,
                                exempt: tuple[str, ...] = ()) -> None:
        """PlanError naming the first of `qs` that comes nearer the tower than the tool at work
        may (CONTACT_MARGIN; `exempt` parts may touch it), if any does."""
        self._refuse_contacts(qs, _Contact(tower_layers, CONTACT_MARGIN, exempt=exempt))

    def _refuse_contacts(self, qs: np.ndarray, contact: _Contact) -> None:
        """PlanError naming the first of the joint configurations `qs` in contact, if any is."""
        if not len(qs):
            return
        clear = self._clear_many(qs, contact)
        if not clear.all():
            raise PlanError(describe(self.checker.contacts(
                qs[int(np.argmin(clear))], contact.tower_layers, contact.margin, contact.exempt,
                contact.held, contact.fine_margin, contact.table_margin)))

    def _clear(self, q, contact: _Contact) -> bool:
        return self.checker.is_clear(q, contact.tower_layers, contact.margin, contact.exempt,
                                     contact.held, contact.fine_margin, contact.table_margin)

    def _clear_many(self, qs, contact: _Contact) -> np.ndarray:
        checker = self._every_block if contact.every_block else self.checker
        return checker.clear_many(qs, contact.tower_layers, contact.margin, contact.exempt,
                                       contact.held, contact.fine_margin, contact.table_margin)

    @staticmethod
    def _guard(threshold_n, direction, world_up=None) -> ForceGuard | None:
        if threshold_n is None:
            return None
        if world_up is not None:
            # Guard against the table's reaction: straight up in the world, in tool coordinates.
            direction = tuple(float(v) for v in np.asarray(world_up).T @ np.array([0.0, 0.0, 1.0]))
        return ForceGuard(direction, float(threshold_n))


def _relabel(step, prefix):
    return replace(step, label=prefix + step.label)


def _main_reason(errors: list[str]) -> str:
    return max(set(errors), key=errors.count) if errors else "no candidate tool orientation"
