"""Staging towers in the simulator for tests and benchmarks: mid-game towers (legal moves made by
hand, tested blocks left sticking out, a partial top layer) and fallen ones. The blocks are moved
by hand, as a person setting up a test scene would, then the physics settles them.

For tests and benchmarks only (it reads and writes the simulator's state directly).
"""

from __future__ import annotations

from contextlib import contextmanager
from dataclasses import dataclass

import mujoco
import numpy as np

from hardware.sim.ground_truth import GroundTruth
from hardware.sim.placing import placement_centre, slot_world
from hardware.sim.world import SimWorld
from planning.game.rules import legal_sources, placement_target
from planning.game.tower import TowerError, TowerState

PARK_ORIGIN = np.array([-0.45, -0.6, 0.0])   # where removed blocks are laid on the table
# A block laid on top by hand (a scene's move) is set this far clear of its neighbours and this
# far above where it rests (m); the physics settles it.
SCENE_GAP = 0.0003
SCENE_DROP = 0.0003
# Removing a block in one instant drops the blocks it carried by the thickness difference to its
# neighbours (up to half a millimetre); the whole upper tower landing at once can throw the loose
# top blocks off. Staged removals let the load down first: the block thins by EASE_M over EASE_S.
EASE_M = 0.0012
EASE_S = 0.3


@dataclass
class Scene:
    moves: int
    protruded: dict[int, float]     # block -> how far it was pushed along its axis (m)
    fell: bool


@contextmanager
def awake(world: SimWorld):
    """Keep every body awake while the scene is rearranged (moved bodies must not sleep in mid-air)."""
    flag = int(mujoco.mjtEnableBit.mjENBL_SLEEP)
    world.model.opt.enableflags &= ~flag
    try:
        yield
    finally:
        world.model.opt.enableflags |= flag


def _qpos(world: SimWorld, block: int) -> int:
    body = world.block_body[block]
    return world.model.jnt_qposadr[world.model.body_jntadr[body]]


def _dof(world: SimWorld, block: int) -> int:
    body = world.block_body[block]
    return world.model.jnt_dofadr[world.model.body_jntadr[body]]


def set_block(world: SimWorld, block: int, position: np.ndarray, yaw: float) -> None:
    """Put a block at a world position and yaw, at rest."""
    adr, dof = _qpos(world, block), _dof(world, block)
    world.data.qpos[adr:adr + 3] = position
    world.data.qpos[adr + 3:adr + 7] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
    world.data.qvel[dof:dof + 6] = 0.0
    mujoco.mj_forward(world.model, world.data)


def shift_block(world: SimWorld, block: int, distance: float) -> None:
    """Slide a block along its own axis by `distance` (m), as a test push would leave it."""
    body = world.block_body[block]
    adr = _qpos(world, block)
    world.data.qpos[adr:adr + 3] += world.data.xmat[body].reshape(3, 3)[:, 0] * distance
    mujoco.mj_forward(world.model, world.data)


def take_out(world: SimWorld, blocks: list[int], first_spot: int = 0, seconds: float = EASE_S) -> None:
    """Take blocks out of the tower and lay them on the table, letting their load down gradually
    as a careful hand sliding them out would: their collision boxes thin by EASE_M over
    `seconds`, so the blocks they carried settle onto their other supports (or start to topple)
    instead of dropping all at once."""
    geoms = [world.model.geom(f"block{b}").id for b in blocks]
    half = world.model.geom_size[geoms, 2].copy()
    steps = max(1, int(round(seconds / world.timestep)))
    for k in range(1, steps + 1):
        world.model.geom_size[geoms, 2] = half - EASE_M / 2 * k / steps
        world.step(1)
    for n, block in enumerate(blocks):
        park(world, block, first_spot + n)
    world.model.geom_size[geoms, 2] = half


def park(world: SimWorld, block: int, index: int) -> None:
    spot = PARK_ORIGIN + np.array([0.0, 0.03 * index, world.cell.blocks.height.mean / 2])
    set_block(world, block, spot, 0.0)


def place_on_top(world: SimWorld, block: int, layer: int, slot: int) -> None:
    """Set a block into a slot of the top layer, resting on the layer below where that layer
    really is (a tower leans a little after a block is taken from low down), and clear of the
    blocks already in the layer, as a person would lay it."""
    truth = GroundTruth(world)
    _, yaw = slot_world(truth, layer, slot)
    set_block(world, block, placement_centre(truth, layer, slot, block, SCENE_GAP)
              + np.array([0.0, 0.0, SCENE_DROP]), yaw)


def stable_sources(tower: TowerState) -> list[tuple[int, int]]:
    """Legal sources whose removal leaves neither an empty layer nor one standing on a side block."""
    out = []
    for layer, slot in legal_sources(tower):
        row = list(tower.row(layer))
        row[slot] = False
        if sum(row) == 0 or (sum(row) == 1 and not row[1]):
            continue
        out.append((layer, slot))
    return out


def midgame(world: SimWorld, rng: np.random.Generator, moves: int, protrusions: int,
            out_max: float = 0.010, in_max: float = 0.005, toward: np.ndarray | None = None) -> Scene:
    """Make `moves` legal moves by hand (source from a stable legal slot, onto the top), then leave
    `protrusions` blocks pushed along their axes: sticking out toward `toward` (a world point,
    default the cameras) by up to `out_max`, or sunk into the tower on that side by up to
    `in_max`; settle."""
    truth = GroundTruth(world)
    tower = truth.tower_state()
    protruded = {}
    with awake(world):
        done = 0
        for i in range(moves * 3):
            if done == moves:
                break
            try:
                tower = truth.tower_state()   # what really stands, after the physics had its say
            except TowerError:
                return Scene(done, protruded, True)   # the staging knocked it over
            sources = stable_sources(tower)
            source = sources[rng.integers(len(sources))]
            block = truth.block_at(*source)
            if block is None:
                continue
            take_out(world, [block], i)
            target = placement_target(tower)
            slot = int(rng.choice(target.slots))
            place_on_top(world, block, target.layer, slot)
            world.step_for(0.3)
            done += 1
        try:
            tower = truth.tower_state()
        except TowerError:
            return Scene(done, protruded, True)
        if toward is None:
            toward = np.mean([c.position for c in world.cell.cameras], axis=0)
        candidates = [(layer, slot) for layer, slot in tower.blocks() if layer < tower.top_layer]
        for k in rng.choice(len(candidates), size=min(protrusions, len(candidates)), replace=False):
            block = truth.block_at(*candidates[k])
            if block is None:
                continue
            body = world.block_body[block]
            axis = world.data.xmat[body].reshape(3, 3)[:, 0]
            out = 1.0 if (np.asarray(toward) - world.data.xpos[body]) @ axis > 0 else -1.0
            amount = rng.uniform(0.001, out_max) if rng.random() < 0.5 else -rng.uniform(0.001, in_max)
            distance = float(out * amount)
            shift_block(world, block, distance)
            protruded[block] = distance
        world.step_for(1.0)
    return Scene(done, protruded, False)


def topple(world: SimWorld, rng: np.random.Generator) -> Scene:
    """Knock the tower over: shove its upper half sideways and let it fall."""
    truth = GroundTruth(world)
    with awake(world):
        top = truth.tower_state().top_layer
        direction = rng.normal(size=2)
        direction /= np.linalg.norm(direction)
        for b in world.blocks:
            where = truth.slot_of(b.index)
            if where and where[0] > top / 2:
                dof = _dof(world, b.index)
                world.data.qvel[dof:dof + 2] = direction * 1.5
        world.step_for(3.0)
    return Scene(0, {}, True)
