"""Surprises on demand: what a real cell does to a turn that a model does not foresee, made to
happen in the simulated cell for tests and benchmarks (`jenga-robot bench --suite surprises`).
They come through the camera server's actions (`/surprise`, what happened in `/surprises.json`),
which only tests and benchmarks call: the controller sees their effects through its cameras and
its wrist, as it would see a real cell's, and never hears of them.

Each kind is asked for at a moment of the turn (the bench knows the turn's phases; the cell does
not) and happens either at once or when the cell sees its moment come (a block held in the
fingers, a pushed-out block with the fingers on their way to it). The sizes are the ones the
turn's history met in the simulated cell (docs/benchmarks.md) and that a bumped table or a
person's hand make: a few millimetres, a second or two.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

import mujoco
import numpy as np

from hardware.sim.ground_truth import GroundTruth
from hardware.sim.world import SimWorld


class Kind(StrEnum):
    NUDGE = "nudge"                  # the pushed-out block shifted across as the fingers come
    BUMP = "bump"                    # the table bumped: a block of the tower shifted along
    FREEZE = "camera-freeze"         # a camera repeats one picture (its clock goes on)
    DROP = "camera-drop"             # a camera sends nothing
    SLIP = "slip"                    # the drawn block slides back in the fingers
    RIDER = "rider"                  # the block across the drawn one's end comes along
    OCCLUDE = "occlusion"            # a hand between a camera and the tower
    LIGHT = "light"                  # the room's light dims
    LANDING = "landing"              # a top-layer block turned in the set-down's way


# The turn's phase (controller/turn/report.py Phase) at which the bench asks for each kind, and
# in which turn of a game from a fresh tower: a set-down beside a block needs an unfinished top.
PHASE = {Kind.NUDGE: "probe", Kind.BUMP: "probe", Kind.FREEZE: "perceive", Kind.DROP: "perceive",
         Kind.SLIP: "pull", Kind.RIDER: "pull", Kind.OCCLUDE: "perceive", Kind.LIGHT: "perceive",
         Kind.LANDING: "place"}
TURN = {kind: 2 if kind is Kind.LANDING else 1 for kind in Kind}

NUDGE_M = 0.004          # across: the seed-2 grasp met a block 3-4 mm off where it was seen
BUMP_M = 0.004
SLIP_M = 0.003
RIDER_M = 0.004          # seed 3: a rider had gone 3-4 mm by 6 mm of pull
LANDING_M = 0.005        # how far a turned top block's ends reach across
GLITCH_S = 1.0           # a camera frozen or dropped, the light dimmed (world s)
OCCLUDE_S = 2.0
LIGHT_SCALE = 0.4
PUSHED_OUT_M = 0.015     # a block this far out along its axis has been pushed through
NEAR_M = 0.06            # the grasp site this near a pushed-out block's end: the fingers come
DRAWN_M = 0.006          # a held block drawn this far since the pull began: it is under way
CHECK_EVERY = 10         # physics steps between looks for a pending surprise's moment (1 kHz)
WAIT_S = 120.0           # a surprise whose moment has not come in this much world time lapses


@dataclass
class Event:
    kind: Kind
    asked_t: float
    done_t: float | None = None      # world time it happened (None: its moment never came)
    what: str = ""

    def to_json(self) -> dict:
        return {"kind": str(self.kind), "asked_t": self.asked_t, "done_t": self.done_t,
                "what": self.what}


@dataclass
class Glitch:
    """What the cameras suffer now (read by the camera server, world time)."""
    frozen: dict[str, float] = field(default_factory=dict)    # camera: until
    dropped: dict[str, float] = field(default_factory=dict)
    dim_until: float = -1.0

    def light(self, t: float) -> float:
        return LIGHT_SCALE if t < self.dim_until else 1.0


class Surprises:
    """The surprises asked of one simulated cell; `step` runs between physics steps."""

    def __init__(self, world: SimWorld, truth: GroundTruth, person, cameras: list[str],
                 seed: int = 1):
        self.world, self.truth, self.person = world, truth, person
        self.cameras = cameras
        self.rng = np.random.default_rng(seed + 104_729)
        self.glitch = Glitch()
        self.events: list[Event] = []
        self._pending: list[Event] = []
        self._start: dict[int, np.ndarray] = {}    # block centres (world) when the last was asked
        self._occluding_until: float | None = None
        self._steps = 0
        m = world.model
        self._grasp = m.site("grasp").id

    # --- asked for ----------------------------------------------------------------------------

    def ask(self, kind: str) -> dict:
        if kind not in set(Kind):
            raise ValueError(f"unknown surprise {kind!r}; known: {', '.join(Kind)}")
        event = Event(Kind(kind), self.world.time)
        self.events.append(event)
        self._start = {b.index: self.world.data.xpos[self.world.block_body[b.index]].copy()
                       for b in self.world.blocks}
        if event.kind in (Kind.NUDGE, Kind.SLIP, Kind.RIDER):
            self._pending.append(event)
        else:
            self._now(event)
        return event.to_json()

    def to_json(self) -> dict:
        return {"events": [e.to_json() for e in self.events]}

    def _now(self, event: Event) -> None:
        t = self.world.time
        kind = event.kind
        if kind is Kind.BUMP:
            block = self._bumped_block()
            if block is not None:
                along = self._axis(block) * self.rng.choice([-1.0, 1.0])
                self._shift(block, along * BUMP_M)
                self._done(event, f"block {block} shifted {BUMP_M * 1000:.0f} mm along its axis")
        elif kind in (Kind.FREEZE, Kind.DROP):
            camera = str(self.rng.choice(self.cameras))
            (self.glitch.frozen if kind is Kind.FREEZE else self.glitch.dropped)[camera] = \
                t + GLITCH_S
            self._done(event, f"camera {camera} for {GLITCH_S:g} s")
        elif kind is Kind.LIGHT:
            self.glitch.dim_until = t + GLITCH_S
            self._done(event, f"light at {LIGHT_SCALE:.0%} for {GLITCH_S:g} s")
        elif kind is Kind.OCCLUDE:
            camera = str(self.rng.choice(self.cameras))
            self._occlude(camera)
            self._done(event, f"a hand before camera {camera} for {OCCLUDE_S:g} s")
        elif kind is Kind.LANDING:
            turned = self._turn_top_block()
            if turned:
                self._done(event, turned)

    def _done(self, event: Event, what: str) -> None:
        event.done_t, event.what = self.world.time, what

    # --- between steps ------------------------------------------------------------------------

    def step(self) -> None:
        t = self.world.time
        if self._occluding_until is not None and t >= self._occluding_until:
            self.person.park()
            self._occluding_until = None
        self._steps += 1
        if not self._pending or self._steps % CHECK_EVERY:
            return
        for event in list(self._pending):
            if t - event.asked_t > WAIT_S:
                self._pending.remove(event)
            elif self._when_due(event):
                self._pending.remove(event)

    def _when_due(self, event: Event) -> bool:
        if event.kind is Kind.NUDGE:
            block = self._pushed_out_near_fingers()
            if block is None:
                return False
            across = np.cross([0.0, 0.0, 1.0], self._axis(block)) * self.rng.choice([-1.0, 1.0])
            self._shift(block, across * NUDGE_M)
            self._done(event, f"block {block} shifted {NUDGE_M * 1000:.0f} mm across as the "
                              f"fingers came")
            return True
        held = self._held_drawn()
        if held is None:
            return False
        block, out = held
        if event.kind is Kind.SLIP:
            self._shift(block, -out * SLIP_M)
            self._done(event, f"block {block} slid {SLIP_M * 1000:.0f} mm back in the fingers")
            return True
        rider = self._rider(block, out)
        if rider is None:
            event.what = "no block lies across the drawn one's end"
            return True
        self._shift(rider, out * RIDER_M)
        self._done(event, f"block {rider} came {RIDER_M * 1000:.0f} mm along with block {block}")
        return True

    # --- the world ----------------------------------------------------------------------------

    def _centre(self, block: int) -> np.ndarray:
        return self.world.data.xpos[self.world.block_body[block]].copy()

    def _axis(self, block: int) -> np.ndarray:
        axis = self.world.data.xmat[self.world.block_body[block]].reshape(3, 3)[:, 0].copy()
        axis[2] = 0.0
        return axis / np.linalg.norm(axis)

    def _shift(self, block: int, delta: np.ndarray) -> None:
        """Move a block by `delta` (world, m), at rest: as if a hand or a bump had moved it."""
        m, d = self.world.model, self.world.data
        body = self.world.block_body[block]
        joint = m.body_jntadr[body]
        q, v = m.jnt_qposadr[joint], m.jnt_dofadr[joint]
        d.qpos[q:q + 3] += np.asarray(delta, float)
        d.qvel[v:v + 6] = 0.0
        mujoco.mj_forward(m, d)

    def _standing(self) -> list[tuple[int, tuple[int, int]]]:
        return [(b.index, slot) for b in self.world.blocks
                if (slot := self.truth.slot_of(b.index)) is not None]

    def _bumped_block(self) -> int | None:
        """A block of the tower's middle: full layers below the top two."""
        standing = self._standing()
        top = max((slot[0] for _, slot in standing), default=0)
        choices = [b for b, (layer, _) in standing if 2 <= layer <= top - 2]
        return int(self.rng.choice(choices)) if choices else None

    def _pushed_out_near_fingers(self, grasp: np.ndarray | None = None,
                                 width: float | None = None) -> int | None:
        """A block pushed out since the surprise was asked for, with the open fingers (at
        `grasp`, `width` apart: the arm's by default) near the end it sticks out by: on their
        way to grasp it."""
        grasp = self.world.data.site_xpos[self._grasp] if grasp is None else grasp
        width = self.world.gripper_width() if width is None else width
        for block, start in self._start.items():
            spec = self.world.block_spec(block)
            now = self._centre(block)
            along = float((now - start) @ self._axis(block))
            if abs(along) < PUSHED_OUT_M or width < spec.width + 0.005:
                continue
            end = now + self._axis(block) * np.sign(along) * spec.length / 2
            if np.linalg.norm(grasp - end) < NEAR_M:
                return block
        return None

    def _held_drawn(self, grasp: np.ndarray | None = None, width: float | None = None
                    ) -> tuple[int, np.ndarray] | None:
        """The block in the fingers (at `grasp`, `width` apart: the arm's by default) being
        drawn out, and the way it comes (world, unit)."""
        grasp = self.world.data.site_xpos[self._grasp] if grasp is None else grasp
        width = self.world.gripper_width() if width is None else width
        for block, start in self._start.items():
            spec = self.world.block_spec(block)
            now = self._centre(block)
            if np.linalg.norm(grasp - now) > spec.length / 2 + 0.01 or width > spec.width + 0.002:
                continue
            drawn = now - start      # asked for as the pull began, the block pushed out
            drawn[2] = 0.0
            if np.linalg.norm(drawn) >= DRAWN_M:
                return block, drawn / np.linalg.norm(drawn)
        return None

    def _rider(self, block: int, out: np.ndarray) -> int | None:
        """The block of the layer above lying across the drawn block's pulled end."""
        spec = self.world.block_spec(block)
        centre = self._centre(block)
        end = centre + out * spec.length / 2
        above = [b for b in self._start if b != block
                 and 0.5 * spec.height < self._centre(b)[2] - centre[2] < 1.5 * spec.height]
        if not above:
            return None
        return min(above, key=lambda b: float(np.linalg.norm((self._centre(b) - end)[:2])))

    def _turn_top_block(self) -> str:
        """A block of an unfinished top layer turned on the layer below, so that its ends reach
        LANDING_M into the free slots' side: a set-down beside it lands on its end."""
        standing = self._standing()
        top = max((slot[0] for _, slot in standing), default=0)
        row = {s: b for b, (layer, s) in standing if layer == top}
        if len(row) == 3 or not row:
            return ""
        free = [s for s in range(3) if s not in row]
        slot, block = min(row.items(), key=lambda item: min(abs(item[0] - f) for f in free))
        yaw = float(np.arctan2(LANDING_M, self.world.block_spec(block).length / 2))
        m, d = self.world.model, self.world.data
        joint = m.body_jntadr[self.world.block_body[block]]
        q, v = m.jnt_qposadr[joint], m.jnt_dofadr[joint]
        turn = np.array([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])
        quat = np.empty(4)
        mujoco.mju_mulQuat(quat, turn, d.qpos[q + 3:q + 7].copy())
        d.qpos[q + 3:q + 7] = quat
        d.qvel[v:v + 6] = 0.0
        mujoco.mj_forward(m, d)
        return f"block {block} (top layer {top} slot {slot}) turned {np.degrees(yaw):.1f} deg: " \
               f"its ends {LANDING_M * 1000:.0f} mm toward the free slots"

    def _occlude(self, camera: str) -> None:
        """The person's hand between `camera` and the tower, a third of the way from the camera."""
        m, d = self.world.model, self.world.data
        eye = d.cam_xpos[m.camera(camera).id]
        tower = np.array([*self.world.cell.tower.position, eye[2] * 0.5 + 0.1])
        d.mocap_pos[self.person.body.hand] = eye + (tower - eye) / 3
        mujoco.mj_forward(m, d)
        self._occluding_until = self.world.time + OCCLUDE_S
