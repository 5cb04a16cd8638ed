"""Frames a host should never send, as many as hypothesis can think of: no bad frame is acted on
and the device stays alive (it answers, its telemetry flows, its set-points stay finite and
inside the joint limits, and no fault of its own is latched)."""

import math
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from firmware_bridge import messages as m
from firmware_bridge.framing import Frame
from tests.conformance.host import ANSWER_S

TYPES = sorted(set(m.COMMANDS)) + [0x00, 0x3F, 0x7F, 0x80, 0x83, 0xFF]


@st.composite
def frames(draw):
    """Wire bytes: a CRC-valid frame of any type with a body of random bytes or of floats that
    may be NaN or huge, numbered next, again or anyhow; or a corrupt frame; or bare garbage."""
    kind = draw(st.sampled_from(TYPES))
    if draw(st.booleans()):
        body = draw(st.binary(max_size=48))
    else:
        floats = draw(st.lists(st.floats(width=32), max_size=16))
        body = draw(st.binary(max_size=8)) + b"".join(struct.pack("<f", v) for v in floats)
    numbering = draw(st.sampled_from(["next", "again", "any"]))
    seq = draw(st.integers(0, 0xFFFF))
    damage = draw(st.sampled_from(["none", "none", "flip", "garbage"]))
    return kind, body[:240], numbering, seq, damage, draw(st.binary(min_size=1, max_size=16))


@pytest.fixture
def fuzzed(request, device, ready):
    if not device.simulated and not request.config.getoption("--allow-motion"):
        pytest.skip("random frames may enable and home the arm: pass --allow-motion")
    return ready


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(batch=st.lists(frames(), min_size=1, max_size=12))
def test_no_frame_stops_the_device_or_is_acted_on_when_bad(fuzzed, batch):
    host = fuzzed
    info = host.command(m.Hello())
    lows = np.array([j.q_min for j in info.joints])
    highs = np.array([j.q_max for j in info.joints])
    used = set()
    for kind, body, numbering, seq, damage, garbage in batch:
        number = {"next": host.take_seq() if numbering == "next" else None,
                  "again": (host.seq - 1) & 0xFFFF, "any": seq}[numbering]
        used.add(number)
        wire = bytearray(Frame(number, kind, body).encode())
        if damage == "flip":
            wire[len(wire) // 2] ^= 0x5A
            wire[-1] = 0                               # the delimiter stays
        host.write(bytes(wire) + (garbage if damage == "garbage" else b""))
    host.write(b"\x00")
    # alive: a fresh handshake is answered, telemetry flows, set-points are sane (numbered
    # unlike any frame of the batch, which the device would take it for a repeat of)
    reply = host.command(m.Hello(), seq=host.take_seq_past(used))
    assert isinstance(reply, m.HelloReply)
    t = host.telemetry()
    q_set = np.array(t.q_set)
    assert all(math.isfinite(v) for v in t.q_set)
    assert np.all(q_set >= lows - 1e-4) and np.all(q_set <= highs + 1e-4)
    assert not t.fault & m.Fault.INTERNAL


@settings(max_examples=40, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(batch=st.lists(frames(), min_size=1, max_size=8))
def test_a_damaged_frame_is_never_acted_on(fuzzed, batch):
    host = fuzzed
    host.quiet()                                   # nothing but the damaged frames arrives
    try:
        host.write(b"\x00")
        seq = host.send(m.Heartbeat())             # the last command to run, and seen to
        before = host.wait_for(lambda t: t.last_cmd_seq == seq, ANSWER_S, 0, m.Telemetry)
        for kind, body, _, _, _, _ in batch:
            wire = bytearray(Frame(host.seq, kind, body).encode())
            wire[len(wire) // 2] ^= 0x5A               # one byte off: COBS or CRC must catch it
            wire[-1] = 0
            host.write(bytes(wire))
        host.write(b"\x00")
        after = host.wait_for(lambda t: t.device_time_us > before.device_time_us + 20_000, ANSWER_S,
                              host.mark(), m.Telemetry)
        assert after.last_cmd_seq == before.last_cmd_seq
        assert np.allclose(after.q_set, before.q_set)
    finally:
        host.command(m.Hello())
        host.beat()
