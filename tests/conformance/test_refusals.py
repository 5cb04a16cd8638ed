"""Every message a host sends, and every reason a device refuses one (docs/protocol.md sections 3
and 5). A refused command never runs."""

import math
import struct

import numpy as np
import pytest

from firmware_bridge import messages as m
from tests.conformance.host import ANSWER_S
from tests.conformance.trajectories import here, ramp, upload


def test_commands_that_move_nothing_are_acknowledged(ready):
    for command in (m.Heartbeat(), m.Tare(), m.Guard(True, (1.0, 0.0, 0.0), 2.0),
                    m.Guard(False, (0.0, 0.0, 0.0), 0.0), m.Rate(0.5), m.Rate(1.0), m.Stop(),
                    m.Enable(True), m.Enable(False)):
        assert isinstance(ready.command(command), m.Ack), command


def test_bodies_that_do_not_fit_are_malformed(ready):
    for kind, body in ((m.Rate.TYPE, struct.pack("<f", 1.5)), (m.Enable.TYPE, b"\x02"),
                       (m.Heartbeat.TYPE, b"\x00"), (m.TrajRun.TYPE, b"\x01"),
                       (m.Guard.TYPE, struct.pack("<B4f", 1, 0.0, 0.0, 0.0, 1.0)),
                       (m.Hello.TYPE, b"")):
        assert ready.command_raw(kind, body).reason == m.Reason.MALFORMED, (kind, body)


@pytest.mark.parametrize("bad", [math.nan, math.inf, -math.inf])
def test_numbers_that_are_not_finite_are_malformed(ready, bad):
    for command in (m.Guard(True, (bad, 0.0, 0.0), 1.0), m.Guard(True, (1.0, 0.0, 0.0), bad),
                    m.Gripper(bad, 1.0), m.Gripper(0.01, bad), m.Rate(bad)):
        answer = ready.command_raw(command.TYPE, command.pack())
        assert answer.reason == m.Reason.MALFORMED, command
    times, positions = ramp(here(ready), np.zeros(6), 1.0, n=4)
    positions[2, 0] = bad
    assert upload(ready, 5, times, positions).reason == m.Reason.MALFORMED
    times[3] = bad
    positions[2, 0] = 0.0
    assert upload(ready, 6, times, positions).reason == m.Reason.MALFORMED


def test_a_type_the_device_does_not_know_is_refused_as_unknown(ready):
    for kind in (0x3F, 0x20, 0x7F):
        assert ready.command_raw(kind, b"").reason == m.Reason.UNKNOWN_TYPE


def test_motion_needs_enable_then_home(ready):
    assert ready.command(m.Home()).reason == m.Reason.NOT_ENABLED
    assert ready.command(m.Gripper(0.01, 5.0)).reason == m.Reason.NOT_ENABLED
    assert isinstance(ready.command(m.Enable(True)), m.Ack)
    times, positions = ramp(here(ready), np.zeros(6), 0.5)
    assert isinstance(upload(ready, 1, times, positions), m.Ack)
    assert ready.command(m.TrajRun(1)).reason == m.Reason.NOT_HOMED


def test_a_latched_fault_refuses_motion_until_cleared(moving):
    assert isinstance(moving.command(m.EStop()), m.Ack)
    assert moving.command(m.Home()).reason == m.Reason.FAULT_LATCHED
    assert moving.command(m.Gripper(0.01, 5.0)).reason == m.Reason.FAULT_LATCHED
    # commands that move nothing are still taken
    assert isinstance(moving.command(m.Tare()), m.Ack)
    assert isinstance(moving.command(m.ClearFault()), m.Ack)
    times, positions = ramp(here(moving), np.zeros(6), 0.5)
    assert isinstance(upload(moving, 1, times, positions), m.Ack)
    assert moving.command(m.TrajRun(1)).reason == m.Reason.NOT_HOMED   # home again after a fault


def test_a_motion_running_makes_other_motion_busy(moving):
    start = here(moving)
    times, positions = ramp(start, [0.3, 0, 0, 0, 0, 0], 1.0)
    assert isinstance(upload(moving, 2, times, positions), m.Ack)
    assert isinstance(moving.command(m.TrajRun(2)), m.Ack)
    assert moving.command(m.Home()).reason == m.Reason.BUSY
    assert moving.command(m.TrajRun(2)).reason == m.Reason.BUSY
    assert isinstance(moving.command(m.Stop()), m.Ack)


def test_trajectories_the_arm_must_not_follow_are_refused(moving, device):
    info = moving.command(m.Hello())
    moving.beat()
    joints = info.joints
    start = here(moving)
    lo, hi = joints[0].q_min, joints[0].q_max
    times, positions = ramp(start, np.zeros(len(joints)), 1.0, n=4)
    beyond = positions.copy()
    beyond[2, 0] = hi + 0.1
    assert upload(moving, 3, times, beyond).reason == m.Reason.LIMIT
    fast = positions.copy()
    fast[1, 0] = start[0] + joints[0].speed_max * (times[1] - times[0]) * 1.5
    fast[1, 0] = min(max(fast[1, 0], lo), hi)
    assert upload(moving, 4, times, fast).reason == m.Reason.LIMIT
    backwards = times.copy()
    backwards[2] = backwards[1]
    assert upload(moving, 5, backwards, positions).reason == m.Reason.BAD_TRAJECTORY
    late = times + 0.1                        # not starting at 0
    assert upload(moving, 6, late, positions).reason == m.Reason.BAD_TRAJECTORY
    assert moving.command(m.TrajLoad(7, 0, info.max_points + 1, ((0.0, tuple(start)),))) \
        .reason == m.Reason.BAD_TRAJECTORY
    # chunks out of order, and a chunk for an arm with one joint fewer
    assert moving.command(m.TrajLoad(8, 1, 4, ((0.1, tuple(start)),))).reason == \
        m.Reason.BAD_TRAJECTORY
    assert moving.command(m.TrajLoad(9, 0, 4, ((0.0, tuple(start[:-1])),))).reason == \
        m.Reason.BAD_TRAJECTORY
    assert moving.command(m.TrajRun(9)).reason == m.Reason.BAD_TRAJECTORY    # never loaded
    away = positions + 0.1                    # does not start at the set-points
    assert isinstance(upload(moving, 10, times, np.clip(away, lo, hi)), m.Ack)
    assert moving.command(m.TrajRun(10)).reason == m.Reason.START_MISMATCH
    assert np.allclose(here(moving), start, atol=1e-6)                       # nothing ran


def test_a_fault_whose_cause_persists_cannot_be_cleared(moving, stimulus):
    info = moving.command(m.Hello())
    moving.beat()
    over = info.force_range_n * 1.5
    stimulus.set_force([over, 0, 0, 0, 0, 0])
    telemetry = moving.wait_for(lambda t: t.fault & m.Fault.OVERLOAD, ANSWER_S, moving.mark(),
                                m.Telemetry)
    assert telemetry.status & m.Status.FAULT
    assert moving.command(m.ClearFault()).reason == m.Reason.FAULT_ACTIVE
    stimulus.set_force([0.0] * 6)
    assert isinstance(moving.command(m.ClearFault()), m.Ack)
