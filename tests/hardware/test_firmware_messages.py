"""The C firmware's messages against the reference (firmware_bridge/messages.py): every command
body reads the same way (or is refused for the same reason), and every message the device sends is
packed byte for byte as the reference packs it (issue 23, item 3)."""

import ctypes
import struct

import pytest
from hypothesis import given, settings, strategies as st

from firmware_bridge import messages as m
from tests.hardware.firmware_build import core_library

MAX_JOINTS, MAX_POINTS = 12, 8


class TrajLoadC(ctypes.Structure):
    _fields_ = [("traj_id", ctypes.c_uint16), ("index", ctypes.c_uint16), ("total", ctypes.c_uint16),
                ("count", ctypes.c_uint8), ("joints", ctypes.c_uint8),
                ("t", ctypes.c_float * MAX_POINTS), ("q", (ctypes.c_float * MAX_JOINTS) * MAX_POINTS)]


class GuardC(ctypes.Structure):
    _fields_ = [("enabled", ctypes.c_uint8), ("direction", ctypes.c_float * 3),
                ("threshold_n", ctypes.c_float)]


class GripperC(ctypes.Structure):
    _fields_ = [("width_m", ctypes.c_float), ("force_n", ctypes.c_float)]


class CommandUnion(ctypes.Union):
    _fields_ = [("protocol_version", ctypes.c_uint16), ("on", ctypes.c_uint8), ("load", TrajLoadC),
                ("traj_id", ctypes.c_uint16), ("guard", GuardC), ("gripper", GripperC),
                ("scale", ctypes.c_float)]


class CommandC(ctypes.Structure):
    _fields_ = [("type", ctypes.c_uint8), ("u", CommandUnion)]


class JointInfoC(ctypes.Structure):
    _fields_ = [("q_min", ctypes.c_float), ("q_max", ctypes.c_float), ("speed_max", ctypes.c_float),
                ("q_home", ctypes.c_float)]


class HelloReplyC(ctypes.Structure):
    _fields_ = [("cmd_seq", ctypes.c_uint16), ("protocol_version", ctypes.c_uint16),
                ("firmware_version", ctypes.c_uint8 * 3), ("boot_id", ctypes.c_uint32),
                ("control_hz", ctypes.c_uint16), ("telemetry_hz", ctypes.c_uint16),
                ("max_points", ctypes.c_uint16), ("gripper_stroke_m", ctypes.c_float),
                ("force_range_n", ctypes.c_float), ("joint_count", ctypes.c_uint8),
                ("joints", JointInfoC * MAX_JOINTS)]


class TelemetryC(ctypes.Structure):
    _fields_ = [("device_time_us", ctypes.c_uint64), ("boot_id", ctypes.c_uint32),
                ("status", ctypes.c_uint16), ("fault", ctypes.c_uint16), ("traj_id", ctypes.c_uint16),
                ("last_cmd_seq", ctypes.c_uint16), ("joint_count", ctypes.c_uint8),
                ("q", ctypes.c_float * MAX_JOINTS), ("qd", ctypes.c_float * MAX_JOINTS),
                ("gripper_width_m", ctypes.c_float), ("wrench", ctypes.c_float * 6),
                ("q_set", ctypes.c_float * MAX_JOINTS)]


class EventC(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_uint8), ("device_time_us", ctypes.c_uint64),
                ("traj_id", ctypes.c_uint16), ("code", ctypes.c_uint16), ("value", ctypes.c_float)]


@pytest.fixture(scope="module")
def core():
    lib = core_library()
    lib.jr_command_decode.argtypes = [ctypes.c_uint8, ctypes.c_char_p, ctypes.c_size_t,
                                      ctypes.POINTER(CommandC)]
    for name in ("jr_ack_pack", "jr_nak_pack", "jr_hello_reply_pack", "jr_telemetry_pack",
                 "jr_event_pack"):
        getattr(lib, name).restype = ctypes.c_size_t
    lib.jr_points_per_frame.restype = ctypes.c_uint
    return lib


def as_reference(c: CommandC) -> m.Message:
    """The C reading as the reference's message, to compare."""
    u, kind = c.u, c.type
    simple = {m.Heartbeat.TYPE: m.Heartbeat, m.Home.TYPE: m.Home, m.Tare.TYPE: m.Tare,
              m.Stop.TYPE: m.Stop, m.EStop.TYPE: m.EStop, m.ClearFault.TYPE: m.ClearFault}
    if kind in simple:
        return simple[kind]()
    if kind == m.Hello.TYPE:
        return m.Hello(u.protocol_version)
    if kind == m.Enable.TYPE:
        return m.Enable(bool(u.on))
    if kind == m.TrajRun.TYPE:
        return m.TrajRun(u.traj_id)
    if kind == m.Guard.TYPE:
        return m.Guard(bool(u.guard.enabled), tuple(u.guard.direction), u.guard.threshold_n)
    if kind == m.Gripper.TYPE:
        return m.Gripper(u.gripper.width_m, u.gripper.force_n)
    if kind == m.Rate.TYPE:
        return m.Rate(u.scale)
    load = u.load
    return m.TrajLoad(load.traj_id, load.index, load.total,
                      tuple((load.t[i], tuple(load.q[i][:load.joints])) for i in range(load.count)))


def same(a: m.Message, b: m.Message) -> bool:
    """Equal, NaN equal to NaN (compared by their bytes)."""
    return type(a) is type(b) and a.pack() == b.pack()


