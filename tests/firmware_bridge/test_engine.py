"""The device engine, tick by tick, with an ideal arm: no threads, no clocks, exact answers."""

import numpy as np
import pytest

from firmware_bridge import messages as m
from firmware_bridge.device.engine import DeviceEngine
from firmware_bridge.device.hardware import DeviceConfig
from firmware_bridge.device.ideal_arm import IdealArm
from firmware_bridge.framing import Frame, FrameDecoder

JOINTS = tuple(m.JointInfo(-3.0, 3.0, 1.0, 0.1 * i) for i in range(6))
DT = 0.001


class Bench:
    """A host speaking to an engine, stepping device time by hand."""

    def __init__(self, engine=DeviceEngine, q0=np.zeros(6)):
        self.arm = IdealArm(q0)
        self.engine = engine(DeviceConfig(JOINTS, 0.04, 100.0), self.arm)
        self.t = 0.0
        self.seq = 0
        self.decoder = FrameDecoder()
        self.inbox: list = []

    def send(self, message, seq=None):
        if seq is None:
            seq = self.seq
            self.seq = (self.seq + 1) & 0xFFFF
        self.engine.receive(Frame(seq, message.TYPE, message.pack()).encode())
        return seq

    def tick(self, n=1):
        for _ in range(n):
            self.t += DT
            self.engine.tick(self.t)
            self.inbox += [m.decode(f.type, f.body) for f in self.decoder.feed(self.engine.take_output())]

    def command(self, message, seq=None):
        seq = self.send(message, seq)
        self.tick()
        return self.reply(seq)

    def reply(self, seq):
        for msg in reversed(self.inbox):
            if isinstance(msg, (m.Ack, m.Nak, m.HelloReply)) and msg.cmd_seq == seq:
                return msg
        return None

    def events(self, kind):
        return [e for e in self.inbox if isinstance(e, m.Event) and e.kind == kind]

    def ready(self):
        assert isinstance(self.command(m.Hello()), m.HelloReply)
        assert isinstance(self.command(m.Enable(True)), m.Ack)
        assert isinstance(self.command(m.Home()), m.Ack)
        while not self.events(m.EventKind.HOMED):
            self.tick(10)
            self.send(m.Heartbeat())

    def load(self, traj_id, times, positions):
        replies = []
        per_frame = m.points_per_frame(len(positions[0]))
        for start in range(0, len(times), per_frame):
            pts = tuple((float(times[i]), tuple(positions[i]))
                        for i in range(start, min(start + per_frame, len(times))))
            replies.append(self.command(m.TrajLoad(traj_id, start, len(times), pts)))
        return replies[-1]


@pytest.fixture
def bench():
    return Bench()


def ramp(start, delta, duration, n=20):
    times = np.linspace(0.0, duration, n)
    return times, np.array(start) + np.outer(np.linspace(0, 1, n), delta)


def test_handshake_reports_the_device(bench):
    reply = bench.command(m.Hello(m.PROTOCOL_VERSION))
    assert isinstance(reply, m.HelloReply)
    assert reply.protocol_version == m.PROTOCOL_VERSION and len(reply.joints) == 6
    assert reply.joints[2].q_home == pytest.approx(0.2)
    assert reply.control_hz >= 1000 and reply.telemetry_hz >= 250


def test_version_mismatch_means_the_device_refuses_to_move(bench):
    reply = bench.command(m.Hello(m.PROTOCOL_VERSION + 1))
    assert reply.protocol_version == m.PROTOCOL_VERSION
    refusal = bench.command(m.Enable(True))
    assert isinstance(refusal, m.Nak) and refusal.reason == m.Reason.NO_HANDSHAKE


def test_commands_before_home_are_refused(bench):
    bench.command(m.Hello())
    bench.command(m.Enable(True))
    times, pos = ramp(np.zeros(6), np.full(6, 0.1), 1.0)
    assert isinstance(bench.load(1, times, pos), m.Ack)
    assert bench.command(m.TrajRun(1)).reason == m.Reason.NOT_HOMED


def test_telemetry_at_250_hz_stamped_with_device_time(bench):
    bench.command(m.Hello())
    bench.tick(99)
    telemetry = [x for x in bench.inbox if isinstance(x, m.Telemetry)]
    assert len(telemetry) == 25
    assert telemetry[-1].device_time == pytest.approx(0.1, abs=1e-6)
    assert np.diff([t.device_time_us for t in telemetry]).tolist() == [4000] * 24


