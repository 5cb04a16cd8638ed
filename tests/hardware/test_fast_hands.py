"""The game benchmark's fast hands carry out the product's turn procedure in the simulated cell's
physics: the steps they are asked for are the procedure's alone (hands that only replay their
outcomes are asked for the very same steps), and what they see is what the simulator holds."""

import numpy as np
import pytest

from controller.bench.fast_hands import FastHands
from controller.solo import play_game
from controller.turn.procedure import Player
from hardware.sim.world import SimWorld
from planning.policies import Policy
from planning.game.rules import RuleOptions
from planning.stability import BlockDims
from tests.controller.scripted_hands import Recording, Replay

pytestmark = pytest.mark.slow

TURNS = 2


@pytest.fixture(scope="module")
def played(default_cell):
    world = SimWorld(default_cell, 1, markers=False, probe_stage=True)
    try:
        hands = Recording(FastHands(world))
        player = Player(hands, BlockDims.of(default_cell.blocks), RuleOptions(),
                        Policy("ours", np.random.default_rng(1)))
        yield play_game(player, TURNS), hands
    finally:
        world.close()


def test_the_fast_hands_took_the_steps_of_the_one_procedure(played, default_cell):
    result, recording = played
    assert result.error is None and len(result.turns) == TURNS and result.all_legal
    replay = Replay(recording)
    again = play_game(Player(replay, BlockDims.of(default_cell.blocks), RuleOptions(),
                             Policy("ours", np.random.default_rng(1))), TURNS)
    assert replay.steps == recording.steps
    assert [(t.source, t.target) for t in again.turns] == [(t.source, t.target) for t in result.turns]


def test_each_turn_watches_the_rules_window_and_sees_the_move(played):
    result, recording = played
    watches = [s for s in recording.steps if s[0] == "watch"]
    assert watches == [("watch", RuleOptions().window_s)] * TURNS
    for report in result.turns:
        assert report.phases_s["settle"] >= RuleOptions().window_s - 1.0
    looks = [o for s, o in zip(recording.steps, recording.outcomes) if s[0] == "watch"]
    last, report = looks[-1], result.turns[-1]
    assert last.occupancy[report.target] and not last.occupancy.get(report.source, False)
    assert last.out_of_place == []


def test_a_block_taken_after_all_is_drawn_firmly_and_unwatched():
    """The procedure's take-after-all: the fast hands draw under the arm's TAKE_GUARD_N, with no
    look for riders, as the arm does."""
    from types import SimpleNamespace
    from controller.turn.arm_pulling import PULL_GUARD_N, TAKE_GUARD_N
    from controller.turn.checks import DRAG_N, DRAG_WINDOW_S
    from hardware.sim.bench_hands import Pull
    calls = []
    hands = object.__new__(FastHands)
    hands.bench = SimpleNamespace(
        pull=lambda *a, **k: (calls.append((a, k)), Pull(True, 0.05, 3.1))[1],
        wait=lambda seconds: None, fallen=lambda block: False, held=7,
        truth=SimpleNamespace(displaced=lambda m: []))
    assert hands.pull((4, 1), 0.03, insist=True).came
    assert calls[-1] == (((4, 1), TAKE_GUARD_N, DRAG_N, DRAG_WINDOW_S),
                         {"slide_guard_n": PULL_GUARD_N})
    hands.pull((4, 1))
    assert calls[-1][0][1] == PULL_GUARD_N and len(calls[-1][0]) > 4     # watched for riders
