"""A simulated person who plays Jenga through the same physics as the robot: a finger pushes a
block out against the tower's friction (feeling the force in its sprung tip), a hand grips the end
that sticks out, draws the block, carries it up, sets it down on top and lets go.

The person sees the tower as a person would (the simulator's ground truth: it is part of the world,
not of the product). Its skill sets how hard it will push before trying another block, how many it
tries, how hard it forces the last, whether it watches the tower, its sense of balance, and how
well it places. For the referee's tests it can be told to make one mistake of the rules on its
next turn (`mistake`).

The server's physics loop calls `step()` before every physics step; a turn is a generator that
moves the finger and hand (hardware/sim/person_body.py) a step at a time, so the person and the
tower run in one simulated time.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from hardware.sim.ground_truth import GroundTruth
from hardware.sim.mocap import quat_mul, rotate_z, yaw_of, yaw_quat
from hardware.sim.mjcf import PERSON_FINGER_LENGTH
from hardware.sim.person_body import ABOVE, LEAVE, PLAYER_REACH, PULL_SPEED, REACH_SPEED, PersonBody
from hardware.sim.placing import RELEASE_ABOVE, across_dir, placement_centre, slot_world
from hardware.sim.skill import Skill
from hardware.sim.world import SimWorld
from planning.game.rules import legal_sources, placement_target
from planning.game.tower import TowerState
from planning.stability import BlockDims, removal_margin

MISTAKES = ("wrong_orientation", "forbidden_layer", "new_layer_early", "tested_left_out")
PUSH_SPEED = 0.02           # m/s, pushing a block
PUSH_OUT = 0.03             # how far a block is pushed out before it is gripped (m)
APPROACH_GAP = 0.015        # the fingertip starts this far from the end face (m)
GRIP_IN = 0.012             # the hand grips a drawn block this far in from its end (m)
MOVED = 0.001               # a tested block moved more than this must go back (m)
TOUCH_N = 0.3               # a block being set down has met the tower
HIGH_CONTACT = 0.004        # a block met this far above its rest sits on something (m)
RESHIFT = 0.003             # ... and is moved this far away from its neighbour to try again (m)
PLACE_TRIES = 4
DRAG_SEEN = 0.0015          # another block moving this much with a drawn one is seen (m)
LEFT_OUT = 0.004            # how far the tested_left_out mistake leaves a block out (m)
FEEL_WINDOW_S = 0.04        # a hand judges how hard a held block resists over this long


class SimPerson:
    def __init__(self, world: SimWorld, skill: Skill = Skill(), seed: int = 1):
        self.world = world
        self.truth = GroundTruth(world)
        self.skill = skill
        self._dims = BlockDims.of(world.cell.blocks)
        self._rng = np.random.default_rng(seed + 104729)
        self.body = PersonBody(world, self.truth)
        self._script = None
        self.mistake: str | None = None
        self.turns = 0
        self.state = "idle"           # idle, playing, done
        self.done_t: float | None = None
        self.entered_t: float | None = None
        self.last_turn: dict = {}
        self.felt: dict = {}
        self.park()

    # --- what the server asks ----------------------------------------------------------------------

    def start_turn(self, mistake: str | None = None) -> None:
        """Begin a turn now (the robot said "your turn"). Raises if one is already running."""
        if self.state == "playing":
            raise RuntimeError("the person is already playing a turn")
        if mistake is not None and mistake not in MISTAKES:
            raise ValueError(f"unknown mistake {mistake!r}; known: {', '.join(MISTAKES)}")
        self.mistake = mistake
        self.turns += 1
        self.state, self.done_t = "playing", None
        self.last_turn = {"turn": self.turns, "tried": [], "mistake": mistake}
        self._script = self._turn()

    def start_reach(self, point: np.ndarray, hold_s: float) -> None:
        """Reach the hand in to `point` (world), hold it there `hold_s`, and take it away: a hand
        in the workspace, for the safety monitor's tests. `entered_t` gets the world time any part
        of the hand first came into the workspace (12 cm around the tower's footprint and top)."""
        if self.state == "playing":
            raise RuntimeError("the person is already playing a turn")
        self.state, self.done_t, self.entered_t = "playing", None, None
        self._script = self._reach_in(np.asarray(point, float), hold_s)

    def _reach_in(self, point: np.ndarray, hold_s: float):
        data = self.world.data
        top = self.body.top_z()
        start = np.array([point[0], self.world.cell.tower.position[1] - PLAYER_REACH, point[2]])
        data.mocap_pos[self.body.hand] = start
        yield
        n = int(np.ceil(np.linalg.norm(point - start) / (REACH_SPEED * self.world.timestep)))
        for i in range(1, n + 1):
            data.mocap_pos[self.body.hand] = start + (point - start) * i / n
            if self.entered_t is None and self.body.in_workspace(data.mocap_pos[self.body.hand], top):
                self.entered_t = self.world.time
            yield
        for _ in range(int(hold_s / self.world.timestep)):
            yield
        yield from self.body.line(self.body.hand, start, REACH_SPEED)
        self.park()

    def stop_turn(self) -> None:
        """Leave the turn where it is (the round is over: the tower fell): let go and step back."""
        if self.state == "playing":
            self._script = None
            self.park()
            self.state, self.done_t = "done", self.world.time

    def step(self) -> None:
        """Advance the turn by one physics step (before the world steps)."""
        if self._script is None:
            return
        try:
            next(self._script)
        except StopIteration:
            self._script = None
            self.state, self.done_t = "done", self.world.time

    def status(self) -> dict:
        return {"state": self.state, "turn": self.turns, "done_t": self.done_t,
                "skill": self.skill.level}

    def park(self) -> None:
        self.body.park()

    # --- a turn ------------------------------------------------------------------------------------

    def _turn(self):
        tower = self.truth.tower_state()
        self.truth.reference()            # a fall is judged from the tower as the turn began
        record = self.last_turn
        source = yield from self._take_out(tower, record)
        if source is None:
            record["gave_up"] = True
            self.park()
            return
        # taking from the top layer changes where the block goes; from below, it does not
        after = tower.without(*source) if source[0] < tower.top_layer else tower
        layer, slot, yaw = self._target(after)
        record.update(source=list(source), target=[layer, slot])
        yield from self._place(layer, slot, yaw)
        self.park()

    def _candidates(self, tower: TowerState):
        """The blocks to try, in order (a generator over physics steps; returns the list)."""
        if self.mistake == "forbidden_layer":      # a block of the highest complete layer
            layer = tower.highest_complete_layer
            return [(layer, s) for s in (0, 2, 1) if tower.layers[layer - 1][s]][:1]
        sources = [s for s in legal_sources(tower) if s[0] > 2]
        order = self._rng.permutation(len(sources))
        shuffled = [sources[i] for i in order]
        balance = self.skill.balance_mm
        if balance <= 0:
            return shuffled
        # A player sees when taking a block would leave the tower balanced on an edge (a layer
        # left with one side block, a stack over a lone middle shifted aside) and, as skilled,
        # leaves those for last. One block is judged per physics step: the step also serves the
        # arm's serial link, and judging them all at once (about 10 ms each) would stall it.
        margin, rider = {}, {}
        for source in sources:
            margin[source] = removal_margin(tower, self._dims, source)
            rider[source] = self.skill.practised and self._carries_top_block(tower, source)
            yield
        return sorted(shuffled, key=lambda s: (rider[s], margin[s] < balance))

    def _carries_top_block(self, tower: TowerState, source: tuple[int, int]) -> bool:
        """Whether a block of the top layer lies across the end `source` is drawn by: nothing
        holds that block down, and it slides off with the drawn one."""
        layer, _ = source
        block = self.truth.block_at(*source)
        if layer + 1 != tower.top_layer or block is None:
            return False
        end = 1 if self.truth.geometry.axis(layer) @ self.body.near(block) > 0 else -1
        return tower.across_end(*source, end) is not None

    def _take_out(self, tower: TowerState, record: dict):
        """Push candidates until one slides out; returns it, gripped and drawn clear (or None)."""
        tries = self.skill.tries
        candidates = yield from self._candidates(tower)
        if self.mistake == "tested_left_out" and len(candidates) > 1:
            # test a block, change one's mind, and leave it sticking out
            source, candidates = candidates[0], candidates[1:]
            block = self.truth.block_at(*source)
            # out toward the cameras' side, where the referee can see it
            yield from self._push(block, LEFT_OUT, self.skill.push_limit_n, toward_x=True)
            record["tried"].append({"source": list(source), "block": block, "came_out": False,
                                    "left_out_mm": round(self._moved(block) * 1000, 1)})
            candidates = [c for c in candidates if abs(c[0] - source[0]) > 1]
        candidates = candidates[:tries]
        gave = {}         # how far each block tested gently went before it resisted (m)
        for n, source in enumerate(candidates):
            if self.truth.tower_fell():
                # A player stops when the tower falls. Playing on, a practised one went to put
                # back a block lying 64 m below the table (it fell off its edge) and the turn
                # never ended (skill 0.7, seed 19).
                return None
            last = n == len(candidates) - 1       # no passing: the last one is taken by force
            if last and self.skill.practised and gave:
                # A practised player goes back to the block that gave the most before it
                # resisted rather than force one not yet felt (the shakiest blocks come last
                # among the candidates, when there are more than the player tries).
                loosest = max(gave, key=gave.get)
                if gave[loosest] > MOVED and self.truth.block_at(*loosest) is not None:
                    source = loosest
            block = self.truth.block_at(*source)
            if block is None:
                continue
            limit = self.skill.push_limit_n * (self.skill.force_factor if last else 1.0)
            # A practised player testing a block stops as soon as it resists more than a free
            # block would: one that gives way only under a firmer push still carries load, and
            # drawn, it takes the tower along. The last block of a turn is pushed regardless.
            feel = self.skill.feel_n if self.skill.practised and not last else None
            out = yield from self._push(block, PUSH_OUT, limit, watch=not last, feel_n=feel)
            record["tried"].append({"source": list(source), "block": block, "came_out": out,
                                    "peak_n": round(self.felt["peak_n"], 2), "stopped": self.felt["stopped"]})
            if self.felt["stopped"] == "resists":
                gave[source] = self._moved(block)
            if out and (yield from self._draw(block, watch=not last)):
                return source
            if self.skill.practised and self._moved(block) > MOVED:
                yield from self._put_back(block)
                if out and self._moved(block) > MOVED and (yield from self._draw(block, watch=False)):
                    # It will not go back (drawn half out, it dragged the tower, and back in it
                    # jams at the firm put-back force): the rules forbid leaving it out and
                    # touching another, so a practised player takes it after all. Left out,
                    # it ended 3 of 10 solo games at skill 1 (seeds 2, 4 and 6). One that
                    # never came out is left: drawn by its stub while it drags the tower, it
                    # toppled it (seed 2, turn 23).
                    record["tried"][-1]["taken_after_all"] = True
                    return source
        return None

    # --- the finger --------------------------------------------------------------------------------

    def _push(self, block: int, protrude: float, limit_n: float, from_far_end: bool = True,
              toward_x: bool = False, watch: bool = True, feel_n: float | None = None):
        """Push `block` from its end away from the person until its near end stands `protrude`
        out of its home, or the tip feels `limit_n` (or `feel_n`: the block resists, and the
        player gives it up); True if it got there. With `from_far_end` False, push it back from
        the near end until it is home again."""
        data = self.world.data
        body = self.world.block_body[block]
        near = self.body.near(block)
        push = near if from_far_end else -near          # the direction the block is pushed
        if toward_x:
            push = near if near[0] > 0 else -near
        if from_far_end:
            self._home = data.xpos[body].copy()
        half = self.world.block_spec(block).length / 2
        face = data.xpos[body] - push * half             # the end face the tip pushes on
        target_travel = protrude if from_far_end else -float((data.xpos[body] - self._home) @ push)
        yaw = np.arctan2(push[1], push[0])
        data.mocap_quat[self.body.finger] = yaw_quat(yaw)
        tip = PERSON_FINGER_LENGTH                       # from the carriage to the tip's end
        start = face - push * (APPROACH_GAP + tip)
        yield from self.body.reach(self.body.finger, start)
        start_block = data.xpos[body].copy()
        came = False
        self.felt = {"peak_n": 0.0, "stopped": "travel"}    # how the last push went
        pos = data.mocap_pos[self.body.finger].copy()
        limit_steps = int((APPROACH_GAP + abs(target_travel) + 0.02) / (PUSH_SPEED * self.world.timestep))
        # A practised player watches the tower while testing a block and stops when it moves
        # along; the last block of a turn, and one being put back, they push on regardless.
        watching = watch and from_far_end and self.skill.practised
        self.truth.reference()
        for step in range(limit_steps):
            pos = pos + push * PUSH_SPEED * self.world.timestep
            data.mocap_pos[self.body.finger] = pos
            yield
            self.felt["peak_n"] = max(self.felt["peak_n"], self.body.finger_force_n)
            if (data.xpos[body] - start_block) @ push >= abs(target_travel) - 0.0002:
                came = True
                self.felt["stopped"] = "out"
                break
            if self.body.finger_force_n > limit_n:
                self.felt["stopped"] = "force"
                break
            if feel_n is not None and self.body.finger_force_n > feel_n:
                self.felt["stopped"] = "resists"
                break
            if watching and step % 10 == 0 and self._tower_follows(block):
                self.felt["stopped"] = "tower moved"
                break
        # Out the way it went in, to where the push began, before rising: a tip still in the
        # tower, or just at its face, catches the blocks above on the way up (the top ones stick
        # out by their placement error) and can knock the top layer off.
        yield from self.body.leave(self.body.finger, -push, max(LEAVE, float((pos - start) @ push)))
        return came

    def _put_back(self, block: int):
        """Push a tested block home from its near end, firmly (`Skill.put_back_n`): one left
        sticking out breaks the rules. Not after the tower fell (since the last push began)."""
        if self.truth.tower_fell():
            return
        yield from self._push(block, 0.0, self.skill.put_back_n, from_far_end=False)

    def _tower_follows(self, block: int) -> bool:
        """Whether a block other than `block` moved (seen) since the truth's reference."""
        moved = self.truth.displacements()
        moved.pop(block)
        return max(moved.values()) > DRAG_SEEN

    def _moved(self, block: int) -> float:
        return float(np.linalg.norm(self.world.data.xpos[self.world.block_body[block]] - self._home))

    # --- the hand ----------------------------------------------------------------------------------

    def _draw(self, block: int, watch: bool = True):
        """Grip the block's protruding near end and draw it out of the tower, clear of it; True
        when it came. A practised player watching the tower move with it slides the block back
        in as far as it came (or until it resists as hard as a put-back pushes), still holding
        it, lets go and pushes it home (False): let go where it stopped, a block drawn past its
        middle tips over the tower's edge and will not go back (the robot's fast hands, seed 1:
        49.5 mm short). None is drawn once the tower has fallen (since the last push began): the
        block may lie anywhere."""
        if self.truth.tower_fell():
            return False
        data = self.world.data
        body = self.world.block_body[block]
        near = self.body.near(block)
        half = self.world.block_spec(block).length / 2
        grip = data.xpos[body] + near * (half - GRIP_IN)
        data.mocap_quat[self.body.hand] = yaw_quat(np.arctan2(near[1], near[0]))
        yield from self.body.reach(self.body.hand, grip)
        self.body.hold(body)
        self.truth.reference()
        watch = watch and self.skill.practised
        steps = iter(range(10 ** 9))
        yield from self.body.line(self.body.hand, grip + near * (2 * half + 0.02), PULL_SPEED,
                              until=lambda: watch and next(steps) % 10 == 0 and self._tower_follows(block))
        if not (watch and self._tower_follows(block)):
            return True
        # Back in no harder than a tested block is put back: forced, it shoves the tower. The
        # hold is felt over a moment, as the arm's guard judges a drag: the pull may still be in
        # it as the hand turns back.
        felt = deque(maxlen=max(1, int(round(FEEL_WINDOW_S / self.world.timestep))))

        def resists() -> bool:
            felt.append(abs(float(self.body.held_force() @ near)))
            return len(felt) == felt.maxlen and float(np.median(felt)) > self.skill.put_back_n
        yield from self.body.line(self.body.hand, grip, PUSH_SPEED, until=resists)
        self.body.release()
        yield from self.body.leave(self.body.hand, np.array([0.0, 0.0, 1.0]))
        yield from self._put_back(block)
        return False

    def _place(self, layer: int, slot: int, yaw: float):
        data = self.world.data
        held = self.world.model.eq_obj2id[self.body.grip]
        block = next(b for b, body in self.world.block_body.items() if body == held)
        if self.mistake == "wrong_orientation":    # laid across, on the middle of the top
            tops = [self.world.data.xpos[body][2] for b, body in self.world.block_body.items()
                    if b != block and (w := self.truth.slot_of(b)) is not None and w[0] >= layer - 1]
            centre = np.array([*self.world.cell.tower.position,
                               max(tops) + self.world.cell.blocks.height.mean])
        else:
            centre = placement_centre(self.truth, layer, slot, block)
        offset = self._rng.normal(0.0, self.skill.place_sigma_m, 2)
        rest = centre + np.array([offset[0], offset[1], RELEASE_ABOVE])
        # the hand holds the block off its centre: carry the hand so that the block lands on `rest`
        hand_from_block = data.xpos[self.body.hand_body] - data.xpos[held]
        top = self.body.top_z() + ABOVE
        yield from self.body.line(self.body.hand, np.array([*data.mocap_pos[self.body.hand][:2], top]), REACH_SPEED)
        # a block is the same either way round: turn it the short way
        turn_by = (yaw - yaw_of(data.xmat[held]) + np.pi / 2) % np.pi - np.pi / 2
        goal_quat = quat_mul(yaw_quat(turn_by), data.mocap_quat[self.body.hand])
        turned = rotate_z(hand_from_block, turn_by)
        above = rest + turned + np.array([0.0, 0.0, ABOVE / 2])
        yield from self.body.line(self.body.hand, above, REACH_SPEED, quat=goal_quat)
        # Down until the block meets the tower (felt, not seen). Met high, it sits on a neighbour's
        # edge: up a little, over, and down again.
        across = across_dir(self.truth, layer)
        for _ in range(PLACE_TRIES):
            yield from self.body.line(self.body.hand, rest + turned - np.array([0.0, 0.0, 2 * RELEASE_ABOVE]),
                                  PUSH_SPEED, until=lambda: self.truth.contact_force(block) > TOUCH_N)
            high = data.xpos[held][2] - rest[2]
            if high < HIGH_CONTACT or self.mistake == "wrong_orientation":
                break
            side = self._away_from_neighbour(layer, block, across)
            rest = rest + across * side * RESHIFT
            yield from self.body.line(self.body.hand, data.mocap_pos[self.body.hand] + np.array([0.0, 0.0, 0.01]),
                                  PUSH_SPEED)
            yield from self.body.line(self.body.hand, rest + turned + np.array([0.0, 0.0, 0.01]), PUSH_SPEED)
        self.body.release()
        for _ in range(50):
            yield
        yield from self.body.leave(self.body.hand, np.array([0.0, 0.0, 1.0]))

    def _target(self, tower: TowerState) -> tuple[int, int, float]:
        """Where the block goes and at what yaw (world), with the skill's error and any mistake."""
        target = placement_target(tower)
        layer, slots = target.layer, list(target.slots)
        if self.mistake == "new_layer_early" and not tower.top_is_complete:
            layer, slots = tower.top_layer + 1, [1]
        slot = 1 if 1 in slots and len(slots) == 3 else int(self._rng.choice(slots))
        _, yaw = slot_world(self.truth, layer, slot)
        if self.mistake == "wrong_orientation":
            yaw += np.pi / 2
        return layer, slot, yaw + self._rng.normal(0.0, self.skill.yaw_sigma_rad)

    # --- geometry ----------------------------------------------------------------------------------

    def _away_from_neighbour(self, layer: int, block: int, across: np.ndarray) -> float:
        """+1 or -1 along `across`: away from the nearest other block of the layer."""
        here = self.world.data.xpos[self.world.block_body[block]]
        others = [b for s in range(3) if (b := self.truth.block_at(layer, s)) not in (None, block)]
        if not others:
            return 0.0
        nearest = min(others, key=lambda b: abs((self.world.data.xpos[self.world.block_body[b]] - here) @ across))
        return -1.0 if (self.world.data.xpos[self.world.block_body[nearest]] - here) @ across > 0 else 1.0