def test_a_trajectory_runs_and_ends_where_planned(bench):
    bench.ready()
    start = bench.engine.setpoint
    times, pos = ramp(start, np.full(6, 0.2), 0.5)
    assert isinstance(bench.load(7, times, pos), m.Ack)
    assert isinstance(bench.command(m.TrajRun(7)), m.Ack)
    for _ in range(7):
        bench.tick(90)
        bench.send(m.Heartbeat())
    assert bench.events(m.EventKind.TRAJ_DONE)[0].traj_id == 7
    assert np.allclose(bench.engine.setpoint, pos[-1], atol=1e-6)


def test_speed_and_position_limits_and_start_mismatch_are_refused(bench):
    bench.ready()
    start = bench.engine.setpoint
    fast_t, fast_q = ramp(start, np.full(6, 2.0), 1.0)          # 2 rad/s > 1 rad/s
    assert bench.load(1, fast_t, fast_q).reason == m.Reason.LIMIT
    far_t, far_q = ramp(start, np.full(6, 4.0), 10.0)           # leaves +-3 rad
    assert bench.load(2, far_t, far_q).reason == m.Reason.LIMIT
    off_t, off_q = ramp(start + 0.5, np.full(6, 0.1), 1.0)
    assert isinstance(bench.load(3, off_t, off_q), m.Ack)
    assert bench.command(m.TrajRun(3)).reason == m.Reason.START_MISMATCH


def test_the_guard_stops_motion_within_one_control_tick(bench):
    bench.ready()
    start = bench.engine.setpoint
    times, pos = ramp(start, np.full(6, 0.3), 1.0, n=50)
    bench.load(4, times, pos)
    bench.command(m.Guard(True, (0.0, 0.0, 1.0), 0.5))
    bench.command(m.TrajRun(4))
    bench.tick(150)
    moving = bench.engine.setpoint
    bench.tick()
    assert not np.allclose(bench.engine.setpoint, moving)       # still moving
    bench.arm.force_at = lambda q: np.array([0.0, 0.0, 0.8, 0.0, 0.0, 0.0])
    before = bench.engine.setpoint
    bench.tick()                                                  # the tick that reads 0.8 N
    assert np.array_equal(bench.engine.setpoint, before)          # zero commanded velocity now
    bench.tick(20)
    assert np.array_equal(bench.engine.setpoint, before)
    tripped = bench.events(m.EventKind.GUARD_TRIPPED)
    assert tripped and tripped[0].traj_id == 4 and tripped[0].value == pytest.approx(0.8)
    trip = bench.engine.stats.guard_trips[0]
    assert trip.stop_time - trip.crossing_time == 0.0


def test_watchdog_stops_and_latches_after_200_ms_without_a_frame(bench):
    bench.ready()
    start = bench.engine.setpoint
    times, pos = ramp(start, np.full(6, 0.3), 2.0)
    bench.load(5, times, pos)
    bench.command(m.TrajRun(5))
    bench.tick(199)
    assert not bench.engine.fault
    bench.tick(2)
    assert bench.engine.fault == m.Fault.WATCHDOG
    held = bench.engine.setpoint
    bench.tick(50)
    assert np.array_equal(bench.engine.setpoint, held)


def test_estop_latches_until_cleared_and_then_requires_home(bench):
    bench.ready()
    assert isinstance(bench.command(m.EStop()), m.Ack)
    assert bench.engine.fault == m.Fault.ESTOP
    assert bench.command(m.Home()).reason == m.Reason.FAULT_LATCHED
    assert bench.command(m.Gripper(0.02, 5.0)).reason == m.Reason.FAULT_LATCHED
    assert isinstance(bench.command(m.ClearFault()), m.Ack)
    times, pos = ramp(bench.engine.setpoint, np.full(6, 0.1), 1.0)
    bench.load(6, times, pos)
    assert bench.command(m.TrajRun(6)).reason == m.Reason.NOT_HOMED


def test_a_repeated_command_runs_once_and_a_skipped_one_is_refused(bench):
    bench.ready()
    times, pos = ramp(bench.engine.setpoint, np.full(6, 0.1), 1.0)
    bench.load(8, times, pos)
    seq = bench.send(m.TrajRun(8))
    bench.tick()
    executed = bench.engine.stats.commands_executed
    bench.send(m.TrajRun(8), seq=seq)          # the host did not hear the ACK and sent it again
    bench.tick()
    assert bench.engine.stats.commands_executed == executed
    assert bench.engine.stats.duplicates == 1
    acks = [x for x in bench.inbox if isinstance(x, m.Ack) and x.cmd_seq == seq]
    assert len(acks) == 2
    skipped = bench.command(m.Stop(), seq=(bench.seq + 5) & 0xFFFF)
    assert skipped.reason == m.Reason.OUT_OF_SEQUENCE
    assert not bench.events(m.EventKind.STOPPED)


