"""Shared fixtures: the default cell and its planner are built once per test session."""

import os

import pytest

# Offscreen rendering needs no display; set before anything imports mujoco.
os.environ.setdefault("MUJOCO_GL", "egl")


def pytest_addoption(parser):
    group = parser.getgroup("conformance", "the device conformance suite (tests/conformance)")
    group.addoption("--device", default="python,c,qemu",
                    help="the built-in devices to check, comma-separated: python (the reference "
                         "engine), c (the C firmware's host build), qemu (the C binary in QEMU)")
    group.addoption("--device-url", default=None,
                    help="check a device of your own at this pyserial URL or port instead")
    group.addoption("--allow-motion", action="store_true",
                    help="with --device-url: run the tests that move the arm")


@pytest.fixture(scope="session")
def default_cell():
    from hardware.cells import DEFAULT_CELL
    from planning.game.cell import load_cell
    return load_cell(DEFAULT_CELL)


@pytest.fixture(scope="session")
def planner(default_cell):
    from planning.motion.planner import MotionPlanner
    return MotionPlanner(default_cell)


@pytest.fixture(autouse=True)
def _planner_as_found(request):
    """A test that uses the session's planner leaves it planning against the tower it found: the
    arm's hands set the tower each look, and the blocks sticking out of it as they move them."""
    if "planner" not in request.fixturenames:
        yield
        return
    planner = request.getfixturevalue("planner")
    tower, sticking_out = planner.tower, dict(planner.sticking_out)
    yield
    planner.set_tower(tower, sticking_out)


@pytest.fixture
def cell_toml():
    """The default cell file's text, for tests that write a changed copy."""
    from hardware.cells import DEFAULT_CELL
    return DEFAULT_CELL.read_text()


# What `make check` leaves out: tests that run the simulator or render its cameras, and command
# line tests that plan through roboticstoolbox or run a benchmark (seconds each).
SLOW_PATHS = ("tests/hardware/", "tests/perception/test_tower_perception.py",
              "tests/perception/test_events.py", "tests/perception/test_calibration.py",
              "tests/controller/test_cli_bench", "tests/controller/test_cli_cell.py")
# The longest modules (a whole match, robot turns), started first so that the parallel workers do
# not end with one of them running alone. With two workers, each takes two of these to begin with,
# in turn: the match (200-390 s) pairs with the endings of play (about 40 s), the robot's turn
# (60-110 s) with the stability checks (about 50 s).
FIRST = ("test_match_hil.py", "test_robot_turns_hil.py", "test_play_endings_hil.py",
         "test_stability_vs_sim.py")


def pytest_collection_modifyitems(config, items):
    for item in items:
        if item.nodeid.startswith(SLOW_PATHS):
            item.add_marker(pytest.mark.slow)
    rank = {name: i for i, name in enumerate(FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(FIRST)))
