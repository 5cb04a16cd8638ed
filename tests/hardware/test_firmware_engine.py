"""The C firmware's engine against the reference engine, tick for tick: the same bytes in, the
same answers, events and telemetry out (numbers to f32 rounding: the C engine reckons in f32).
The conformance suite (tests/conformance, `--device c`) checks it over a pty as any device."""

import math
import random

import numpy as np
from hypothesis import HealthCheck, given, settings, strategies as st

from firmware_bridge import messages as m
from firmware_bridge.device.engine import DeviceEngine
from hardware.firmware.build import build_host
from hardware.firmware.c_engine import CEngine
from tests.firmware_bridge.test_engine import JOINTS, Bench
from tests.firmware_bridge.test_engine_hardening import frames, wire

HOME = np.array([j.q_home for j in JOINTS])


def twins():
    library = build_host() / "libjrcore.so"
    reference = Bench(lambda c, a: DeviceEngine(c, a, rng=random.Random(7)), HOME)
    c = Bench(lambda cfg, a: CEngine(cfg, a, rng=random.Random(7), library=library), HOME)
    return reference, c


def close(a, b, tol=2e-3) -> bool:
    return all(math.isclose(x, y, rel_tol=1e-4, abs_tol=tol) or (math.isnan(x) and math.isnan(y))
               for x, y in zip(a, b)) and len(a) == len(b)


def same(a: m.Message, b: m.Message) -> bool:
    if type(a) is not type(b):
        return False
    if isinstance(a, m.Telemetry):
        return (a.status, a.fault, a.traj_id, a.last_cmd_seq, a.boot_id) == \
            (b.status, b.fault, b.traj_id, b.last_cmd_seq, b.boot_id) \
            and abs(a.device_time_us - b.device_time_us) <= 1 and close(a.q_set, b.q_set) \
            and close(a.q, b.q) and close(a.wrench, b.wrench)
    if isinstance(a, m.Event):
        return (a.kind, a.traj_id, a.code) == (b.kind, b.traj_id, b.code) \
            and abs(a.device_time_us - b.device_time_us) <= 1 and close([a.value], [b.value])
    if isinstance(a, m.HelloReply):
        return a.pack()[:7] == b.pack()[:7] and a.boot_id == b.boot_id and a.joints == b.joints
    return a == b


def test_a_session_is_answered_the_same_by_both():
    reference, c = twins()
    for bench in (reference, c):
        bench.ready()
        times = np.linspace(0.0, 1.0, 30)
        positions = bench.engine.setpoint + np.outer(np.linspace(0, 1, 30), [0.3, 0, 0, 0, 0, 0.2])
        bench.load(1, times, positions)
        bench.command(m.TrajRun(1))
        bench.tick(300)
        bench.command(m.Rate(0.5))
        bench.tick(2000)
    assert len(reference.inbox) == len(c.inbox)
    for a, b in zip(reference.inbox, c.inbox):
        assert same(a, b), (a, b)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(frames(), min_size=1, max_size=20), st.randoms(use_true_random=False))
def test_any_stream_of_frames_is_answered_the_same_by_both(sent, rnd):
    reference, c = twins()
    for bench in (reference, c):
        bench.ready()
    for item, numbering in sent:
        data = wire(reference, item, numbering) if numbering is not None else item
        c.seq = reference.seq
        cut, ticks = rnd.randint(0, len(data)), (rnd.randint(1, 3), rnd.randint(1, 3))
        for bench in (reference, c):
            for piece, n in zip((data[:cut], data[cut:]), ticks):
                bench.engine.receive(piece)
                bench.tick(n)
    assert len(reference.inbox) == len(c.inbox)
    for a, b in zip(reference.inbox, c.inbox):
        assert same(a, b), (a, b)
