"""Hardware in the loop: the robot plays a turn on the simulated cell (`sim serve` in its own
process, reached through the serial pty and the camera streams only; the arm's firmware the C
firmware's host build), and the simulator's ground
truth (its `/truth.json`, read by this test and never by the controller) checks every turn: exactly
one block moved, from a legal source to the legal place on top; the tower stands; and every
block that was tested and not taken is back within 1 mm of where it was. And the steps the arm
took are the procedure's alone: given the arm's outcomes, hands that only replay them are asked
for the very same steps. The turn is recorded as `play --rrd` records it, and the recording read
back through Rerun's API holds what the viewer shows."""

import json
import urllib.request

import numpy as np
import pytest

from controller.bench.figures import summarise
from controller.bench.game import game_record
from controller.cell_link import CellLink, SimulatedCell
from controller.commands.play_cmd import SIM_STALL_S
from controller.solo import play_game
from controller.turn.arm_hands import arm_player
from controller.turn.procedure import Player
from controller.viewer.recorder import Recorder, paths
from controller.viewer.watch import watch_link, watch_player
from hardware.firmware.build import build_host
from planning.policies import Policy
from planning.game.rules import check_move
from planning.strategy import LOWEST_LAYER
from planning.stability import BlockDims
from tests.controller.scripted_hands import Recording, Replay
from tests.recordings import read_recording, scalars, texts
from planning.game.tower import TowerState, layer_axis

pytestmark = pytest.mark.hil

SEED = 5      # two probes: one tight block tested and left, one loose block taken
TURNS = 1
RESTORED_M = 0.001


def _truth(sim: SimulatedCell) -> dict:
    with urllib.request.urlopen(sim.truth_url, timeout=10) as reply:
        return json.loads(reply.read())


def _slots(truth: dict) -> dict[int, tuple[int, int] | None]:
    return {int(b): (tuple(v["slot"]) if v["slot"] else None) for b, v in truth["blocks"].items()}


@pytest.fixture(scope="module")
def match(default_cell, tmp_path_factory):
    """The turn, with the arm's firmware the C firmware's (issue 23: the binary's code, ticked
    against the simulated arm); recorded for the viewer as `play --solo --rrd` records it. The
    reference engine, `play`'s default, plays the match of tests/hardware/test_match_hil.py, and
    tests/hardware/test_firmware_engine.py holds that both answer every stream of frames alike."""
    build_host()
    rrd = tmp_path_factory.mktemp("recording") / "turn.rrd"
    with SimulatedCell(SEED, firmware="c") as sim:
        truths = [_truth(sim)]
        with CellLink(default_cell, sim.serial, sim.camera_urls, stall_s=SIM_STALL_S) as link, \
                Recorder(rrd) as recorder:
            player = arm_player(link)            # what play_solo plays with
            recording = player.hands = Recording(player.hands)
            watch = watch_link(recorder, link)
            watch_player(watch, player)

            def turn_done(report):
                watch.turn_done(report)
                truths.append(_truth(sim))
            result = play_game(player, TURNS, on_turn=turn_done)
        yield result, truths, recording, rrd


def test_the_arm_took_the_steps_of_the_one_procedure(match, default_cell):
    result, _, recording, _ = match
    replay = Replay(recording)
    again = play_game(Player(replay, BlockDims.of(default_cell.blocks), policy=Policy()), TURNS)
    assert replay.steps == recording.steps and len(recording.steps) >= 8
    assert [(t.source, t.target, len(t.probes)) for t in again.turns] == \
        [(t.source, t.target, len(t.probes)) for t in result.turns]


def test_every_turn_is_legal_and_the_tower_stands(match):
    result, truths, _, _ = match
    assert result.error is None, result.error
    assert len(result.turns) == TURNS and result.all_legal and not result.fell
    assert truths[-1]["fallen"] == []
    assert result.stories == TowerState(tuple(tuple(bool(v) for v in row)
                                              for row in truths[-1]["layers"])).stories()


