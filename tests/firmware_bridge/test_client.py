"""ArmClient over a real pty to the device engine driving an ideal arm: handshake, motions, and
every link fault ending in a typed error with the arm stopped and nothing moving until re-homed."""

import threading

import numpy as np
import pytest

from firmware_bridge import messages as m
from firmware_bridge.client import ArmClient, MotionOutcome
from firmware_bridge.device import engine as engine_module
from firmware_bridge.device.hardware import DeviceConfig
from firmware_bridge.device.ideal_arm import IdealArm
from firmware_bridge.device.runner import DeviceRunner
from firmware_bridge.errors import (CommandRefused, CorruptFrameError, DeviceFault, DeviceResetError,
                                    FrameDropError, LinkError, LinkStalledError, PortClosedError,
                                    VersionMismatchError)

# The slack a device thread on this machine's clock gets (see `connect`).
SLACK_S = 0.5
JOINTS = tuple(m.JointInfo(-3.0, 3.0, 1.5, 0.05 * i) for i in range(6))


def connect(device) -> ArmClient:
    """A client to the device thread. That thread shares two cores with the parallel suite, and
    its clock is this machine's, so it gets the slack the product gives any simulated device
    (SLACK_S) for a silent link and for an answer, not the tight limits of a real
    microcontroller (a starved device thread once answered a heartbeat 80 ms late by its own clock,
    in CI at 858e38c); a link that goes silent for good is still found stalled, and an answer that
    never comes still found missing. (The simulated cell's own slack, SIM_STALL_S, is a dead
    process's: its world waits for the host.)"""
    return ArmClient(device.path, stall_s=SLACK_S, ack_timeout_s=SLACK_S)


@pytest.fixture
def device():
    arm = IdealArm(np.zeros(6))
    # The device's clock is this machine's: with the suite's other worker busy beside it, the
    # client's 50 ms heartbeat thread can wait 200 ms for a core and trip a microcontroller's
    # watchdog (seen on a loaded machine, in HOME's answer: FAULT_LATCHED, WATCHDOG). So the
    # device watches with the stall limit's slack; its 200 ms is held by test_engine.py on the
    # engine's own clock.
    config = DeviceConfig(JOINTS, 0.04, 100.0, watchdog_s=SLACK_S)
    runner = DeviceRunner(config, arm).start()
    runner.arm = arm
    yield runner
    runner.stop()


def ready(client):
    client.enable()
    client.home(timeout_s=10)
    client.tare()


def ramp(client, delta, duration=1.0, n=40):
    """A straight move by `delta` from where the arm is commanded to be (the device checks a
    move's start against its set-point; the measured joints may still be settling after the home,
    and on a loaded machine were once off by more than the start tolerance)."""
    start = np.array(client.telemetry().q_set)
    times = np.linspace(0.0, duration, n)
    return times, start + np.outer(np.linspace(0, 1, n), delta)


def test_connect_home_and_follow(device):
    with connect(device) as client:
        assert client.info.joint_count == 6 and client.info.telemetry_hz >= 250
        ready(client)
        times, pos = ramp(client, np.full(6, 0.1))
        result = client.follow(times, pos)
        assert result.outcome is MotionOutcome.DONE
        assert np.allclose(result.q, pos[-1], atol=0.01)
        assert client.gripper(0.03) == pytest.approx(0.03, abs=1e-3)


def test_guarded_motion_stops_on_force(device):
    with connect(device) as client:
        ready(client)
        home = np.array([j.q_home for j in client.info.joints])
        device.arm.force_at = lambda q: np.array([0.0, 0.0, 3.0 if q[0] > home[0] + 0.05 else 0.0, 0, 0, 0])
        times = np.linspace(0, 1.0, 40)
        pos = home + np.outer(np.linspace(0, 1, 40), [0.2, 0, 0, 0, 0, 0])
        result = client.follow(times, pos, guard=((0.0, 0.0, 1.0), 1.0))
        assert result.outcome is MotionOutcome.GUARD and result.force_n == pytest.approx(3.0)
        assert home[0] + 0.04 < result.q[0] < home[0] + 0.08


def test_a_paused_motion_waits_out_the_pause_and_ends_where_planned(device):
    with connect(device) as client:
        ready(client)
        times, pos = ramp(client, np.full(6, 0.1), duration=0.5, n=20)
        handle = client.follow(times, pos, wait=False)
        client.set_rate(0.0)                        # a hand in the workspace
        assert client.rate == 0.0
        paused = client.wait_for(lambda t: m.Status.PAUSED in m.Status(t.status), 1.0)
        # paused for longer than the wait would allow the whole motion (1.5 x 0.5 + 2 s)
        client.wait_for(lambda t: t.device_time > paused.device_time + 3.0, 5.0)
        assert np.allclose(client.telemetry().q_set, paused.q_set)
        client.set_rate(1.0)
        result = client.wait_motion(handle)
        assert result.outcome is MotionOutcome.DONE and np.allclose(result.q, pos[-1], atol=0.01)
        with pytest.raises(ValueError, match="within 0..1"):
            client.set_rate(2.0)


