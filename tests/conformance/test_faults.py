"""The watchdog, corrupt frames, the emergency stop and recovery (docs/protocol.md section 7)."""

import time

import numpy as np

from firmware_bridge import messages as m
from firmware_bridge.framing import Frame
from tests.conformance.host import ANSWER_S
from tests.conformance.trajectories import upload


def test_a_host_gone_quiet_trips_the_watchdog(ready):
    quiet_s = ready.quiet_until_the_watchdog_s()
    assert 0.15 <= quiet_s <= 0.5            # 200 ms after the last frame, give or take a beat
    ready.beat()
    assert isinstance(ready.command(m.ClearFault()), m.Ack)
    assert not ready.telemetry().fault


def test_a_corrupt_frame_latches_comm_and_is_not_acted_on(ready):
    mark = ready.mark()
    wire = bytearray(Frame(ready.seq, m.EStop.TYPE, b"").encode())
    wire[2] ^= 0x01
    ready.write(bytes(wire))
    event = ready.wait_for(lambda e: e.kind == m.EventKind.FAULT, ANSWER_S, mark, m.Event)
    assert event.code == m.Fault.COMM
    assert not ready.telemetry().fault & m.Fault.ESTOP


def test_the_emergency_stop_latches_until_cleared_and_the_arm_must_home_again(moving):
    mark = moving.mark()
    assert isinstance(moving.command(m.EStop()), m.Ack)
    assert moving.event(m.EventKind.FAULT, ANSWER_S, mark).code == m.Fault.ESTOP
    t = moving.telemetry()
    assert t.fault & m.Fault.ESTOP and t.status & m.Status.FAULT
    assert isinstance(moving.command(m.ClearFault()), m.Ack)
    t = moving.telemetry()
    assert not t.fault and not t.status & m.Status.HOMED


def test_an_estop_during_a_motion_stops_it_where_it_is(moving):
    start = np.array(moving.telemetry().q_set)
    times = np.linspace(0.0, 2.0, 20)
    positions = start + np.outer(np.linspace(0.0, 1.0, 20), [0.5, 0, 0, 0, 0, 0])
    assert isinstance(upload(moving, 1, times, positions), m.Ack)
    assert isinstance(moving.command(m.TrajRun(1)), m.Ack)
    time.sleep(0.3)
    assert isinstance(moving.command(m.EStop()), m.Ack)
    held = np.array(moving.telemetry().q_set)
    time.sleep(0.2)
    assert np.allclose(moving.telemetry().q_set, held)
    assert start[0] < held[0] < start[0] + 0.5
