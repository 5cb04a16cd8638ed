"""The game benchmark's fast hands (hardware/sim/bench_hands.py): a test push tells a loose block
from a tight one, a block tested and pushed back is home again, a loose block pushed through is
drawn clear and set down in its slot on top, one let go
for a rider is slid back in first, the true loads say which blocks carry the tower, and
waiting on a resting tower costs no stepping."""

import numpy as np
import pytest

from controller.turn.checks import rides
from hardware.sim.bench_hands import BenchHands
from hardware.sim.world import SimWorld

SEED = 1
# In the seed-1 tower the middle blocks of layers 7 and 9 carry nothing and their side blocks
# carry the layers above (measured with the probe stage: 0.1 N against the 0.5 N guard).
LOOSE, TIGHT = (7, 1), (7, 0)


@pytest.fixture()
def hands(default_cell):
    world = SimWorld(default_cell, SEED, markers=False, probe_stage=True)
    yield BenchHands(world)
    world.close()


def test_the_true_loads_show_which_blocks_carry_the_tower(hands):
    """What the benchmark's oracle knows: nothing presses on the top layer or on the loose block;
    its side blocks carry the layers above."""
    loads = hands.truth.loads()
    top = hands.look(0).tower.top_layer
    assert len(loads) == 3 * top
    assert all(loads[(top, slot)] == 0.0 for slot in range(3))
    assert loads[LOOSE] < 0.02 < 0.1 < loads[TIGHT]
    assert loads[(3, 0)] + loads[(3, 1)] + loads[(3, 2)] > loads[(15, 0)] + loads[(15, 1)] + loads[(15, 2)]


def test_the_truth_document_carries_the_loads_the_benchmarks_witness_turns_by(hands):
    """The cell's `/truth.json` (hardware/sim/server.py) as the full game benchmark reads it:
    each block's pose and slot, and the true loads keyed "layer,slot" for JSON."""
    document = hands.truth.document(loads=True)
    loads = hands.truth.loads()
    assert document["loads"] == {f"{layer},{slot}": n for (layer, slot), n in loads.items()}
    block = hands.truth.block_at(*TIGHT)
    assert tuple(document["blocks"][block]["slot"]) == TIGHT
    assert document["fallen"] == [] and "loads" not in hands.truth.document()


def test_a_test_push_tells_a_loose_block_from_a_tight_one_and_restoring_puts_it_home(hands):
    hands.mark()
    tight = hands.push(TIGHT, 0.005, 0.5, 0.01)
    assert tight.tripped and tight.block_travel < 0.0005
    loose = hands.push(LOOSE, 0.005, 0.5, 0.01)
    assert not loose.tripped and loose.peak_force_n < 0.3 and loose.block_travel > 0.004
    hands.push(LOOSE, loose.block_travel, 3.0, 0.02, from_front=True)
    assert hands.truth.displaced(0.001) == []


def test_a_loose_block_comes_out_and_goes_on_top(hands):
    before = hands.look(0).tower
    hands.mark()
    through = hands.push(LOOSE, 0.027, 3.0, 0.02)
    assert not through.tripped
    pull = hands.pull(LOOSE, 2.5, 1.2, 0.04)
    assert pull.came and hands.held is not None
    block = hands.held
    hands.place((19, 1))
    hands.wait(10.0)
    assert not hands.fallen()
    assert hands.truth.slot_of(block) == (19, 1)
    assert hands.look(1).tower.layers == before.moved(LOOSE, (19, 1)).layers


def test_the_pull_looks_for_riders_a_few_millimetres_out(hands, monkeypatch):
    """A loose block draws the blocks above it along by tenths of a millimetre at most: under the
    arm's limit it comes. A block above that went out with it makes the hand let go where it
    looked."""
    hands.mark()
    hands.push(LOOSE, 0.027, 3.0, 0.02)
    state = hands.world.save()
    assert hands.pull(LOOSE, 2.5, 1.2, 0.04, watch_m=0.006, rides=rides).came
    hands.held = None
    hands.world.restore(state)
    # the judgement (the arm's `rides`): 2 mm out with the pull, or turned so that the back end
    # moved 3 mm, and no further than the block went (or 12 mm)
    front = hands.geometry.front_end(LOOSE[0]) * hands.geometry.axis(LOOSE[0])
    across = np.array([-front[1], front[0], 0.0])
    now = hands._above(LOOSE[0])
    # an untouched block's length lies along its layer
    assert all(abs(axis @ hands.geometry.axis(where[0])) > 0.99 for where, _, axis in now.values())
    moved = {(8, 1): front * 0.003, (8, 0): -front * 0.0025, (8, 2): across * 0.0025,
             (9, 1): front * 0.02}
    then = {b: (where, p - moved.get(where, 0.0), axis) for b, (where, p, axis) in now.items()}

    def riders():
        return hands._riders(then, front, 0.006, rides)
    assert riders() == pytest.approx({(8, 1): 0.003})
    # turned about its centre so that each end moved 4 mm: a rider; 14 mm: past what is read
    block, (where, p, axis) = next((b, v) for b, v in now.items() if v[0] == (9, 0))
    half = hands.world.block_spec(block).length / 2
    for end_m, rider in ((0.004, True), (0.014, False)):
        turned = axis + np.cross([0.0, 0.0, 1.0], axis) * end_m / half
        then[block] = (where, p, turned / np.linalg.norm(turned))
        assert ((9, 0) in riders()) == rider
    # seen at the third look, 26 mm out: the hand slides the block back in and lets go of it
    # where the push-through had left it
    block = hands._block(LOOSE)
    pushed_out = hands.truth.pose(block).position.copy()
    looks = iter([{}, {}, {(8, 1): 0.003}])
    monkeypatch.setattr(hands, "_riders", lambda *args: next(looks))
    pull = hands.pull(LOOSE, 2.5, 1.2, 0.04, watch_m=0.006, rides=rides, look_every_m=0.01)
    assert not pull.came and pull.riders == {(8, 1): 0.003} and hands.held is None
    assert pull.drawn_m == pytest.approx(0.026, abs=1e-4)
    assert pull.slid_back_m == pytest.approx(pull.drawn_m, abs=1e-4)
    hands.wait(0.5)
    assert abs(float((hands.truth.pose(block).position - pushed_out) @ front)) < 0.001


def test_waiting_on_a_resting_tower_jumps_the_clock(hands):
    start = hands.world.time
    hands.wait(10.0)
    assert hands.world.time == pytest.approx(start + 10.0)
    assert hands.truth.displaced(0.0001) == []
