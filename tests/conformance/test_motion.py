"""Motion: trajectories run as loaded, the force guard stops within one control tick, RATE sets
the pace and the safety input holds the arm (docs/protocol.md section 6)."""

import time

import numpy as np

from firmware_bridge import messages as m
from tests.conformance.host import ANSWER_S
from tests.conformance.trajectories import here, ramp, start_moving, upload


def test_a_trajectory_runs_to_its_end(moving):
    start = here(moving)
    times, positions = ramp(start, [0.2, -0.1, 0, 0, 0, 0.1], 0.5)
    assert isinstance(upload(moving, 1, times, positions), m.Ack)
    mark = moving.mark()
    assert isinstance(moving.command(m.TrajRun(1)), m.Ack)
    done = moving.event(m.EventKind.TRAJ_DONE, 3.0, mark)
    assert done.traj_id == 1
    assert np.allclose(here(moving), positions[-1], atol=1e-5)


def test_the_guard_stops_the_set_point_in_the_tick_that_reads_the_force(moving, stimulus):
    start = here(moving)
    limit = start[0] + 0.1                   # the wrist meets something there
    stimulus.set_force([3.0, 0, 0, 0, 0, 0], beyond=(0, limit))
    assert isinstance(moving.command(m.Tare()), m.Ack)
    assert isinstance(moving.command(m.Guard(True, (1.0, 0.0, 0.0), 1.0)), m.Ack)
    times, positions = ramp(start, [0.3, 0, 0, 0, 0, 0], 1.5, n=60)
    assert isinstance(upload(moving, 2, times, positions), m.Ack)
    mark = moving.mark()
    assert isinstance(moving.command(m.TrajRun(2)), m.Ack)
    tripped = moving.event(m.EventKind.GUARD_TRIPPED, 3.0, mark)
    assert tripped.value > 1.0
    time.sleep(0.1)
    frames = moving.since(mark, m.Telemetry)
    over = [t for t in frames if t.wrench[0] > 1.0]
    assert over, "no telemetry read the force"
    # by the first telemetry that reads the force over the threshold the set-point has stopped
    # for good (telemetry goes out every few ticks; the stop is in the tick that read it)
    final = np.array(frames[-1].q_set)
    assert np.allclose(over[0].q_set, final, atol=1e-6)
    assert frames[-1].status & m.Status.GUARD_TRIPPED and not frames[-1].status & m.Status.MOVING
    assert final[0] < start[0] + 0.3 - 0.05


def test_rate_pauses_slows_and_resumes_from_where_it_paused(moving):
    positions, mark = start_moving(moving, 3, [0.3, 0, 0, 0, 0, 0], 1.0)
    time.sleep(0.2)
    assert isinstance(moving.command(m.Rate(0.0)), m.Ack)
    paused = moving.telemetry()
    time.sleep(0.3)
    later = moving.telemetry()
    assert paused.status & m.Status.PAUSED and later.status & m.Status.MOVING
    assert np.allclose(paused.q_set, later.q_set)
    assert not moving.since(mark, m.Event)        # no TRAJ_DONE while paused
    assert isinstance(moving.command(m.Rate(0.5)), m.Ack)
    assert moving.telemetry().status & m.Status.SLOWED
    assert isinstance(moving.command(m.Rate(1.0)), m.Ack)
    moving.event(m.EventKind.TRAJ_DONE, 3.0, mark)
    assert np.allclose(here(moving), positions[-1], atol=1e-5)


def test_the_safety_input_holds_the_arm_whatever_the_host_does(moving, stimulus):
    _, mark = start_moving(moving, 4, [0.3, 0, 0, 0, 0, 0], 1.0)
    time.sleep(0.2)
    stimulus.set_presence(True)
    held = moving.wait_for(lambda t: t.status & m.Status.PRESENCE, ANSWER_S, moving.mark(), m.Telemetry)
    assert isinstance(moving.command(m.Rate(1.0)), m.Ack)       # the host cannot override it
    time.sleep(0.3)
    assert np.allclose(moving.telemetry().q_set, held.q_set, atol=1e-6)
    stimulus.set_presence(False)
    cleared = time.monotonic()
    moving.event(m.EventKind.TRAJ_DONE, 5.0, mark)
    assert time.monotonic() - cleared >= 0.5      # clear for 500 ms before it goes on
