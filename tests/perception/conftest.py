import numpy as np
import pytest


@pytest.fixture(scope="module")
def sim_world(default_cell):
    import hardware.sim  # noqa: F401
    from hardware.sim.world import SimWorld
    w = SimWorld(default_cell, 4)
    yield w
    w.close()


def frames_of(world):
    from perception.sources import Frame
    return {c.name: Frame(c.name, world.render(c.name), world.time, 1) for c in world.cell.cameras}


@pytest.fixture(scope="module")
def midgame_scene(default_cell):
    """A mid-game tower (seed 6): moves made, blocks left sticking out, partial top layer."""
    import hardware.sim  # noqa: F401
    from hardware.sim.ground_truth import GroundTruth
    from hardware.sim.scenes import midgame
    from hardware.sim.world import SimWorld
    w = SimWorld(default_cell, 6)
    scene = midgame(w, np.random.default_rng(3), moves=8, protrusions=5)
    yield w, GroundTruth(w), scene, frames_of(w)
    w.close()
