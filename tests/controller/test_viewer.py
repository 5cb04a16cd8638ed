"""The viewer's pieces: the tower as boxes (pure), the recorder's file and its web viewer on
127.0.0.1, Rerun's usage analytics left off unless the user chose, and `--rrd` refused before a
game when it cannot be written. A whole recorded turn is tests/hardware/test_robot_turns_hil.py."""

import json
import urllib.request
from types import SimpleNamespace

import numpy as np
import psutil
import pytest

from controller.viewer.analytics import own_viewer_config, viewer_environment
from controller.viewer.recorder import Recorder, RecorderError, paths
from controller.viewer.scene import (CHOSEN, LOOSE, TIGHT, UNKNOWN, belief_colour, slot_box,
                                     tower_boxes)
from perception.observation import TowerObservation
from perception.tower_estimator import BlockObservation
from planning.game.geometry import TowerGeometry, TowerPose
from planning.stability import BlockDims
from tests.recordings import read_recording, scalars, texts
from tests.run_cli import jenga_robot

DIMS = BlockDims(0.075, 0.025, 0.015, 0.0135)
POSE = TowerPose(0.5, 0.1, np.pi / 6, 0.015)


def observation(blocks):
    return TowerObservation(1.0, POSE, 0.0, 0.1, blocks, {})


def block(layer, slot, position, yaw_deg=0.0, number=7):
    return BlockObservation(number, layer, slot, 0, position, yaw_deg, 0.0, ("left",))


def test_the_belief_runs_from_red_for_tight_to_green_for_loose():
    assert belief_colour(None) == UNKNOWN
    assert belief_colour(0.0) == TIGHT and belief_colour(1.0) == LOOSE
    assert belief_colour(-3) == TIGHT and belief_colour(7) == LOOSE
    middle = belief_colour(0.5)
    assert all(min(t, l) <= m <= max(t, l) for t, l, m in zip(TIGHT, LOOSE, middle))


def test_blocks_are_boxes_where_perception_measured_them_turned_with_their_layer():
    seen = [block(2, 0, (0.0, -0.025, 0.0225), yaw_deg=3.0), block(1, 1, (0.004, 0.0, 0.0075))]
    boxes = tower_boxes(observation(seen), DIMS, {(1, 1): 0.9}, chosen=(2, 0))
    assert boxes.slots == [(1, 1), (2, 0)]                     # bottom up
    assert np.allclose(boxes.centres, POSE.to_world(np.array([[0.004, 0.0, 0.0075],
                                                              [0.0, -0.025, 0.0225]])))
    assert np.allclose(boxes.half_sizes[0], [0.0375, 0.0125, 0.0075])
    # odd layers lie along the tower's x, even ones along its y; a block's own turn adds
    assert boxes.yaws[0] == pytest.approx(POSE.yaw)
    assert boxes.yaws[1] == pytest.approx(POSE.yaw + np.pi / 2 + np.radians(3.0))
    assert tuple(boxes.colours[0]) == belief_colour(0.9) and tuple(boxes.colours[1]) == CHOSEN
    assert "p_loose 0.90" in boxes.labels[0] and "2.0 block 7" in boxes.labels[1]
    q = boxes.quaternions()                                    # (x, y, z, w) about z
    assert np.allclose(q, [[0, 0, np.sin(y / 2), np.cos(y / 2)] for y in boxes.yaws])


def test_the_placement_slot_is_the_nominal_slot_on_the_measured_tower(default_cell):
    geometry = TowerGeometry.from_cell(default_cell)
    box = slot_box(geometry, POSE, DIMS, (19, 2), "goes there")
    expected = POSE.to_world(geometry.measured(POSE).slot_centre(19, 2, pitch=POSE.pitch))
    assert np.allclose(box.centres, expected) and box.labels == ["goes there"]
    assert box.yaws[0] == pytest.approx(POSE.yaw)               # layer 19 lies along x


def telemetry(t, wrench, q=(0.1,) * 6, width=0.02):
    return SimpleNamespace(device_time=t, wrench=wrench, q=q, gripper_width_m=width)


