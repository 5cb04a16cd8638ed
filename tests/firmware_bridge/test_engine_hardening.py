"""The device engine on input a host should never send: every command that does not fit is refused
and uses up its sequence number, no number that is not finite is acted on, a corrupt frame latches
COMM where it stands among the frames of its tick, and nothing stops the control loop (issue 23,
defects D1-D4)."""

import copy
import math
import struct
from functools import lru_cache

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from firmware_bridge import messages as m
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


def chunk_body(traj_id, index, total, points):
    joints = len(points[0][1])
    body = struct.pack("<HHHBB", traj_id, index, total, len(points), joints)
    for t, q in points:
        body += struct.pack(f"<f{joints}f", t, *q)
    return body


def test_d1_chunks_that_disagree_on_the_joint_count_are_refused_and_the_loop_goes_on():
    bench = Bench()
    bench.ready()
    six = tuple((0.1 * i, (0.0,) * 6) for i in range(4))
    five = tuple((0.1 * i, (0.0,) * 5) for i in range(4, 8))
    assert isinstance(bench.command(m.TrajLoad(3, 0, 8, six)), m.Ack)
    seq = raw(bench, m.TrajLoad.TYPE, chunk_body(3, 4, 8, five))
    bench.tick()
    assert bench.reply(seq).reason == m.Reason.BAD_TRAJECTORY
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
        expected = m.Reason.UNKNOWN_TYPE if kind == 0x3F else m.Reason.MALFORMED
        assert bench.reply(seq).reason == expected
        # the next command, numbered as the document says, runs
        assert isinstance(bench.command(m.Heartbeat()), m.Ack)
        # the refused frame sent again is a duplicate: answered the same, nothing run
        duplicates = bench.engine.stats.duplicates
        raw(bench, kind, body, seq=(bench.seq - 1) & 0xFFFF)
        bench.tick()
        assert bench.engine.stats.duplicates == duplicates + 1
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
    bench = Bench()
    failing = FailingArm(bench.arm)
    bench.engine.hardware = failing
    bench.ready()
    times, positions = ramp(bench.engine.setpoint, [0.5, 0, 0, 0, 0, 0], 2.0)
    bench.load(1, times, positions)
    assert isinstance(bench.command(m.TrajRun(1)), m.Ack)
    bench.tick(100)
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


COMMAND_TYPES = sorted(set(m.COMMANDS)) + [0x00, 0x3F, 0x7F]


@st.composite
def frames(draw):
    """A frame a host with a bug might send: any command type, a body of fitting or random
    length and content (floats that may be NaN or huge), in or out of sequence, or garbage."""
    kind = draw(st.sampled_from(COMMAND_TYPES))
    if draw(st.booleans()):
        body = draw(st.binary(max_size=64))
    else:
        floats = st.floats(width=32, allow_nan=True, allow_infinity=True)
        values = draw(st.lists(floats, max_size=20))
        head = draw(st.binary(min_size=0, max_size=8))
        body = head + b"".join(struct.pack("<f", v) for v in values)
    return kind, body[:240], draw(st.sampled_from(["next", "same", "random"])), \
        draw(st.binary(max_size=12)), draw(st.booleans())


@lru_cache(maxsize=1)
def _ready():
    """A bench handshaken, enabled and homed (homing takes thousands of ticks: done once)."""
    bench = Bench()
    bench.ready()
    return bench


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(frames(), min_size=1, max_size=25))
def test_no_frame_of_any_kind_stops_the_loop_or_moves_the_arm_out_of_its_limits(sent):
    bench = copy.deepcopy(_ready())
    lows = np.array([j.q_min for j in bench.engine.config.joints])
    highs = np.array([j.q_max for j in bench.engine.config.joints])
    for kind, body, numbering, garbage, with_garbage in sent:
        seq = {"next": None, "same": (bench.seq - 1) & 0xFFFF,
               "random": (bench.seq + 7) & 0xFFFF}[numbering]
        raw(bench, kind, body, seq)
        if with_garbage:
            bench.engine.receive(garbage)
        bench.tick(3)
        setpoint = bench.engine.setpoint
        assert np.all(np.isfinite(setpoint))
        assert np.all(setpoint >= lows - 1e-6) and np.all(setpoint <= highs + 1e-6)
    alive(bench)
