"""The simulated person plays through the physics: a practised player's turn moves one block from a
legal source to the top, at a right angle to the layer below, with the tower standing; told to make
a mistake, they make exactly that one, for the referee to see."""

import numpy as np
import pytest

from hardware.sim.ground_truth import GroundTruth
from hardware.sim.person import MISTAKES, SimPerson, Skill
from hardware.sim.world import SimWorld
from planning.rules import legal_sources, placement_target

TURN_LIMIT_S = 120.0


def _play(world, person, mistake=None) -> dict:
    truth = GroundTruth(world)
    before = {b.index: truth.slot_of(b.index) for b in world.blocks}
    tower = truth.tower_state()
    person.start_turn(mistake)
    started = world.time
    while person.state == "playing":
        person.step()
        world.step(1)
        assert world.time - started < TURN_LIMIT_S, "the person's turn never ended"
    world.step_for(2.0)
    after = {b.index: truth.slot_of(b.index) for b in world.blocks}
    moved = {b: (before[b], after[b]) for b in before if before[b] != after[b]}
    return {"tower": tower, "moved": moved, "truth": truth, "took_s": world.time - started}


@pytest.fixture(scope="module")
def table(default_cell):
    world = SimWorld(default_cell, 1, markers=False)
    yield world, SimPerson(world, Skill(0.8), seed=1)
    world.close()


def test_a_block_from_a_forbidden_layer_when_told(table):
    # on the fresh tower: its top layer is complete, so no block of it may be taken
    world, person = table
    turn = _play(world, person, "forbidden_layer")
    assert len(turn["moved"]) == 1, turn["moved"]
    (source, target), = turn["moved"].values()
    assert source not in legal_sources(turn["tower"]) and source[0] == 18
    assert target[0] == 19


def test_a_practised_turn_is_legal_and_the_tower_stands(table):
    world, person = table
    turn = _play(world, person)
    assert len(turn["moved"]) == 1, turn["moved"]
    (source, target), = turn["moved"].values()
    assert source in legal_sources(turn["tower"])
    assert target[0] == placement_target(turn["tower"]).layer   # a right angle, or no slot at all
    assert turn["truth"].fallen() == [] and person.state == "done"
    assert person.last_turn["source"] == list(source) and 5.0 < turn["took_s"] < 60.0


def test_a_block_laid_the_wrong_way_when_told(table):
    # a block can lie the wrong way only on a complete top layer: complete layer 19 first
    world, person = table
    while GroundTruth(world).tower_state().top_layer == 19 and \
            not GroundTruth(world).tower_state().top_is_complete:
        assert len(_play(world, person)["moved"]) == 1
    turn = _play(world, person, "wrong_orientation")
    block = next(b for b, (was, _) in turn["moved"].items() if list(was) == person.last_turn["source"])
    assert turn["moved"][block][1] is None      # in no slot: it lies across the layer's direction
    pose = turn["truth"].pose(block)
    layer = placement_target(turn["tower"]).layer
    along_x = abs(pose.axis[0]) > abs(pose.axis[1])
    assert along_x != (layer % 2 == 1) and pose.tilt < np.radians(10)
    assert pose.position[2] > (layer - 1) * world.cell.blocks.height.mean


def test_skills_and_mistakes_are_checked(table):
    world, person = table
    with pytest.raises(ValueError, match="within 0..1"):
        Skill(1.5)
    with pytest.raises(ValueError, match="unknown mistake"):
        person.start_turn("juggling")
    assert Skill(1.0).push_limit_n < Skill(0.0).push_limit_n and Skill(1.0).tries > Skill(0.0).tries
    assert set(MISTAKES) >= {"wrong_orientation", "forbidden_layer", "new_layer_early"}