def test_each_turn_moved_one_block_legally_by_the_truth(match):
    result, truths, _, _ = match
    for n, report in enumerate(result.turns):
        before, after = _slots(truths[n]), _slots(truths[n + 1])
        moved = {b for b in before if before[b] != after[b]}
        assert len(moved) == 1, f"turn {n + 1}: blocks {sorted(moved)} left their places"
        block = moved.pop()
        assert before[block] == report.source and after[block] == report.target
        state = TowerState(tuple(tuple(bool(v) for v in row) for row in truths[n]["layers"]), n)
        assert check_move(state, report.source, report.target, layer_axis(report.target[0])) == []


def test_tested_blocks_not_taken_are_back_within_a_millimetre(match):
    result, truths, _, _ = match
    tested = 0
    for n, report in enumerate(result.turns):
        before, after = truths[n]["blocks"], truths[n + 1]["blocks"]
        for probe in report.probes:
            if (probe.layer, probe.slot) == report.source:
                continue
            block = next(b for b, v in before.items() if v["slot"] == [probe.layer, probe.slot])
            shift = np.linalg.norm(np.subtract(after[block]["position"], before[block]["position"]))
            assert shift <= RESTORED_M, (f"turn {n + 1}: block {block} at layer {probe.layer} slot "
                                         f"{probe.slot} was left {shift * 1000:.2f} mm from its place")
            tested += 1
    assert tested >= 1, "no block was tested and left: the seed no longer exercises restoring"


def test_the_game_benchmarks_full_mode_records_the_game(match):
    """`bench --suite game --full` plays this pipeline (play_full_game) and records it so."""
    result, _, _, _ = match
    game = game_record(result, "ours", SEED, "full", TowerState.fresh().stories(), False, 1.0)
    assert game.mode == "full" and len(game.turns) == TURNS and game.ended_by == "move cap"
    turn = game.turns[0]
    assert turn.source is not None and turn.source[0] >= LOWEST_LAYER
    assert turn.legal and not turn.fell and turn.time_s > 0
    assert turn.probes == len(turn.probed) >= 1
    assert game.blocks_moved == 1 and game.stories == "18 1/3"
    figures = summarise([game])
    assert figures["games"] == 1 and figures["extraction_success"] == 1.0
    assert figures["probes_per_turn"] == turn.probes
    assert figures["turn_time_s_median"] == pytest.approx(turn.time_s, abs=0.05)


def test_the_turn_is_recorded_with_what_the_viewer_shows(match):
    result, _, _, rrd = match
    entities = read_recording(rrd)
    force = entities["/" + paths.WRIST_FORCE]
    assert force.rows / force.span_s >= 200              # per second of device time
    assert force.span_s >= result.turns[0].duration_s * 0.9
    assert scalars(force).shape[1] == 4 and np.isfinite(scalars(force)).all()
    assert np.allclose(scalars(force)[:, 3], np.linalg.norm(scalars(force)[:, :3], axis=1))
    assert entities["/" + paths.JOINTS].rows == force.rows
    for camera in ("left", "right"):
        frames = entities[f"/{paths.CAMERAS}/{camera}"]
        assert frames.rows >= frames.span_s >= force.span_s * 0.9     # a frame a second at least
        assert frames.columns["EncodedImage:media_type"][0] == ["image/jpeg"]
        assert entities[f"/{paths.CAMERAS}/{camera}/markers"].rows >= 1
    tower = entities["/" + paths.TOWER]
    assert len(tower.columns["Boxes3D:centers"][0]) == 54            # the fresh tower, all seen
    for probe in result.turns[0].probes:
        trace = entities[f"/{paths.PROBES}/{probe.layer}.{probe.slot}"]
        assert trace.rows == len(probe.trace)
        assert scalars(trace).max() == pytest.approx(max(f for _, f in probe.trace))
    lines = texts(entities["/" + paths.EVENTS])
    assert any(t.startswith("turn 1: ") for t in lines) and any("probe" in t for t in lines)
    assert "turn 1 done: 18 1/3 stories" in lines
    guards = scalars(entities["/" + paths.GUARD])
    assert np.nanmax(guards) > 0
    placed = [c for c in entities["/" + paths.TARGET].columns["Boxes3D:centers"] if c]
    assert len(placed) == 1 and len(placed[0]) == 1     # the new slot shown, then cleared
