import pytest


@pytest.fixture(scope="module")
def world(default_cell):
    """A settled tower of seed 1 with the arm at home, shared by a module's tests (they restore it)."""
    from hardware.sim.world import SimWorld
    w = SimWorld(default_cell, 1)
    yield w
    w.close()


@pytest.fixture(scope="module")
def fresh(world):
    return world.save()
