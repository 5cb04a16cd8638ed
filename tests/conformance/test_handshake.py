"""Handshake and versions (docs/protocol.md section 4)."""

import time

import numpy as np

from firmware_bridge import messages as m


def test_hello_is_answered_with_the_devices_versions_rates_and_joints(host):
    reply = host.hello()
    assert reply.protocol_version == m.PROTOCOL_VERSION
    assert reply.control_hz >= 1000 and reply.telemetry_hz >= 250
    assert reply.max_points >= 2 and reply.gripper_stroke_m > 0 and reply.force_range_n > 0
    assert reply.joints
    for j in reply.joints:
        assert j.q_min < j.q_home < j.q_max and j.speed_max > 0


def test_before_the_handshake_every_command_but_hello_is_refused(host, device):
    host.write(b"\x00")
    if not device.simulated:
        # a device at a URL lives on from test to test: a HELLO of another version leaves it
        # un-handshaken, as after power-on
        host.command(m.Hello(m.PROTOCOL_VERSION + 1))
    for command in (m.Heartbeat(), m.Enable(True), m.Home(), m.Tare()):
        assert host.command(command).reason == m.Reason.NO_HANDSHAKE


def test_a_host_of_another_version_is_told_the_devices_and_cannot_command(host):
    host.write(b"\x00")
    reply = host.command(m.Hello(m.PROTOCOL_VERSION + 1))
    assert isinstance(reply, m.HelloReply) and reply.protocol_version == m.PROTOCOL_VERSION
    assert host.command(m.Enable(True)).reason == m.Reason.NO_HANDSHAKE
    assert host.telemetry().status & m.Status.HANDSHAKEN == 0


def test_telemetry_flows_at_its_rate_with_device_time_and_the_boot_id(ready):
    reply = ready.command(m.Hello())
    first = ready.telemetry()
    mark = ready.mark()
    time.sleep(0.2)
    frames = ready.since(mark, m.Telemetry)
    assert len(frames) > 10
    assert all(t.boot_id == first.boot_id == reply.boot_id for t in frames)
    times = np.array([t.device_time_us for t in frames])
    assert np.all(np.diff(times) > 0)
    # on the device's own clock (a busy test machine may delay the frames, not their stamps)
    period_us = 1e6 / reply.telemetry_hz
    assert abs(np.median(np.diff(times)) - period_us) <= 0.1 * period_us
    assert frames[-1].status & m.Status.HANDSHAKEN