def test_a_corrupt_frame_latches_a_comm_fault(bench):
    bench.ready()
    wire = bytearray(Frame(bench.seq, m.Heartbeat.TYPE, b"").encode())
    wire[1] ^= 0x10
    bench.engine.receive(bytes(wire))
    bench.tick()
    assert bench.engine.fault == m.Fault.COMM
    assert bench.engine.stats.frames_corrupt == 1


def test_a_reset_forgets_the_handshake_and_the_home(bench):
    bench.ready()
    old = bench.engine.boot_id
    bench.engine.boot(bench.t)
    bench.tick()
    assert bench.engine.boot_id != old
    assert bench.command(m.Home()).reason == m.Reason.NO_HANDSHAKE
    assert bench.events(m.EventKind.BOOT)


def test_gripper_reports_where_it_stopped_on_an_object(bench):
    bench.ready()
    bench.arm.gripper_width = 0.04
    bench.arm.gripper_block = 0.025
    assert isinstance(bench.command(m.Gripper(0.0, 10.0)), m.Ack)
    for _ in range(10):
        bench.tick(50)
        bench.send(m.Heartbeat())
    done = bench.events(m.EventKind.GRIPPER_DONE)
    assert done and done[0].value == pytest.approx(0.025, abs=1e-3)


def _run_for(bench, ticks):
    for _ in range(ticks // 50):
        bench.tick(50)
        bench.send(m.Heartbeat())


def _status(bench):
    return m.Status([t for t in bench.inbox if isinstance(t, m.Telemetry)][-1].status)


def test_a_paused_motion_holds_where_it_is_and_goes_on_from_there(bench):
    bench.ready()
    start = bench.engine.setpoint
    times, pos = ramp(start, np.full(6, 0.2), 0.5)
    bench.load(5, times, pos)
    bench.command(m.TrajRun(5))
    began = bench.t
    _run_for(bench, 200)
    assert isinstance(bench.command(m.Rate(0.0)), m.Ack)       # the tick that pauses
    held = bench.engine.setpoint
    paused = bench.t
    _run_for(bench, 1000)                                          # a second paused
    assert np.array_equal(bench.engine.setpoint, held)
    assert m.Status.PAUSED in _status(bench) and m.Status.MOVING in _status(bench)
    assert not bench.events(m.EventKind.TRAJ_DONE) and not bench.engine.fault
    bench.command(m.Rate(1.0))
    paused_s = bench.t - paused
    _run_for(bench, 250)
    assert not bench.events(m.EventKind.TRAJ_DONE)                 # 0.2 + 0.25 s of 0.5 s run
    _run_for(bench, 100)
    done = bench.events(m.EventKind.TRAJ_DONE)
    # device time counts from boot, the bench's clock from 0: both started together
    assert done and done[0].device_time_us * 1e-6 == pytest.approx(began + 0.5 + paused_s, abs=0.003)
    assert np.allclose(bench.engine.setpoint, pos[-1], atol=1e-6)
    assert m.Status.PAUSED not in _status(bench)


def test_a_slowed_motion_takes_longer_in_proportion(bench):
    bench.ready()
    start = bench.engine.setpoint
    times, pos = ramp(start, np.full(6, 0.1), 0.4)
    bench.load(6, times, pos)
    bench.command(m.Rate(0.5))
    began = bench.t
    bench.command(m.TrajRun(6))
    while not bench.events(m.EventKind.TRAJ_DONE):
        _run_for(bench, 50)
        assert m.Status.SLOWED in _status(bench)
    took = bench.events(m.EventKind.TRAJ_DONE)[0].device_time_us * 1e-6 - began
    assert took == pytest.approx(0.8, abs=0.06)


def test_a_pause_holds_the_fingers_too(bench):
    bench.ready()
    bench.command(m.Gripper(0.04, 10.0))
    _run_for(bench, 500)
    bench.command(m.Gripper(0.0, 10.0))
    _run_for(bench, 100)                                           # closing: 10 mm gone
    bench.command(m.Rate(0.0))
    paused_at = bench.arm.gripper_width
    opened = len(bench.events(m.EventKind.GRIPPER_DONE))
    _run_for(bench, 500)
    assert paused_at > 0.02 and bench.arm.gripper_width == pytest.approx(paused_at, abs=2e-4)
    assert len(bench.events(m.EventKind.GRIPPER_DONE)) == opened      # not done: held
    bench.command(m.Rate(1.0))
    _run_for(bench, 600)
    assert bench.arm.gripper_width == pytest.approx(0.0, abs=1e-6)
    assert bench.events(m.EventKind.GRIPPER_DONE)[-1].value == pytest.approx(0.0, abs=1e-3)


def test_a_rate_outside_zero_to_one_is_refused_and_one_is_taken_in_a_fault(bench):
    bench.ready()
    bench.send(m.Rate(0.5))
    frame_body = np.float32(1.5).tobytes()
    seq = bench.seq
    bench.engine.receive(Frame(seq, m.Rate.TYPE, frame_body).encode())
    bench.tick()
    assert bench.reply(seq).reason == m.Reason.MALFORMED        # and the sequence waits for it
    bench.command(m.EStop())
    assert isinstance(bench.command(m.Rate(0.0)), m.Ack)           # pausing moves nothing


def test_the_safety_input_holds_motion_in_its_tick_until_clear_for_the_hold(bench):
    bench.ready()
    hold = bench.engine.config.presence_hold_s
    start = bench.engine.setpoint
    times, pos = ramp(start, np.full(6, 0.2), 0.5)
    bench.load(7, times, pos)
    bench.command(m.TrajRun(7))
    _run_for(bench, 100)
    bench.arm.presence = True                         # a hand breaks a beam
    before = bench.engine.setpoint
    bench.tick()                                      # the very tick that reads it
    held = bench.engine.setpoint
    assert np.array_equal(held, before)
    bench.tick(4)                                     # the next telemetry says why
    assert m.Status.PRESENCE in _status(bench) and m.Status.PAUSED not in _status(bench)
    _run_for(bench, 300)
    assert np.array_equal(bench.engine.setpoint, held)
    bench.arm.presence = False                        # gone: the arm waits out the hold
    cleared = bench.t
    while m.Status.PRESENCE in _status(bench):
        if bench.t - cleared < hold - 0.002:
            assert np.array_equal(bench.engine.setpoint, held)   # not a tick of motion
        bench.tick(2)
        bench.send(m.Heartbeat())
    assert bench.t - cleared == pytest.approx(hold, abs=0.01)
    while not bench.events(m.EventKind.TRAJ_DONE):       # then on from where it stopped
        _run_for(bench, 50)
    assert np.allclose(bench.engine.setpoint, pos[-1], atol=1e-6) and not bench.engine.fault


def test_the_safety_input_holds_the_fingers_and_outlasts_a_rate_the_host_sets(bench):
    bench.ready()
    bench.command(m.Gripper(0.04, 10.0))
    _run_for(bench, 100)
    bench.arm.presence = True
    bench.tick()
    width = bench.arm.gripper_width
    assert isinstance(bench.command(m.Rate(1.0)), m.Ack)   # the host cannot override it
    _run_for(bench, 300)
    assert bench.arm.gripper_width == pytest.approx(width, abs=2e-4)
    bench.arm.presence = False
    _run_for(bench, int(bench.engine.config.presence_hold_s * 1000) + 500)
    assert bench.arm.gripper_width == pytest.approx(0.04, abs=1e-6)


def test_a_held_world_still_answers_the_host_and_nothing_moves():
    """A simulated cell waiting for its renderer holds its world; the device keeps answering on
    the link (so the host sees it alive), sends no telemetry of a time that did not pass, and
    moves nothing."""
    bench = Bench()
    bench.ready()
    setpoint = bench.arm.read().q.copy()
    bench.inbox.clear()
    for _ in range(500):                  # half a second of wall time, no device time
        seq = bench.send(m.Heartbeat())
        bench.engine.serve_link(bench.t)
        bench.inbox += [m.decode(f.type, f.body)
                        for f in bench.decoder.feed(bench.engine.take_output())]
        assert isinstance(bench.reply(seq), m.Ack)
    assert not any(isinstance(msg, m.Telemetry) for msg in bench.inbox)
    assert not any(isinstance(msg, m.Event) and msg.kind == m.EventKind.FAULT for msg in bench.inbox)
    np.testing.assert_array_equal(bench.arm.read().q, setpoint)
    bench.tick(4)                           # the world goes on from the same moment
    assert isinstance(bench.inbox[-1], m.Telemetry) and not bench.inbox[-1].status & m.Status.FAULT
