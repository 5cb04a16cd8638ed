"""The stability analysis against the physics: towers built in the simulator (sparse layers,
side-only layers, overhanging top blocks) stand or fall as the analysis says.

Each tower starts as a fresh 18-layer tower; the blocks a case leaves out are taken out together
with their load let down gradually, the named blocks are slid along their axes, and the physics
runs for up to SETTLE_S. The tower "fell" when any block left in it moved more than FELL_MM or
tilted more than FELL_TILT_DEG (a layer tipping off a lone side block comes to rest leaning on the
layer below, its blocks' centres only a few millimetres from where they were). The run stops
early once that is decided: a block past those limits, or every block asleep (nothing can move
them then).
"""

import numpy as np
import pytest

from hardware.cells import DEFAULT_CELL
from hardware.sim.ground_truth import GroundTruth
from hardware.sim.scenes import awake, shift_block, take_out
from hardware.sim.world import SimWorld
from planning.game.cell.loader import load_cell
from planning.stability import BlockDims, analyse
from planning.game.tower import TowerState, layer_axis

FELL_MM = 5.0
FELL_TILT_DEG = 5.0
SETTLE_S = 3.0
DECIDE_EVERY_S = 0.05
BORDERLINE_MM = 3.0    # cases are chosen clear of the edge: nominal sizes stand in for drawn ones

STAND, FALL = True, False
# (name, rows changed from a full 18-layer tower, offsets along the blocks' axes (m), expected)
CASES = [
    ("fresh tower", {}, {}, STAND),
    ("middle only on layer 5", {5: (0, 1, 0)}, {}, STAND),
    ("sides only on layer 5", {5: (1, 0, 1)}, {}, STAND),
    ("sparse layers 3 to 9", {3: (0, 1, 0), 4: (1, 0, 1), 6: (0, 1, 0), 7: (1, 0, 1), 9: (0, 1, 0)}, {},
     STAND),
    ("sparse layers 6, 12, 15", {6: (0, 1, 0), 12: (1, 0, 1), 15: (0, 1, 0)}, {}, STAND),
    ("sparse top three layers", {16: (0, 1, 0), 17: (1, 0, 1), 18: (0, 1, 0)}, {}, STAND),
    ("a side block alone on top", {18: (1, 0, 0)}, {}, STAND),
    ("the other side block alone on top", {18: (0, 0, 1)}, {}, STAND),
    ("a top side block out 20 mm", {18: (1, 0, 0)}, {(18, 0): 0.020}, STAND),
    ("a top middle block out 30 mm", {18: (0, 1, 0)}, {(18, 1): 0.030}, STAND),
    ("a lower middle block out 30 mm", {}, {(8, 1): 0.030}, STAND),
    ("top two layers offset a little", {}, {**{(18, s): 0.020 for s in range(3)},
                                            **{(17, s): 0.005 for s in range(3)}}, STAND),
    ("a side block on a lone middle block", {17: (0, 1, 0), 18: (1, 0, 0)}, {}, STAND),
    ("side blocks of layer 5 both out 15 mm", {5: (1, 0, 1)}, {(5, 0): 0.015, (5, 2): -0.015}, STAND),
    ("layer 5 left with slot 0", {5: (1, 0, 0)}, {}, FALL),
    ("layer 5 left with slot 2", {5: (0, 0, 1)}, {}, FALL),
    ("layer 9 left with slot 0", {9: (1, 0, 0)}, {}, FALL),
    ("layer 10 left with slot 0", {10: (1, 0, 0)}, {}, FALL),
    ("layer 15 left with slot 2", {15: (0, 0, 1)}, {}, FALL),
    ("layer 17 left with slot 0 under a full layer", {17: (1, 0, 0)}, {}, FALL),
    ("a top middle block on a lone side block", {17: (1, 0, 0), 18: (0, 1, 0)}, {}, FALL),
    ("a top middle block out 46 mm", {18: (0, 1, 0)}, {(18, 1): 0.046}, FALL),
    ("one of two top blocks out 46 mm", {18: (1, 1, 0)}, {(18, 0): 0.046, (18, 1): -0.010}, FALL),
    ("top two layers offset: a top side block off its supports", {},
     {**{(18, s): 0.030 for s in range(3)}, **{(17, s): 0.020 for s in range(3)}}, FALL),
    ("the whole top layer out 48 mm", {}, {(18, s): 0.048 for s in range(3)}, FALL),
]


@pytest.fixture(scope="module")
def sim():
    cell = load_cell(DEFAULT_CELL)
    world = SimWorld(cell, 11)
    yield world, world.save()
    world.close()


def _build(world: SimWorld, truth: GroundTruth, rows: dict, offsets: dict) -> list[int]:
    """Make the case's tower; returns the blocks left in it."""
    removed = [truth.block_at(layer, s) for layer, row in rows.items() for s in range(3) if not row[s]]
    yaw = world.cell.tower.yaw
    for (layer, slot), offset in offsets.items():
        block = truth.block_at(layer, slot)
        along = np.array([np.cos(yaw), np.sin(yaw), 0.0]) if layer_axis(layer) == "x" \
            else np.array([-np.sin(yaw), np.cos(yaw), 0.0])
        body = world.block_body[block]
        sign = np.sign(world.data.xmat[body].reshape(3, 3)[:, 0] @ along)
        shift_block(world, block, sign * offset)
    kept = [b.index for b in world.blocks if b.index not in removed]
    truth.reference()
    take_out(world, removed)
    return kept


def _settle(world: SimWorld, truth: GroundTruth, kept: list[int]) -> tuple[float, float]:
    """Run the physics until the case is decided or SETTLE_S is up; the largest move (mm) and
    tilt (degrees) of a block left in the tower."""
    end = world.time + SETTLE_S
    while True:
        # stepped first: the build ran with sleeping off, and what it left says nothing yet
        world.step_for(DECIDE_EVERY_S)
        moved = truth.displacements()
        worst = max(moved[b] for b in kept) * 1000
        tilt = max(np.degrees(truth.pose(b).tilt) for b in kept)
        if worst > FELL_MM or tilt > FELL_TILT_DEG or world.blocks_asleep(kept) \
                or world.time >= end - world.timestep / 2:
            return worst, tilt


@pytest.mark.parametrize("name, rows, offsets, expected", CASES, ids=[c[0] for c in CASES])
def test_the_analysis_and_the_physics_agree(sim, name, rows, offsets, expected):
    world, fresh = sim
    world.restore(fresh)
    truth = GroundTruth(world)
    full = [(1, 1, 1)] * world.cell.blocks.layers
    state = TowerState(tuple(tuple(bool(v) for v in rows.get(layer, full[layer - 1]))
                             for layer in range(1, len(full) + 1)))
    b = world.cell.blocks
    report = analyse(state, BlockDims(b.length.mean, b.width.mean, b.height.mean), offsets)
    assert report.stands == expected, f"the analysis says margin {report.margin_mm:.1f} mm"
    assert abs(report.margin_mm) > BORDERLINE_MM, "a borderline case proves nothing"

    with awake(world):
        kept = _build(world, truth, rows, offsets)
    worst, tilt = _settle(world, truth, kept)
    stood = worst <= FELL_MM and tilt <= FELL_TILT_DEG
    assert stood == expected, (f"{name}: the analysis says {'stands' if expected else 'falls'} "
                               f"(margin {report.margin_mm:.1f} mm), the physics moved a block "
                               f"{worst:.1f} mm and tilted one {tilt:.1f} deg")
