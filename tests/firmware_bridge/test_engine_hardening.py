"""The device engine on input a host should never send: every command that does not fit is refused
and uses up its sequence number, no number that is not finite is acted on, a corrupt frame latches
COMM where it stands among the frames of its tick, and nothing stops the control loop (issue 23,
defects D1-D4)."""

import copy
import math
import struct
from functools import lru_cache

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from firmware_bridge import messages as m
from firmware_bridge.device.engine import DeviceEngine
from firmware_bridge.framing import Frame
from tests.firmware_bridge.test_engine import Bench, ramp


def raw(bench, kind, body, seq=None):
    """Send a CRC-valid frame of any type and body, as a host with a bug might."""
    if seq is None:
        seq = bench.seq
        bench.seq = (bench.seq + 1) & 0xFFFF
    bench.engine.receive(Frame(seq, kind, body).encode())
    return seq


def corrupt(bench):
    wire = bytearray(Frame(bench.seq, m.Heartbeat.TYPE, b"").encode())
    wire[1] ^= 0x10
    return bytes(wire)


def alive(bench):
    """The loop still runs: telemetry comes, and a new HELLO is answered (after a 0x00 that ends
    any half frame the device holds, as the host's link sends on connecting)."""
    before = sum(isinstance(x, m.Telemetry) for x in bench.inbox)
    bench.engine.receive(b"\x00")
    bench.tick(20)
    assert sum(isinstance(x, m.Telemetry) for x in bench.inbox) > before
    assert isinstance(bench.command(m.Hello()), m.HelloReply)
    assert not bench.engine.stats.internal_errors


def test_d1_chunks_that_disagree_on_the_joint_count_are_refused_and_the_loop_goes_on():
    bench = Bench()
    bench.ready()
    six = tuple((0.1 * i, (0.0,) * 6) for i in range(4))
    five = tuple((0.1 * i, (0.0,) * 5) for i in range(4, 8))
    assert isinstance(bench.command(m.TrajLoad(3, 0, 8, six)), m.Ack)
    assert bench.command(m.TrajLoad(3, 4, 8, five)).reason == m.Reason.BAD_TRAJECTORY
    assert bench.command(m.TrajRun(3)).reason == m.Reason.BAD_TRAJECTORY   # nothing half-loaded
    # a trajectory for an arm of five joints, from its first chunk
    assert bench.command(m.TrajLoad(4, 0, 4, tuple((0.1 * i, (0.0,) * 5) for i in range(4)))) \
        .reason == m.Reason.BAD_TRAJECTORY
    alive(bench)


NOT_FINITE = [math.nan, math.inf, -math.inf]


def test_d2_numbers_that_are_not_finite_are_refused_in_every_command():
    bench = Bench()
    bench.ready()
    times, positions = ramp(np.zeros(6), [0.2, 0, 0, 0, 0, 0], 1.0, n=4)
    for bad in NOT_FINITE:
        pts = [(float(t), tuple(q)) for t, q in zip(times, positions)]
        in_q = list(pts)
        in_q[2] = (in_q[2][0], (bad,) + in_q[2][1][1:])
        in_t = list(pts)
        in_t[3] = (bad, (2.9,) + in_t[3][1][1:])            # a time of NaN and a 2.9 rad jump
        for points in (in_q, in_t):
            reply = bench.command(m.TrajLoad(9, 0, 4, tuple(points)))
            assert reply.reason == m.Reason.MALFORMED
            assert bench.command(m.TrajRun(9)).reason == m.Reason.BAD_TRAJECTORY
        for command in (m.Guard(True, (bad, 0.0, 0.0), 1.0), m.Guard(True, (1.0, 0.0, 0.0), bad),
                        m.Gripper(bad, 5.0), m.Gripper(0.01, bad)):
            assert bench.command(command).reason == m.Reason.MALFORMED, command
        seq = raw(bench, m.Rate.TYPE, struct.pack("<f", bad))
        bench.tick()
        assert bench.reply(seq).reason == m.Reason.MALFORMED
    assert np.all(np.isfinite(bench.engine.setpoint))
    assert not bench.engine.fault
    alive(bench)


def test_the_finite_check_sees_every_number_a_message_carries():
    assert m.finite(m.TrajLoad(1, 0, 2, ((0.0, (0.0, 1.0)),)))
    assert not m.finite(m.TrajLoad(1, 0, 2, ((0.0, (0.0, math.nan)),)))
    assert not m.finite(m.Guard(True, (0.0, math.inf, 0.0), 1.0))
    assert not m.finite(m.Rate(math.nan))
    assert m.finite(m.Heartbeat())