F32 = st.floats(width=32)
COMMANDS = st.one_of(
    st.builds(m.Hello, st.integers(0, 0xFFFF)), st.just(m.Heartbeat()),
    st.builds(m.Enable, st.booleans()), st.just(m.Home()),
    st.integers(1, MAX_JOINTS).flatmap(lambda j: st.builds(
        m.TrajLoad, st.integers(0, 0xFFFF), st.integers(0, 0xFFFF), st.integers(0, 0xFFFF),
        st.lists(st.tuples(F32, st.tuples(*[F32] * j)), min_size=1,
                 max_size=m.points_per_frame(j)).map(tuple))),
    st.builds(m.TrajRun, st.integers(0, 0xFFFF)),
    st.builds(m.Guard, st.booleans(), st.tuples(F32, F32, F32), F32),
    st.builds(m.Gripper, F32, F32), st.just(m.Tare()), st.just(m.Stop()), st.just(m.EStop()),
    st.just(m.ClearFault()))
BODIES = st.one_of(COMMANDS.map(lambda c: (c.TYPE, c.pack())),
                   st.tuples(st.integers(0, 0xFF), st.binary(max_size=240)),
                   st.tuples(st.just(m.Rate.TYPE), F32.map(lambda v: struct.pack("<f", v))),
                   st.tuples(st.just(m.TrajLoad.TYPE), st.binary(min_size=8, max_size=240)))


@settings(max_examples=1000, deadline=None)
@given(BODIES)
def test_every_command_body_reads_as_the_reference_reads_it(core, kind_body):
    kind, body = kind_body
    command = CommandC()
    result = core.jr_command_decode(kind, body, len(body), ctypes.byref(command))
    try:
        expected = m.decode(kind, body)
    except m.MessageError:
        unknown = kind not in m.MESSAGES or kind >= 0x80
        assert result == (2 if unknown else 1), (kind, body)         # UNKNOWN_TYPE or MALFORMED
        return
    if kind >= 0x80:
        assert result == 2                                          # not a command: unknown here
        return
    assert result in (0, -1), (kind, body, result)
    assert (result == 0) == m.finite(expected)                      # -1: refused as not finite
    assert same(as_reference(command), expected)


@pytest.mark.parametrize("joints", [0, *range(1, 14)])
def test_points_per_frame_as_the_reference(core, joints):
    expected = m.points_per_frame(joints) if 1 <= joints <= MAX_JOINTS else 0
    assert core.jr_points_per_frame(joints) == expected


def packed(core, name, message) -> bytes:
    out = ctypes.create_string_buffer(240)
    n = getattr(core, name)(ctypes.byref(message), out)
    return out.raw[:n]


u16, u32, u64 = st.integers(0, 0xFFFF), st.integers(0, 2**32 - 1), st.integers(0, 2**64 - 1)


@settings(max_examples=300, deadline=None)
@given(u16, st.integers(0, 255))
def test_acks_and_naks_are_packed_as_the_reference_packs_them(core, seq, reason):
    out = ctypes.create_string_buffer(8)
    n = core.jr_ack_pack(seq, out)
    assert out.raw[:n] == m.Ack(seq).pack()
    n = core.jr_nak_pack(seq, reason, out)
    assert out.raw[:n] == m.Nak(seq, reason).pack()


@settings(max_examples=300, deadline=None)
@given(u16, u16, st.tuples(*[st.integers(0, 255)] * 3), u32, u16, u16, u16, F32, F32,
       st.lists(st.tuples(F32, F32, F32, F32), max_size=MAX_JOINTS))
def test_hello_replies_are_packed_as_the_reference_packs_them(core, seq, version, firmware, boot,
                                                            control, telemetry, points, stroke,
                                                            force, joints):
    c = HelloReplyC(seq, version, (ctypes.c_uint8 * 3)(*firmware), boot, control, telemetry, points,
                    stroke, force, len(joints))
    for i, j in enumerate(joints):
        c.joints[i] = JointInfoC(*j)
    ref = m.HelloReply(seq, version, firmware, boot, control, telemetry, points, stroke, force,
                       tuple(m.JointInfo(*j) for j in joints))
    assert packed(core, "jr_hello_reply_pack", c) == ref.pack()


@settings(max_examples=300, deadline=None)
@given(u64, u32, u16, u16, u16, u16, st.integers(1, MAX_JOINTS).flatmap(
    lambda n: st.tuples(*[st.tuples(*[F32] * n)] * 3)), F32, st.tuples(*[F32] * 6))
def test_telemetry_is_packed_as_the_reference_packs_it(core, t, boot, status, fault, traj, last,
                                                      joints, width, wrench):
    q, qd, q_set = joints
    n = len(q)
    c = TelemetryC(t, boot, status, fault, traj, last, n, (ctypes.c_float * MAX_JOINTS)(*q),
                   (ctypes.c_float * MAX_JOINTS)(*qd), width, (ctypes.c_float * 6)(*wrench),
                   (ctypes.c_float * MAX_JOINTS)(*q_set))
    ref = m.Telemetry(t, boot, status, fault, traj, last, q, qd, width, wrench, q_set)
    assert packed(core, "jr_telemetry_pack", c) == ref.pack()


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 255), u64, u16, u16, F32)
def test_events_are_packed_as_the_reference_packs_them(core, kind, t, traj, code, value):
    c = EventC(kind, t, traj, code, value)
    assert packed(core, "jr_event_pack", c) == m.Event(kind, t, traj, code, value).pack()
