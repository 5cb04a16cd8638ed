"""Surprises on demand in the simulated cell (hardware/sim/surprises.py): each does to the world or
the cameras what it says, once, and says what it did; the camera server shows a frozen camera's
last picture stamped anew, sends nothing of a dropped one, and dims the light it renders with."""

import numpy as np
import pytest

from hardware.sim.arrange import arrange_tower
from hardware.sim.camera_server import CameraServer
from hardware.sim.ground_truth import GroundTruth
from hardware.sim.person import SimPerson
from hardware.sim.surprises import (BUMP_M, DRAWN_M, GLITCH_S, LANDING_M, LIGHT_SCALE,
                                    OCCLUDE_S, Surprises)
from hardware.sim.world import SimWorld
from planning.game.tower import TowerState


@pytest.fixture(scope="module")
def cell_world(default_cell):
    world = SimWorld(default_cell, 5, markers=False)
    yield world
    world.close()


@pytest.fixture
def surprises(cell_world):
    saved = cell_world.save()
    truth = GroundTruth(cell_world)
    person = SimPerson(cell_world, seed=5)
    yield Surprises(cell_world, truth, person, ["left", "right"], seed=5)
    cell_world.restore(saved)


def _centres(world):
    return {b.index: world.data.xpos[world.block_body[b.index]].copy() for b in world.blocks}


def test_a_bump_shifts_one_block_of_the_towers_middle_along_its_axis(surprises):
    world = surprises.world
    before = _centres(world)
    event = surprises.ask("bump")
    after = _centres(world)
    moved = {b: np.linalg.norm(after[b] - before[b]) for b in before}
    shifted = [b for b, d in moved.items() if d > 1e-6]
    assert len(shifted) == 1 and moved[shifted[0]] == pytest.approx(BUMP_M, abs=1e-6)
    layer, _ = surprises.truth.slot_of(shifted[0])
    assert 2 <= layer <= 16 and event["done_t"] == world.time
    assert f"block {shifted[0]} shifted" in event["what"]


def test_camera_glitches_last_their_time_and_unknown_kinds_are_refused(surprises):
    t = surprises.world.time
    frozen = surprises.ask("camera-freeze")
    dropped = surprises.ask("camera-drop")
    surprises.ask("light")
    glitch = surprises.glitch
    assert list(glitch.frozen.values()) == [pytest.approx(t + GLITCH_S)]
    assert list(glitch.dropped.values()) == [pytest.approx(t + GLITCH_S)]
    assert "camera" in frozen["what"] and "camera" in dropped["what"]
    assert glitch.light(t) == LIGHT_SCALE and glitch.light(t + GLITCH_S) == 1.0
    with pytest.raises(ValueError, match="unknown surprise 'quake'; known: nudge"):
        surprises.ask("quake")


def test_a_hand_occludes_a_camera_and_is_taken_away(surprises):
    world = surprises.world
    hand = surprises.person.body.hand
    parked = world.data.mocap_pos[hand].copy()
    surprises.ask("occlusion")
    assert np.linalg.norm(world.data.mocap_pos[hand] - parked) > 0.1
    for _ in range(int(OCCLUDE_S / world.timestep) + 2):
        surprises.step()
        world.step(1)
    assert np.allclose(world.data.mocap_pos[hand], parked)


def test_a_landing_surprise_turns_a_top_block_into_the_free_slots_side(surprises):
    world = surprises.world
    # a full top layer leaves no set-down beside a block: nothing happens
    assert surprises.ask("landing")["done_t"] is None
    arrange_tower(world, world.save(), TowerState.fresh().moved((5, 0), (19, 1)))
    world.step_for(0.5)
    lone = surprises.truth.block_at(19, 1)
    before = surprises.truth.pose(lone).axis
    event = surprises.ask("landing")
    after = surprises.truth.pose(lone).axis
    half = world.block_spec(lone).length / 2
    reach = half * np.sin(np.arccos(np.clip(before @ after, -1.0, 1.0)))
    assert reach == pytest.approx(LANDING_M, abs=2e-4)
    assert "toward the free slots" in event["what"] and surprises.truth.slot_of(lone) == (19, 1)


def test_a_rider_is_the_block_across_the_drawn_ones_pulled_end(surprises):
    truth = surprises.truth
    drawn = truth.block_at(10, 1)
    out = np.array(truth.geometry.axis(10), float)
    out[2] = 0.0
    out /= np.linalg.norm(out)
    surprises._start = _centres(surprises.world)
    rider = surprises._rider(drawn, out)
    assert truth.slot_of(rider)[0] == 11
    # the one lying over the drawn block's end, not the one over its other end
    end = surprises._centre(drawn) + out * surprises.world.block_spec(drawn).length / 2
    others = [truth.block_at(11, s) for s in range(3)]
    assert rider == min(others, key=lambda b: np.linalg.norm((surprises._centre(b) - end)[:2]))
    assert surprises._rider(drawn, -out) != rider


def test_the_camera_server_freezes_drops_and_dims_as_the_glitch_says(default_cell, surprises):
    server = CameraServer(surprises.world.model, default_cell.cameras)
    try:
        server.glitch = surprises.glitch
        sent = []
        server._conn = type("Conn", (), {"send": lambda self, m: sent.append(m)})()
        for slot in server.slots.values():
            slot.viewers = 1
        t = surprises.world.time
        surprises.glitch.dropped["left"] = t + 1.0
        surprises.glitch.dim_until = t + 1.0
        assert server.offer(surprises.world.data)
        _, light, *_, names = sent[-1]
        assert names == ["right"] and light == LIGHT_SCALE
        # a frozen camera publishes its last picture with the new moment's time
        slot = server.slots["right"]
        slot.publish(b"old", t - 0.1)
        surprises.glitch.frozen["right"] = t + 1.0
        messages = [(t, "right", b"new"), (t, None, None)]

        class Conn:
            def poll(self, timeout):
                return True

            def recv(self):
                if not messages:
                    raise EOFError
                return messages.pop(0)
        server._conn = Conn()
        server._receive()
        assert slot.jpeg == b"old" and slot.sim_time == t
    finally:
        server.httpd.server_close()


def test_a_nudge_waits_for_the_fingers_at_a_pushed_out_block_and_a_slip_for_its_pull(surprises):
    world, truth = surprises.world, surprises.truth
    block = truth.block_at(8, 1)
    spec = world.block_spec(block)
    surprises.ask("nudge")
    axis = surprises._axis(block)
    surprises._shift(block, axis * 0.027)                   # pushed through
    end = surprises._centre(block) + axis * spec.length / 2
    open_mm = spec.width + 0.02
    assert surprises._pushed_out_near_fingers(end + [0.0, 0.0, 0.2], open_mm) is None   # far
    assert surprises._pushed_out_near_fingers(end, spec.width) is None     # closed on it
    assert surprises._pushed_out_near_fingers(end + axis * 0.03, open_mm) == block
    # a slip comes once the block held has been drawn DRAWN_M since the pull began
    surprises.ask("slip")
    centre = surprises._centre(block)
    assert surprises._held_drawn(centre, spec.width) is None
    surprises._shift(block, axis * (DRAWN_M + 0.001))
    held, out = surprises._held_drawn(surprises._centre(block), spec.width)
    assert held == block and float(out @ axis) == pytest.approx(1.0)
    assert surprises._held_drawn(surprises._centre(block), spec.width + 0.02) is None  # open