def test_d3_a_command_refused_as_it_is_read_uses_up_its_sequence_number():
    bench = Bench()
    bench.ready()
    bad = [(m.Rate.TYPE, struct.pack("<f", 1.5)), (m.Enable.TYPE, b"\x02"),
           (m.Heartbeat.TYPE, b"\x00"), (0x3F, b"")]
    for kind, body in bad:
        seq = raw(bench, kind, body)
        bench.tick()
        refused = bench.reply(seq)
        expected = m.Reason.UNKNOWN_TYPE if kind == 0x3F else m.Reason.MALFORMED
        assert refused.reason == expected
        # the refused frame sent again is a duplicate: answered the same, nothing run
        duplicates, mark = bench.engine.stats.duplicates, len(bench.inbox)
        raw(bench, kind, body, seq=seq)
        bench.tick()
        assert bench.engine.stats.duplicates == duplicates + 1
        assert [x for x in bench.inbox[mark:] if isinstance(x, m.Nak)] == [refused]
        # the next command, numbered as the document says, runs
        assert isinstance(bench.command(m.Heartbeat()), m.Ack)
    assert not bench.engine.fault


def test_before_the_handshake_a_command_that_does_not_fit_says_why():
    bench = Bench()
    seq = raw(bench, m.Rate.TYPE, struct.pack("<f", 1.5))
    bench.tick()
    assert bench.reply(seq).reason == m.Reason.MALFORMED
    assert bench.command(m.Heartbeat()).reason == m.Reason.NO_HANDSHAKE


def latched_comm(bench):
    bench.ready()
    bench.engine.receive(corrupt(bench))
    bench.tick()
    assert bench.engine.fault == m.Fault.COMM


def test_d4_a_corrupt_frame_after_a_clear_fault_in_the_same_tick_stays_latched():
    bench = Bench()
    latched_comm(bench)
    seq = bench.send(m.ClearFault())
    bench.engine.receive(corrupt(bench))
    bench.tick()
    assert isinstance(bench.reply(seq), m.Ack)
    assert bench.engine.fault == m.Fault.COMM


def test_a_clear_fault_after_a_corrupt_frame_in_the_same_tick_clears_it():
    bench = Bench()
    latched_comm(bench)
    bench.engine.receive(corrupt(bench))
    seq = bench.send(m.ClearFault())
    bench.tick()
    assert isinstance(bench.reply(seq), m.Ack)
    assert not bench.engine.fault


def moving_bench(hardware=None, ticks: int = 100) -> Bench:
    """A bench whose arm runs a 2 s trajectory, `ticks` into it."""
    bench = Bench()
    if hardware is not None:
        bench.engine.hardware = hardware(bench.arm)
    bench.ready()
    times, positions = ramp(bench.engine.setpoint, [0.5, 0, 0, 0, 0, 0], 2.0)
    bench.load(1, times, positions)
    assert isinstance(bench.command(m.TrajRun(1)), m.Ack)
    bench.tick(ticks)
    return bench


class FailingArm:
    """An arm whose reading fails once, as a driver with a bug might."""

    def __init__(self, arm):
        self.arm, self.fail = arm, False

    def read(self):
        if self.fail:
            self.fail = False
            raise RuntimeError("encoder driver returned garbage")
        return self.arm.read()

    def __getattr__(self, name):
        return getattr(self.arm, name)


def test_an_error_of_the_engine_itself_latches_internal_and_stops_the_arm():
    bench = moving_bench(FailingArm)
    failing = bench.engine.hardware
    failing.fail = True
    bench.tick()                                  # does not raise
    assert bench.engine.fault == m.Fault.INTERNAL
    assert "encoder driver returned garbage" in bench.engine.stats.internal_errors[0]
    faults = [e for e in bench.events(m.EventKind.FAULT) if e.code == m.Fault.INTERNAL]
    assert faults
    held = bench.engine.setpoint
    bench.send(m.Heartbeat())
    bench.tick(50)
    assert np.allclose(bench.engine.setpoint, held)          # stopped where it was
    assert isinstance(bench.command(m.ClearFault()), m.Ack)
    assert bench.command(m.TrajRun(1)).reason == m.Reason.NOT_HOMED


class GarbageArm(FailingArm):
    """An arm whose driver hands back a value that is not a finite f32 at every reading."""

    def __init__(self, arm, value):
        super().__init__(arm)
        self.value = value

    def read(self):
        state = self.arm.read()
        state.wrench = state.wrench.copy()
        state.wrench[3] = self.value
        return state


