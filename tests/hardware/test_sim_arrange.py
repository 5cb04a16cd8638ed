"""A restarted simulator sets the tower up as a match's log left it: the blocks taken from their
slots lie on top, the tower stands still, and the cameras see exactly the tower the log holds."""

import pytest

from hardware.sim.arrange import ArrangeError, arrange_tower
from hardware.sim.ground_truth import GroundTruth
from perception.pipeline import Perception
from planning.game.tower import TowerState
from tests.perception.conftest import frames_of

pytestmark = pytest.mark.slow

LOGGED = (TowerState.fresh().moved((9, 1), (19, 1)).moved((8, 2), (19, 2))
          .moved((5, 0), (19, 0)).moved((12, 1), (20, 0)))


def test_the_tower_the_log_left_stands_where_the_cameras_see_it(world, fresh):
    try:
        moved = arrange_tower(world, fresh, LOGGED)
        start = {b.index: (b.layer, b.slot) for b in world.blocks}
        assert [start[block] for block, _ in moved] == [(5, 0), (8, 2), (9, 1), (12, 1)]
        truth = GroundTruth(world)
        world.step_for(1.0)
        truth.reference()
        world.step_for(2.0)
        assert truth.tower_state(LOGGED.blocks_moved) == LOGGED
        assert max(truth.displacements().values()) < 0.0005 and not truth.fallen()
        seen = Perception(world.cell).observe(frames_of(world)).observation
        assert not seen.fell and seen.tower_state(LOGGED.blocks_moved) == LOGGED
    finally:
        world.rebuild_tower(fresh)


def test_a_tower_the_set_cannot_make_is_refused(world, fresh):
    with pytest.raises(ArrangeError, match="1 slots of the starting tower are empty and 0 filled"):
        arrange_tower(world, fresh, TowerState.fresh().without(5, 1))