def test_a_recording_holds_the_force_guards_boxes_probes_and_events(tmp_path):
    rrd = tmp_path / "out" / "game.rrd"
    with Recorder(rrd) as recorder:
        for k in range(500):
            recorder.telemetry(telemetry(k * 0.004, (0.0, 3.0, 4.0, 0, 0, 0)))
        recorder.guard(0.5, 0.25)
        recorder.guard(0.9, None)
        recorder.boxes(paths.TOWER, 0.1, tower_boxes(observation([block(1, 1, (0, 0, 0.0075))]),
                                                     DIMS))
        recorder.probe("7.1", [(1.0, 0.1), (1.004, 0.3)], "probe layer 7 slot 1: loose", 1.01)
        recorder.event(1.5, "turn 1: place")
    entities = read_recording(rrd)
    force = entities["/" + paths.WRIST_FORCE]
    assert force.rows == 500 and np.allclose(scalars(force)[0], [0, 3, 4, 5])
    assert force.rows / force.span_s == pytest.approx(250, rel=0.01)
    guard = scalars(entities["/" + paths.GUARD])
    assert guard[0][0] == 0.25 and np.isnan(guard[1][0])
    assert len(entities["/" + paths.TOWER].columns["Boxes3D:centers"][0]) == 1
    assert entities[f"/{paths.PROBES}/7.1"].rows == 2
    assert texts(entities["/" + paths.EVENTS]) == ["probe layer 7 slot 1: loose", "turn 1: place"]


def test_a_recording_that_cannot_be_written_or_would_write_over_one_says_so(tmp_path):
    (tmp_path / "file").write_text("")
    with pytest.raises(RecorderError, match="cannot write the recording"):
        Recorder(tmp_path / "file" / "game.rrd")
    (tmp_path / "old.rrd").write_bytes(b"RRF2 an earlier match")
    with pytest.raises(RecorderError, match="already holds a recording"):
        Recorder(tmp_path / "old.rrd")
    assert (tmp_path / "old.rrd").read_bytes() == b"RRF2 an earlier match"


def test_the_viewer_runs_with_analytics_off_and_the_users_rerun_settings_untouched(
        tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    users = tmp_path / "rerun" / "analytics.json"
    users.parent.mkdir()
    users.write_text('{"analytics_enabled": true}')
    env, said = viewer_environment(analytics=False)
    assert "are off" in said and env["XDG_CONFIG_HOME"] == str(own_viewer_config())
    own = own_viewer_config() / "rerun" / "analytics.json"
    assert json.loads(own.read_text())["analytics_enabled"] is False
    assert users.read_text() == '{"analytics_enabled": true}'
    env, said = viewer_environment(analytics=True)        # --viewer-analytics: theirs holds
    assert env["XDG_CONFIG_HOME"] == str(tmp_path) and "--viewer-analytics" in said


def test_the_web_viewer_is_served_on_the_loopback_address_only(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path))
    said = []
    with Recorder(tmp_path / "live.rrd", viewer=True, has_display=False,
                  announce=said.append) as recorder:
        assert recorder.address.startswith("http://127.0.0.1:")
        assert any(line == f"viewer: {recorder.address}" for line in said)
        with urllib.request.urlopen(recorder.address, timeout=10) as page:
            assert page.status == 200
        recorder.event(0.0, "hello")
        process = recorder._viewer_process
        listening = [c.laddr for c in psutil.Process(process.pid).net_connections("inet")
                     if c.status == psutil.CONN_LISTEN]
        assert len(listening) == 2 and all(ip == "127.0.0.1" for ip, _ in listening)
        # the viewer runs with the configuration in which its analytics are off
        assert psutil.Process(process.pid).environ()["XDG_CONFIG_HOME"] == \
            str(own_viewer_config())
    assert process.poll() is not None          # a web viewer stops with its recording
    assert read_recording(tmp_path / "live.rrd")["/" + paths.EVENTS].rows == 1


def test_play_refuses_a_recording_it_cannot_write_before_the_game(tmp_path):
    (tmp_path / "file").write_text("")
    run = jenga_robot("play", "--solo", "--rrd", str(tmp_path / "file" / "game.rrd"))
    assert run.returncode == 2 and "cannot write the recording" in run.stderr
    assert "starting the simulated cell" not in run.stdout