@pytest.mark.parametrize("value", [math.nan, math.inf, 1e39])
def test_a_reading_that_is_not_a_number_latches_internal_and_the_link_goes_on(value):
    bench = moving_bench(ticks=50)
    bench.engine.hardware = GarbageArm(bench.arm, value)
    mark = len(bench.inbox)
    for _ in range(6):                             # every reading is garbage from now on
        bench.send(m.Heartbeat())
        bench.tick(50)
    assert bench.engine.fault == m.Fault.INTERNAL
    held = bench.engine.setpoint
    bench.send(m.Heartbeat())
    bench.tick(100)
    assert np.allclose(bench.engine.setpoint, held)
    telemetry = [x for x in bench.inbox[mark:] if isinstance(x, m.Telemetry)]
    assert len(telemetry) >= 70 and all(math.isfinite(v) for v in telemetry[-1].wrench)
    assert isinstance(bench.command(m.Heartbeat()), m.Ack)        # commands are answered
    stats = bench.engine.stats
    assert stats.internal_error_count >= 300 and len(stats.internal_errors) == 10


def test_a_command_that_fails_inside_the_engine_is_answered_and_the_next_ones_run(monkeypatch):
    bench = Bench()
    bench.ready()

    def broken(self, guard):
        raise ZeroDivisionError("a bug in the guard's setter")
    monkeypatch.setattr(DeviceEngine, "_set_guard", broken)
    failing = bench.send(m.Guard(True, (1.0, 0.0, 0.0), 1.0))
    after = bench.send(m.Tare())                   # in the same tick
    bench.tick()
    assert bench.reply(failing).reason == m.Reason.FAULT_LATCHED
    assert isinstance(bench.reply(after), m.Ack)
    assert bench.engine.fault == m.Fault.INTERNAL
    assert "a bug in the guard's setter" in bench.engine.stats.internal_errors[0]


def test_a_hello_of_another_version_mid_motion_stops_the_arm():
    bench = moving_bench()
    bench.command(m.Hello(m.PROTOCOL_VERSION + 1))
    held = bench.engine.setpoint
    bench.tick(300)
    assert np.allclose(bench.engine.setpoint, held)
    assert bench.events(m.EventKind.STOPPED)
    # and the watchdog, armed by the first handshake, still watches a host that went quiet
    assert bench.engine.fault == m.Fault.WATCHDOG


def test_a_refused_first_chunk_leaves_no_older_trajectory_of_its_id_to_run():
    bench = Bench()
    bench.ready()
    times, positions = ramp(bench.engine.setpoint, [0.2, 0, 0, 0, 0, 0], 1.0)
    bench.load(1, times, positions)
    five = tuple((0.1 * i, (0.0,) * 5) for i in range(4))
    assert bench.command(m.TrajLoad(1, 0, 4, five)).reason == m.Reason.BAD_TRAJECTORY
    assert bench.command(m.TrajRun(1)).reason == m.Reason.BAD_TRAJECTORY
    bench.load(2, times, positions)
    nan = ((0.0, (math.nan,) * 6),) + tuple((0.1 * i, tuple(positions[i])) for i in range(1, 4))
    assert bench.command(m.TrajLoad(2, 0, 4, nan)).reason == m.Reason.MALFORMED
    assert bench.command(m.TrajRun(2)).reason == m.Reason.BAD_TRAJECTORY


COMMAND_TYPES = sorted(set(m.COMMANDS)) + [0x00, 0x3F, 0x7F, 0x80, 0xFF]


F32 = st.floats(width=32)                       # NaN, infinities and extremes included
SMALL = st.floats(-4.0, 4.0, width=32)


@st.composite
def trajectory_chunks(draw):
    """A TRAJ_LOAD of any joint count (the arm has 6), any index and total, any numbers."""
    joints = draw(st.sampled_from([6, 6, 6, 5, 7, 1, 12]))
    count = draw(st.integers(1, m.points_per_frame(joints)))
    value = draw(st.sampled_from([SMALL, F32]))
    points = tuple((draw(value), tuple(draw(value) for _ in range(joints))) for _ in range(count))
    return m.TrajLoad(draw(st.integers(1, 3)), draw(st.integers(0, 9)), draw(st.integers(0, 12)),
                      points)