def test_a_new_host_starts_a_device_left_paused_at_full_pace(device):
    with connect(device) as client:
        client.set_rate(0.0)
    with connect(device) as client:
        assert client.rate == 1.0
        # the pace was set during the handshake; the reading after it shows it
        client.wait_for(lambda t: m.Status.PAUSED not in m.Status(t.status), 1.0)


def test_version_mismatch_is_refused(device, monkeypatch):
    monkeypatch.setattr(engine_module, "PROTOCOL_VERSION", m.PROTOCOL_VERSION + 1)
    with pytest.raises(VersionMismatchError, match="protocol"):
        connect(device).connect()


def test_refusals_say_what_to_do(device):
    with connect(device) as client:
        client.enable()
        times, pos = ramp(client, np.full(6, 0.05))
        with pytest.raises(CommandRefused, match="NOT_HOMED.*Home the arm first"):
            client.follow(times, pos)


def start_move(client):
    ready(client)
    times, pos = ramp(client, np.full(6, 0.3), duration=2.0)
    return client.follow(times, pos, wait=False)


def break_link_and_wait(client, handle):
    with pytest.raises(LinkError) as err:
        client.wait_motion(handle, timeout_s=5.0)
    return err.value


def one_shot(transform):
    """A tap that applies `transform` to one chunk of output, once armed."""
    state = {"armed": False, "done": False}

    def tap(data):
        if state["armed"] and not state["done"] and data:
            state["done"] = True
            return transform(data)
        return data
    return tap, state


def assert_device_stopped_and_needs_home(device):
    def stopped(engine):
        return engine._motion is None
    deadline = threading.Event()
    for _ in range(100):
        if device.run_locked(stopped) and device.run_locked(lambda e: bool(e.fault) or not e._homed):
            break
        deadline.wait(0.01)
    assert device.run_locked(stopped)
    # Nothing moves until the host re-homes.
    with connect(device) as client:
        client.clear_fault()
        client.enable()
        times, pos = ramp(client, np.full(6, 0.05))
        with pytest.raises(CommandRefused, match="NOT_HOMED"):
            client.follow(times, pos)
        client.home(timeout_s=10)


def test_corrupt_bytes(device):
    client = connect(device).__enter__()
    handle = start_move(client)
    tap, state = one_shot(lambda d: d[:3] + bytes([d[3] ^ 0x5A]) + d[4:])
    device.tap_out = tap
    state["armed"] = True
    assert isinstance(break_link_and_wait(client, handle), CorruptFrameError)
    device.tap_out = None
    client.close()
    assert_device_stopped_and_needs_home(device)


def test_dropped_frames(device):
    client = connect(device).__enter__()
    handle = start_move(client)

    def drop_first_frame(data):
        end = data.index(0) + 1
        return data[end:]
    tap, state = one_shot(drop_first_frame)
    device.tap_out = tap
    state["armed"] = True
    assert isinstance(break_link_and_wait(client, handle), FrameDropError)
    device.tap_out = None
    client.close()
    assert_device_stopped_and_needs_home(device)


def test_a_stalled_link(device):
    client = connect(device).__enter__()
    handle = start_move(client)
    device.tap_out = lambda data: b""
    device.tap_in = lambda data: b""
    assert isinstance(break_link_and_wait(client, handle), LinkStalledError)
    deadline = threading.Event()
    for _ in range(100):
        if device.run_locked(lambda e: e.fault & m.Fault.WATCHDOG):
            break
        deadline.wait(0.01)
    assert device.run_locked(lambda e: e.fault & m.Fault.WATCHDOG)   # stopped on its own
    device.tap_out = device.tap_in = None
    client.close()
    assert_device_stopped_and_needs_home(device)


def test_port_closed_mid_move(device):
    client = connect(device).__enter__()
    handle = start_move(client)
    device.port.close()
    error = break_link_and_wait(client, handle)
    assert isinstance(error, (PortClosedError, LinkStalledError))
    client.close()
    for _ in range(100):
        if device.run_locked(lambda e: e.fault & m.Fault.WATCHDOG):
            break
        threading.Event().wait(0.01)
    assert device.run_locked(lambda e: e._motion is None and e.fault & m.Fault.WATCHDOG)


def test_device_reset_mid_move(device):
    client = connect(device).__enter__()
    handle = start_move(client)
    device.reset_device()
    assert isinstance(break_link_and_wait(client, handle), DeviceResetError)
    client.close()
    assert device.run_locked(lambda e: e._motion is None and not e._homed)
    with connect(device) as again:
        again.enable()
        times, pos = ramp(again, np.full(6, 0.05))
        with pytest.raises(CommandRefused, match="NOT_HOMED"):
            again.follow(times, pos)


def test_estop_is_a_device_fault_until_cleared(device):
    with connect(device) as client:
        handle = start_move(client)
        client.estop()
        with pytest.raises(DeviceFault, match="ESTOP"):
            client.wait_motion(handle, timeout_s=5.0)
        client.clear_fault()
        client.home(timeout_s=10)


def test_leaving_the_with_block_stops_the_arm(device):
    with pytest.raises(RuntimeError):
        with connect(device) as client:
            start_move(client)
            raise RuntimeError("controller crashed")
    for _ in range(100):
        if device.run_locked(lambda e: e._motion is None):
            break
        threading.Event().wait(0.01)
    assert device.run_locked(lambda e: e._motion is None)