def test_a_recording_that_fails_stops_itself_and_never_the_robot(default_cell):
    from controller.turn.report import TurnReport
    from controller.viewer.watch import Watch

    said = []

    class Broken:
        say = said.append

        def event(self, *args):
            raise OSError("No space left on device")

        boxes = camera = probe = guard = event

    link = SimpleNamespace(cell=default_cell, arm=SimpleNamespace(device_time=lambda: 3.0))
    watch = Watch(Broken(), link)
    watch.phase("probe", TurnReport(1))                 # raises inside: the turn goes on
    watch.note("layer 4 slot 1 cannot be reached")
    watch.turn_done(TurnReport(1))
    assert said == ["viewer: recording stopped (OSError: No space left on device); the game "
                    "goes on"]
    assert watch.failed.startswith("OSError")


def test_a_match_log_becomes_a_recording_with_its_towers_traces_and_calls(tmp_path):
    from controller.match.log import MatchLog
    from planning.game.rules import MatchConfig, Scoring
    from planning.game.tower import TowerState
    config = MatchConfig(("robot", "person"), Scoring.ROUND_WINS, target_points=1)
    path = tmp_path / "match.jsonl"
    after = TowerState.fresh().moved((5, 1), (19, 1))
    with MatchLog.create(path, {"config": config.to_json(), "opponent": "simulated",
                                "seed": 1}) as log:
        log.append("round_start", round=1, tower=TowerState.fresh().to_json())
        log.append("turn_start", player="robot", turn=1, t=0.0)
        log.append("probe", turn=1, layer=5, slot=1, block=16, threshold_n=0.3, peak_force_n=0.2,
                   travel_mm=4.5, p_loose=0.97, trace=[[1.0, 0.05], [1.004, 0.2], [1.008, 0.1]])
        log.append("place", player="robot", t=20.0, source=[5, 1], target=[19, 1], block=16,
                   probes=1, phases_s={"probe": 5.0}, moves=[],
                   pull_trace=[[8.0, 0.4], [8.004, 0.6]])
        log.append("turn_end", player="robot", turn=1, tower=after.to_json())
        log.append("violation", player="person", code="wrong_orientation",
                   message="laid along the layer below", t=40.0)
        log.append("fall", what="tower", t=45.0)
    rrd = tmp_path / "again.rrd"
    run = jenga_robot("report", str(path), "--rrd", str(rrd))
    assert run.returncode == 0, run.stderr
    assert f"recording: {rrd} (" in run.stdout and "1 probe trace, 1 pull, 2 towers" in run.stdout
    entities = read_recording(rrd)
    towers = entities["/" + paths.TOWER].columns["Boxes3D:centers"]
    assert [len(t) for t in towers] == [54, 54]         # a block moved, none gone
    assert entities[f"/{paths.PROBES}/5.1"].rows == 3
    assert scalars(entities[f"/{paths.PULLS}/5.1"]).max() == 0.6
    lines = texts(entities["/" + paths.EVENTS])
    # worded as the live viewer words it (controller/wording.py)
    assert ("probe layer 5 slot 1: peak 0.20 N under a 0.30 N guard, moved 4.5 mm, p_loose 0.97"
            in lines)
    assert any(line.startswith("violation: ") and "laid along" in line for line in lines)
    assert any(line.startswith("fall: ") for line in lines)
    assert entities["/" + paths.EVENTS].times[-1] == 45.0          # on the log's match time


def test_a_match_event_is_placed_at_the_device_time_it_happened(default_cell):
    from controller.viewer.watch import Watch
    events = []

    class Recording:
        say = print

        def event(self, t, text, level="INFO"):
            events.append((t, text))

        def boxes(self, *args):
            pass

    link = SimpleNamespace(cell=default_cell, arm=SimpleNamespace(device_time=lambda: 500.0))
    watch = Watch(Recording(), link)
    watch.logged({"event": "clock", "world_t": 100.0, "match_t": 130.0})
    watch.logged({"event": "fall", "what": "tower", "t": 175.5})        # match time
    watch.logged({"event": "advance"})                                   # no time: now
    watch.logged({"event": "probe", "layer": 3, "slot": 1, "t": 140.0})  # its own hook has it
    assert events == [(145.5, "fall: what tower, t 175.5"), (500.0, "advance")]