MESSAGES = st.one_of(
    trajectory_chunks(), st.builds(m.TrajRun, st.integers(0, 3)),
    st.builds(m.Guard, st.booleans(), st.tuples(F32, F32, F32), F32),
    st.builds(m.Gripper, F32, F32), st.builds(m.Rate, F32), st.builds(m.Enable, st.booleans()),
    st.just(m.Home()), st.just(m.Tare()), st.just(m.Stop()), st.just(m.ClearFault()),
    st.just(m.Heartbeat()), st.builds(m.Hello, st.sampled_from([m.PROTOCOL_VERSION, 2, 0xFFFF])))


@st.composite
def ramps(draw):
    """A trajectory from wherever the arm is (resolved when sent), in two chunks then run: in or
    beyond the limits, slow or too fast, and now and then poisoned (one number replaced by any
    f32: NaN, an infinity, an extreme) or with a second chunk of another joint count."""
    odd = st.one_of(st.sampled_from([math.nan, math.inf, -math.inf]), F32)
    poison = draw(st.one_of(st.none(), st.tuples(st.integers(0, 7), st.integers(-1, 5), odd)))
    return ("ramp", draw(st.integers(0, 5)), draw(st.floats(-7.0, 7.0)),
            draw(st.floats(0.01, 3.0)), poison, draw(st.sampled_from([6, 6, 6, 5, 7])))


@st.composite
def frames(draw):
    """What a host with a bug might send: mostly well-formed commands with any numbers, in
    sequence; some frames of any type with any body; now and then garbage, long runs of it too."""
    kind = draw(st.sampled_from(["message"] * 4 + ["ramp"] * 4 + ["raw", "garbage"]))
    numbering = draw(st.sampled_from(["next"] * 8 + ["same", "random"]))
    if kind == "message":
        return draw(MESSAGES), numbering
    if kind == "ramp":
        return draw(ramps()), numbering
    if kind == "raw":
        return (draw(st.sampled_from(COMMAND_TYPES)), draw(st.binary(max_size=240))), numbering
    return draw(st.one_of(st.binary(min_size=1, max_size=16),
                          st.binary(min_size=240, max_size=400).filter(lambda b: 0 not in b))), None


def wire(bench, item, numbering) -> bytes:
    seq = {"next": None, "same": (bench.seq - 1) & 0xFFFF,
           "random": (bench.seq + 7) & 0xFFFF}.get(numbering)
    if seq is None:
        seq, bench.seq = bench.seq, (bench.seq + 1) & 0xFFFF
    if isinstance(item, m.Message):
        return Frame(seq, item.TYPE, item.pack()).encode()
    if isinstance(item, tuple) and item[0] == "ramp":
        _, joint, delta, duration, poison, second_joints = item
        move = np.zeros(6)
        move[joint] = delta
        times, positions = ramp(bench.engine.setpoint, move, duration, n=8)
        points = [[float(t), [float(v) for v in q]] for t, q in zip(times, positions)]
        if poison is not None:
            at, where, value = poison
            if where < 0:
                points[at][0] = value
            else:
                points[at][1][where] = value
        for point in points[4:]:
            point[1] = (point[1] + [0.0])[:second_joints]
        chunks = [m.TrajLoad(1, i, 8, tuple((t, tuple(q)) for t, q in points[i:i + 4]))
                  for i in (0, 4)] + [m.TrajRun(1)]
        out = b""
        for k, message in enumerate(chunks):
            out += Frame((seq + k) & 0xFFFF, message.TYPE, message.pack()).encode()
        bench.seq = (bench.seq + len(chunks) - 1) & 0xFFFF
        return out
    kind, body = item
    return Frame(seq, kind, body).encode()


@lru_cache(maxsize=1)
def _ready():
    """A bench handshaken, enabled and homed (homing takes thousands of ticks: done once)."""
    bench = Bench()
    bench.ready()
    return bench


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(frames(), min_size=1, max_size=25), st.randoms(use_true_random=False))
def test_no_frame_of_any_kind_stops_the_loop_or_moves_the_arm_out_of_its_limits(sent, rnd):
    bench = copy.deepcopy(_ready())
    lows = np.array([j.q_min for j in bench.engine.config.joints])
    highs = np.array([j.q_max for j in bench.engine.config.joints])
    for item, numbering in sent:
        data = wire(bench, item, numbering) if numbering is not None else item
        # the bytes arrive split anywhere across ticks, as a UART delivers them
        cut = rnd.randint(0, len(data))
        for piece in (data[:cut], data[cut:]):
            bench.engine.receive(piece)
            bench.tick(rnd.randint(1, 3))
        setpoint = bench.engine.setpoint
        assert np.all(np.isfinite(setpoint))
        assert np.all(setpoint >= lows - 1e-6) and np.all(setpoint <= highs + 1e-6)
    alive(bench)
