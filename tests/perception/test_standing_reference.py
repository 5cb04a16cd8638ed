"""Perception compares each look with the last one that read as a standing tower: blocks gone
from three slots since are a fall. A look that does not read as a tower (a block in a hand read
as a layer of its own above empty ones) is not that reference."""

import numpy as np

from perception.observation import TowerObservation
from perception.pipeline import Perception
from perception.sources import Frame
from planning.game.geometry import TowerPose

POSE = TowerPose(0.5, 0.0, 0.785, 0.015)
TOWER = {(layer, slot): True for layer in range(1, 19) for slot in range(3)} | {(19, 0): True}


def _look(occupancy):
    return TowerObservation(0.0, POSE, 0.0, 0.1, [], dict(occupancy))


def _perception(default_cell, looks):
    perception = Perception(default_cell)
    given = iter(looks)
    perception.observer.observe = lambda *args, **kwargs: next(given)
    perception.detect = lambda name, image: []               # the looks above are what is seen
    frames = {c.name: Frame(c.name, np.zeros((8, 8, 3), np.uint8), 0.0, 1)
              for c in perception.cameras}
    return perception, frames


def test_a_block_held_above_the_top_is_no_reference_for_later_looks(default_cell):
    held = TOWER | {(22, 0): True}                       # over empty layers 20 and 21
    hidden = {**TOWER, (19, 0): False, (18, 1): False}  # the hand in front of two slots
    looks = [_look(TOWER), _look(held), _look(hidden), _look(TOWER)]
    perception, frames = _perception(default_cell, looks)
    seen = [perception.observe(frames).observation.fell for _ in looks]
    assert seen == [False, False, False, False]


def test_three_slots_gone_since_the_last_standing_look_are_a_fall(default_cell):
    dropped = {**TOWER, (19, 0): False, (18, 0): False, (18, 2): False}
    looks = [_look(TOWER), _look(dropped), _look(dropped)]
    perception, frames = _perception(default_cell, looks)
    seen = [perception.observe(frames).observation.fell for _ in looks]
    assert seen == [False, True, True]
