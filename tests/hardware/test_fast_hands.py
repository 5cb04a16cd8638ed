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
