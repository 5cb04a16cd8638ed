"""Every message round-trips through its byte layout; bad bodies are refused."""

import math

import pytest
from hypothesis import given, strategies as st

from firmware_bridge import messages as m

f32 = st.floats(-1e6, 1e6, allow_nan=False, width=32)
u16 = st.integers(0, 0xFFFF)
joints6 = st.tuples(*[f32] * 6)

MESSAGES = st.one_of(
    st.builds(m.Hello, u16),
    st.just(m.Heartbeat()), st.builds(m.Enable, st.booleans()), st.just(m.Home()),
    st.builds(m.TrajLoad, u16, u16, u16, st.lists(st.tuples(f32, joints6), min_size=1,
                                                   max_size=m.MAX_POINTS_PER_FRAME).map(tuple)),
    st.builds(m.TrajRun, u16),
    st.builds(m.Guard, st.booleans(), st.tuples(f32, f32, f32), f32),
    st.builds(m.Gripper, f32, f32), st.just(m.Tare()), st.just(m.Stop()), st.just(m.EStop()),
    st.just(m.ClearFault()),
    st.builds(m.Ack, u16), st.builds(m.Nak, u16, st.integers(0, 255)),
    st.builds(m.HelloReply, u16, u16, st.tuples(*[st.integers(0, 255)] * 3), st.integers(0, 2**32 - 1),
              u16, u16, u16, f32, f32, st.lists(st.builds(m.JointInfo, f32, f32, f32, f32),
                                                max_size=7).map(tuple)),
    st.builds(m.Telemetry, st.integers(0, 2**64 - 1), st.integers(0, 2**32 - 1), u16, u16, u16, u16,
              joints6, joints6, f32, joints6, joints6),
    st.builds(m.Event, st.integers(0, 255), st.integers(0, 2**64 - 1), u16, u16, f32),
)


@given(MESSAGES)
def test_every_message_round_trips(message):
    again = m.decode(message.TYPE, message.pack())
    assert type(again) is type(message)
    assert _same(again, message)


def _same(a, b):
    if isinstance(a, float):
        return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-30)
    if isinstance(a, tuple):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if hasattr(a, "__dataclass_fields__"):
        return all(_same(getattr(a, k), getattr(b, k)) for k in a.__dataclass_fields__)
    return a == b


@pytest.mark.parametrize("kind, body", [
    (m.Hello.TYPE, b"\x01"), (m.Enable.TYPE, b"\x02"), (m.Heartbeat.TYPE, b"x"),
    (m.TrajLoad.TYPE, b"\x01\x00\x00\x00\x02\x00\x09\x06"), (m.Telemetry.TYPE, b"\x00" * 10),
    (0x3E, b""),
])
def test_bad_bodies_and_unknown_types_are_refused(kind, body):
    with pytest.raises(m.MessageError):
        m.decode(kind, body)


@pytest.mark.parametrize("joints", range(1, 13))
def test_a_traj_load_carries_as_many_points_as_fit_its_body(joints):
    """'1 to 8 points per frame' fits the 240-byte body only up to 6 joints."""
    per_frame = m.points_per_frame(joints)
    points = tuple((0.125 * i, (0.0,) * joints) for i in range(per_frame))
    full = m.TrajLoad(1, 0, 20, points)
    assert len(full.pack()) <= 240 and m.decode(m.TrajLoad.TYPE, full.pack()) == full
    assert per_frame == (8 if joints <= 6 else (240 - 8) // (4 * (joints + 1)))
    with pytest.raises(m.MessageError):
        m.TrajLoad(1, 0, 20, points + ((9.0, (0.0,) * joints),)).pack()
