"""Hardware in the loop: `jenga-robot sim serve` as a separate process; ArmClient connects through
its pty exactly as to a real arm, and its camera streams serve frames stamped with sim time."""

import json
import re
import subprocess
import sys
import urllib.error
import urllib.request

import numpy as np
import pytest

from firmware_bridge.client import ArmClient, MotionOutcome
from planning.motion.planner import MotionPlanner

pytestmark = pytest.mark.hil


@pytest.fixture(scope="module")
def served():
    proc = subprocess.Popen([sys.executable, "-u", "-m", "controller.cli", "sim", "serve", "--seed", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines = {}
    try:
        while len(lines) < 3:
            line = proc.stdout.readline()
            if not line:
                raise RuntimeError(f"sim serve ended: {proc.stderr.read()}")
            match = re.match(r"(serial|camera \w+): (\S+)", line.strip())
            if match:
                lines[match.group(1)] = match.group(2)
        yield lines
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_arm_client_moves_the_simulated_arm_through_the_pty(served, default_cell):
    assert re.match(r"/dev/pts/\d+$", served["serial"])
    planner = MotionPlanner(default_cell)
    with ArmClient(served["serial"]) as arm:
        assert arm.info.joint_count == 6
        arm.enable()
        arm.home(timeout_s=30)
        arm.tare()
        q0 = np.array(arm.telemetry().q)
        assert np.allclose(q0, default_cell.arm.home, atol=0.01)
        goal = q0 + np.radians([20, -10, 15, 10, -20, 30])
        trajectory = planner.transit(q0, goal, tower_layers=18).moves[0].trajectory
        result = arm.follow(trajectory.times, trajectory.positions)
        assert result.outcome is MotionOutcome.DONE
        settled = arm.wait_for(lambda t: np.allclose(t.q, goal, atol=np.radians(0.2)), timeout_s=2.0)
        assert settled.device_time > result.device_time - 1e-6
        width = arm.gripper(0.02, 10.0)
        assert width == pytest.approx(0.02, abs=0.002)
        # Telemetry is stamped with the simulator's clock and flows at 250 Hz of it.
        a = arm.telemetry()
        b = arm.wait_for(lambda t: t.device_time >= a.device_time + 0.2, timeout_s=1.0)
        assert b.device_time > a.device_time


def test_cameras_serve_mjpeg_stamped_with_simulation_time(served):
    url = served["camera left"]
    assert re.match(r"http://127\.0\.0\.1:\d+/left\.mjpg$", url)
    with urllib.request.urlopen(url, timeout=20) as stream:
        assert stream.headers["Content-Type"].startswith("multipart/x-mixed-replace")
        stamps = []
        while len(stamps) < 2:
            line = stream.readline().decode(errors="replace").strip()
            if line.startswith("X-Timestamp:"):
                stamps.append(float(line.split(":", 1)[1]))
    assert stamps[1] > stamps[0] >= 0.0


def test_perception_reads_the_tower_from_the_served_streams(served, default_cell):
    from perception.pipeline import Perception
    from perception.sources import open_source
    sources = [open_source(c.name, served[f"camera {c.name}"], c.width, c.height, c.fps, timeout_s=10.0,
                           min_fps=1.0).connect(check_s=20.0) for c in default_cell.cameras]
    try:
        frames = {s.name: s.read(timeout_s=10.0) for s in sources}
        obs = Perception(default_cell).observe(frames).observation
        assert obs.tower_state().stories() == "18"
        assert all(f.time > 0 for f in frames.values())   # simulation time, not the host's clock
    finally:
        for s in sources:
            s.close()


def test_the_simulated_person_is_told_when_to_play(served):
    base = served["camera left"].rsplit("/", 1)[0]

    def post(body: bytes):
        request = urllib.request.Request(base + "/person/turn", data=body, method="POST",
                                         headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    with urllib.request.urlopen(base + "/person.json", timeout=10) as reply:
        assert json.loads(reply.read())["state"] == "idle"
    assert post(b'{"mistake": "juggling"}')[0] == 409
    code, status = post(b"{}")
    assert code == 200 and status["state"] == "playing" and status["turn"] == 1
    code, refusal = post(b"{}")
    assert code == 409 and "already playing" in refusal["error"]


def test_the_actions_take_json_from_this_machine_only(served):
    """A malformed request gets a reply that says what is wrong, and the server goes on; a web
    page in a browser on this machine cannot rebuild the tower (cross-origin, or not JSON)."""
    import http.client
    from urllib.parse import urlsplit

    address = urlsplit(served["camera left"])

    def post(headers: dict, body: bytes = b"{}"):
        conn = http.client.HTTPConnection(address.hostname, address.port, timeout=10)
        conn.putrequest("POST", "/tower/rebuild")
        for key, value in headers.items():
            conn.putheader(key, value)
        conn.endheaders()
        conn.send(body)
        reply = conn.getresponse()
        answer = reply.status, json.loads(reply.read())
        conn.close()
        return answer

    code, answer = post({"Content-Type": "application/json", "Content-Length": "abc"})
    assert code == 400 and "Content-Length" in answer["error"]
    code, answer = post({"Content-Type": "text/plain", "Content-Length": "2"})
    assert code == 415 and "application/json" in answer["error"]
    code, answer = post({"Content-Type": "application/json", "Content-Length": "2",
                         "Origin": "http://evil.example"})
    assert code == 403 and "cross-origin" in answer["error"]
    code, answer = post({"Content-Type": "application/json", "Content-Length": "5"}, b"[1,2]")
    assert code == 400 and "JSON object" in answer["error"]
    code, answer = post({"Content-Type": "application/json", "Content-Length": "9999999"})
    assert code == 413
    with urllib.request.urlopen(served["camera left"].rsplit("/", 1)[0] + "/person.json",
                                timeout=10) as reply:
        assert json.loads(reply.read())["state"] in ("idle", "playing", "done")


def test_sim_serve_records_what_really_is(tmp_path):
    """`sim serve --rrd`: the simulator's truth a few times a second, for whoever runs it."""
    import signal
    import time

    from controller.viewer.recorder import paths
    from controller.viewer.sim_watch import TRUTH_BLOCKS
    from tests.recordings import read_recording, scalars

    rrd = tmp_path / "cell.rrd"
    proc = subprocess.Popen([sys.executable, "-u", "-m", "controller.cli", "sim", "serve", "--seed",
                             "1", "--rrd", str(rrd)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        cameras = []
        while "serving until interrupted" not in (line := proc.stdout.readline()):
            assert line, f"sim serve ended: {proc.stderr.read()}"
            if line.startswith("camera "):
                cameras.append(line.split(": ", 1)[1].strip())
        # the cell renders while someone watches: a frame of each, as a controller takes them
        for url in cameras:
            with urllib.request.urlopen(url.replace(".mjpg", ".jpg"), timeout=30) as reply:
                assert reply.status == 200
        time.sleep(2.0)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert f"recording: {rrd}" in out
    entities = read_recording(rrd)
    towers = entities["/" + TRUTH_BLOCKS].columns["Boxes3D:centers"]
    assert len(towers) >= 4 and all(len(t) == 54 for t in towers)
    heights = sorted(c[2] for c in towers[-1])
    assert 0.0 < heights[0] < 0.02 and 0.25 < heights[-1] < 0.30        # 18 layers standing
    assert scalars(entities["/" + paths.JOINTS]).shape[1] == 6
    assert entities[f"/{paths.CAMERAS}/left"].rows >= 1
    assert entities[f"/{paths.CAMERAS}/right"].rows >= 1
