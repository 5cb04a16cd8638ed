"""The robot's block work in the simulated cell without the arm: the physics under the game
benchmark's fast hands (controller/bench/fast_hands.py), which carry out the product's own turn
procedure with it.

What it keeps of a robot turn is the physics that decides a game: every test push, push-through,
push back home and pull runs through MuJoCo at the robot's speeds and guard forces, with a tip of
the robot's fingertip stiffness (the force gauge of `probe_stage.py`) and a hand that holds the
drawn block by a weld (the simulated person's), so a loaded block drags its neighbours and a tower
pushed too hard falls. What it leaves out: the arm's transits (the tip and hand jump to where they
work, and the tower rests meanwhile), the cameras (the benchmark reads the simulator's ground
truth) and the serial link. A drawn block is carried to its place the same way: set down just
above its slot, with the robot's placement error, and let go.

For benchmarks only: it reads ground truth, which the product never may.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from hardware.sim.ground_truth import GroundTruth
from hardware.sim.mjcf import PERSON_PARK
from hardware.sim.mocap import weld, weld_force
from hardware.sim.placing import RELEASE_ABOVE, across_dir, placement_centre, slot_world
from hardware.sim.probe_stage import ProbeStage
from hardware.sim.scenes import awake, set_block
from hardware.sim.world import SimWorld
from planning.game.tower import TowerState
from planning.motion.contact_geometry import PULL_CLEARANCE, SQUEEZE_INSIDE
from planning.game.geometry import TowerGeometry

# Speeds (m/s). The arm tests at 3 mm/s, pushes through at 15 and pulls at 30; a block's friction
# hardly depends on speed, so the bench moves faster for less simulated time. Loose blocks of a
# seed-1 tower peaked at 0.095 N tested at 2 or 5 mm/s and 0.109 N at 10; tight ones stopped the
# guard the same at each speed.
PROBE_SPEED = 0.01
PUSH_SPEED = 0.02
PULL_SPEED = 0.05
READ_EVERY_S = 0.004     # the pull's force is read as often as the arm's telemetry reads the wrist
PLACE_SIGMA_M = 0.0005   # placement error, each way across and along (m)
PLACE_YAW_SIGMA = np.radians(0.5)
SETTLE_AFTER_PLACE_S = 0.5


@dataclass(frozen=True)
class Look:
    """The tower as the benchmark's player sees it (ground truth)."""
    tower: TowerState
    heights: dict          # (layer, slot) -> block centre height (m)
    offsets: dict          # (layer, slot) -> centre along the layer's axis (m)
    blocks: dict           # (layer, slot) -> the block there
    out_of_place: list     # blocks in no slot, standing on the tower or lying beside it


@dataclass(frozen=True)
class Pull:
    came: bool             # drawn clear; False: let go, the tower dragged along
    drawn_m: float
    peak_force_n: float
    riders: dict = field(default_factory=dict)   # let go: the blocks above that came along (slot: m)
    slid_back_m: float = 0.0   # let go: how far the hand slid the block back in before it let go


class _DragGuard:
    """The arm's guard on a pull, read every READ_EVERY_S: it trips on a force over `guard_n`
    once the median of the readings over the last `window_s` is `drag_n` or more (a knock alone
    does not trip it)."""

    def __init__(self, guard_n: float, drag_n: float, window_s: float):
        self.guard_n, self.drag_n, self.window_s = guard_n, drag_n, window_s
        self._recent = np.zeros(max(1, int(round(window_s / READ_EVERY_S))))
        self._readings = 0

    def fresh(self, guard_n: float | None = None) -> _DragGuard:
        """The same guard (at `guard_n`, if given) with no readings yet: for the next move."""
        return _DragGuard(self.guard_n if guard_n is None else guard_n, self.drag_n,
                          self.window_s)

    def trips(self, force_n: float) -> bool:
        self._recent[self._readings % len(self._recent)] = force_n
        self._readings += 1
        return force_n > self.guard_n and self._readings >= len(self._recent) \
            and float(np.median(self._recent)) >= self.drag_n


