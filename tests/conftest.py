"""Shared fixtures: the default cell and its planner are built once per test session."""

import os

import pytest

# Offscreen rendering needs no display; set before anything imports mujoco.
os.environ.setdefault("MUJOCO_GL", "egl")


@pytest.fixture(scope="session")
def default_cell():
    from hardware.cells import DEFAULT_CELL
    from planning.cell import load_cell
    return load_cell(DEFAULT_CELL)


@pytest.fixture(scope="session")
def planner(default_cell):
    from planning.motion.planner import MotionPlanner
    return MotionPlanner(default_cell)


@pytest.fixture
def cell_toml():
    """The default cell file's text, for tests that write a changed copy."""
    from hardware.cells import DEFAULT_CELL
    return DEFAULT_CELL.read_text()