class BenchHands:
    def __init__(self, world: SimWorld):
        self.world = world
        self.truth = GroundTruth(world)
        self.stage = ProbeStage(world)     # its own truth: each push measures from its start
        self.pushed: dict[tuple[int, int], int] = {}   # the block last pushed in each slot
        self.geometry = TowerGeometry.from_cell(world.cell)
        m = world.model
        self._hand = m.body_mocapid[m.body("person_hand").id]
        self._hand_body = m.body("person_hand").id
        self._grip = m.equality("person_grip").id
        self._rng = np.random.default_rng(world.seed + 31337)
        self.held: int | None = None

    # --- seeing ---------------------------------------------------------------------------------

    def look(self, blocks_moved: int) -> Look:
        """The tower now; raises TowerError when it is no tower."""
        heights, offsets, blocks, out = {}, {}, {}, []
        for b in self.world.blocks:
            where = self.truth.slot_of(b.index)
            if where is None:
                if b.index != self.held:
                    out.append(b.index)
                continue
            p = self.truth.pose(b.index).position
            heights[where] = float(p[2])
            offsets[where] = float(p[0] if where[0] % 2 == 1 else p[1])
            blocks[where] = b.index
        return Look(self.truth.tower_state(blocks_moved), heights, offsets, blocks, out)

    def fallen(self, moving: int | None = None) -> bool:
        """The tower fell by the rules' strict reading: a block other than `moving` (the one
        being moved) came down, 2 cm or more below where it was at `mark()`."""
        return self.truth.fell(moving)

    def mark(self) -> None:
        """Where every block is now is where it belongs (a turn starts): falls and drags are
        measured from here."""
        self.truth.reference()
        self.pushed.clear()

    # --- the fingertip --------------------------------------------------------------------------

    def push(self, source: tuple[int, int], depth: float, guard_n: float, speed: float,
             from_front: bool = False):
        """Push the block at `source` from the back (toward the front, where it is pulled), or
        from the front back home, by `depth` past its face or until the tip feels `guard_n`.
        Returns the stage's record (peak force, the block's travel, whether the guard stopped it)."""
        block = self._block(source)
        self.pushed[source] = block
        front = self.geometry.front_end(source[0]) * self.geometry.axis(source[0])
        body_axis = self.world.data.xmat[self.world.block_body[block]].reshape(3, 3)[:, 0]
        face = front if from_front else -front           # the face the tip pushes on
        end = 1 if float(body_axis @ face) > 0 else -1
        return self.stage.push(block, depth, speed, end=end, guard_n=guard_n)

    def _block(self, source: tuple[int, int]) -> int:
        """The block in `source`, or the one last pushed from there (pushed through, it may
        sit too far out, or too askew, to count as in its slot)."""
        block = self.truth.block_at(*source)
        if block is None:
            block = self.pushed.get(source)
        if block is None:
            raise LookupError(f"no block in slot {source[0]}.{source[1]}")
        return block

    # --- the hand -------------------------------------------------------------------------------

    def pull(self, source: tuple[int, int], guard_n: float, drag_n: float, drag_window_s: float,
             watch_m: float | None = None,
             rides: Callable[[float, float, float], bool] | None = None,
             look_every_m: float = np.inf, slide_guard_n: float | None = None) -> Pull:
        """Hold the front end of the block at `source` and draw it clear of the tower, letting go
        when the pull's force passes `guard_n` with its median over the last `drag_window_s` above
        `drag_n` (the tower drags along; a shorter knock does not count), as the arm's guard does,
        and, `watch_m` out and every `look_every_m` after while its end rests SQUEEZE_INSIDE or
        more in the tower, when a block above it `rides` on the pull (the arm's rule,
        controller/turn/checks.py `rides`, judged on the truth: see `_riders`; the arm's looks
        for riders). A block let go is first slid back under the same guard at
        `slide_guard_n` (default `guard_n`)."""
        world, data = self.world, self.world.data
        block = self._block(source)
        body = world.block_body[block]
        front = self.geometry.front_end(source[0]) * self.geometry.axis(source[0])
        data.mocap_pos[self._hand] = data.xpos[body]
        data.mocap_quat[self._hand] = data.xquat[body]
        weld(world, self._grip, self._hand_body, body)
        start = data.mocap_pos[self._hand].copy()
        length = world.block_spec(block).length
        out = float((data.xpos[body] - self.truth.to_world(np.zeros(3))) @ front)
        travel = max(length - out + PULL_CLEARANCE, 0.0)
        step = PULL_SPEED * world.timestep
        n = int(np.ceil(travel / step))
        marks = []
        if watch_m is not None and rides is not None:
            marks.append(watch_m)
            while marks[-1] + look_every_m <= length - out - SQUEEZE_INSIDE:
                marks.append(marks[-1] + look_every_m)
        looks = {int(np.ceil(m / step)) for m in marks}
        above = self._above(source[0])
        every = max(1, int(round(READ_EVERY_S / world.timestep)))
        guard = _DragGuard(guard_n, drag_n, drag_window_s)
        peak = 0.0
        for i in range(n):
            data.mocap_pos[self._hand] = start + front * step * (i + 1)
            world.step(1)
            if i + 1 in looks:
                riders = self._riders(above, front, step * (i + 1), rides)
                if riders:
                    return Pull(False, step * (i + 1), peak, riders,
                                self._slide_back(front, step * (i + 1), guard.fresh(slide_guard_n)))
            if i % every:
                continue
            force = abs(float(self._grip_force() @ front))
            peak = max(peak, force)
            if guard.trips(force):
                return Pull(False, step * (i + 1), peak,
                            slid_back_m=self._slide_back(front, step * (i + 1),
                                                         guard.fresh(slide_guard_n)))
        self.held = block
        return Pull(True, travel, peak)

    def _slide_back(self, front: np.ndarray, drawn: float, guard: _DragGuard) -> float:
        """Slide the held block `drawn` back into the tower at the push's speed, under the pull's
        `guard`, and let go; how far it went (m). Let go where it stood, a block drawn past its
        middle tips over the tower's edge (seed 1, 14.1 drawn 38 mm), and the push home from the
        front then stops on it."""
        world, data = self.world, self.world.data
        step = PUSH_SPEED * world.timestep
        start = data.mocap_pos[self._hand].copy()
        every = max(1, int(round(READ_EVERY_S / world.timestep)))
        went = 0.0
        for i in range(int(np.ceil(drawn / step))):
            went = min(step * (i + 1), drawn)
            data.mocap_pos[self._hand] = start - front * went
            world.step(1)
            if i % every == 0 and guard.trips(abs(float(self._grip_force() @ front))):
                break
        self._let_go()
        return went

    def _above(self, layer: int) -> dict[int, tuple[tuple[int, int], np.ndarray, np.ndarray]]:
        """The slot each block above `layer` lies in, where (world, m) it lies now and which way
        its length points (world unit vector)."""
        data, above = self.world.data, {}
        for b in self.world.blocks:
            where = self.truth.slot_of(b.index)
            if where is not None and where[0] > layer:
                body = self.world.block_body[b.index]
                above[b.index] = (where, data.xpos[body].copy(),
                                  data.xmat[body].reshape(3, 3)[:, 0].copy())
        return above

    def _riders(self, then: dict, front: np.ndarray, drawn: float,
                rides: Callable[[float, float, float], bool]) -> dict:
        """The blocks of `then` that the pull carried or turned since, by the arm's rule `rides`
        (how far the block went along `front`, how far it moved in all, how far the pulled block
        was drawn) judged on the truth: along, its centre; in all, the end the cameras read (the
        back one). Their slots and how far that end moved (m)."""
        data, out = self.world.data, {}
        for block, (where, position, axis) in then.items():
            body = self.world.block_body[block]
            shift = (data.xpos[body] - position)[:2]
            back = -self.geometry.front_end(where[0]) * self.geometry.axis(where[0])[:2]
            half = self.world.block_spec(block).length / 2.0 * np.sign(float(axis[:2] @ back))
            end = shift + half * (data.xmat[body].reshape(3, 3)[:2, 0] - axis[:2])
            went = float(np.hypot(*end))
            if rides(float(shift @ front[:2]), went, drawn):
                out[where] = went
        return dict(sorted(out.items()))

    def _grip_force(self) -> np.ndarray:
        """The weld's force on the held block (world frame, N)."""
        return weld_force(self.world, self._grip)

    def _let_go(self) -> None:
        self.world.data.eq_active[self._grip] = 0
        self.world.data.mocap_pos[self._hand] = PERSON_PARK[1]

    def place(self, target: tuple[int, int]) -> None:
        """Set the held block down in `target`, a slot of the top or a new layer, with the
        robot's placement error, and let go."""
        if self.held is None:
            raise RuntimeError("no block is held")
        world, truth = self.world, self.truth
        block, self.held = self.held, None
        self._let_go()
        layer, slot = target
        centre = placement_centre(truth, layer, slot, block)
        centre = centre + across_dir(truth, layer) * self._rng.normal(0.0, PLACE_SIGMA_M)
        _, yaw = slot_world(truth, layer, slot)
        along = truth.world_direction([1.0, 0.0, 0.0] if layer % 2 == 1 else [0.0, 1.0, 0.0])
        centre = centre + along * self._rng.normal(0.0, PLACE_SIGMA_M) + np.array([0.0, 0.0, RELEASE_ABOVE])
        yaw += self._rng.normal(0.0, PLACE_YAW_SIGMA)
        with awake(world):        # a block put in mid-air must not fall asleep there
            set_block(world, block, centre, yaw)
            world.step_for(SETTLE_AFTER_PLACE_S)

    def wait(self, seconds: float) -> None:
        """Let `seconds` of simulated time pass. Once every block is asleep nothing can move
        them (the tip and hand are parked), so the clock jumps to the end instead of stepping
        a still tower."""
        world = self.world
        end = world.time + seconds
        chunk = max(1, int(round(0.01 / world.timestep)))
        while world.time < end - world.timestep / 2:
            if world.blocks_asleep():
                world.data.time = end
                return
            world.step(min(chunk, int(round((end - world.time) / world.timestep))))
