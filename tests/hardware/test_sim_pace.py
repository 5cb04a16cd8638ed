"""A busy machine plays slower, never stops: when the renderer falls behind, the simulated world
waits for it (a watched camera gets a frame every MAX_FRAME_GAP_S of world time at least), and
while it waits the device keeps answering on the serial link."""

import numpy as np
import pytest

from firmware_bridge.client import ArmClient
from hardware.sim.server import MAX_FRAME_GAP_S, SimServer

pytestmark = pytest.mark.hil


class SlowRenderer:
    """Stands in for the camera server on a machine so busy that a frame takes `wall_s`."""

    watched = True

    def __init__(self, wall_s: float):
        import time
        self._clock = time.monotonic
        self.wall_s = wall_s
        self.done_at = 0.0
        self.moments: list[float] = []

    @property
    def rendering(self) -> bool:
        return self._clock() < self.done_at

    def offer(self, data) -> bool:
        if self.rendering:
            return False
        self.done_at = self._clock() + self.wall_s
        self.moments.append(float(data.time))
        return True

    def start(self):
        return self

    def stop(self) -> None:
        pass


def test_the_world_waits_for_a_slow_renderer_and_the_link_stays_alive(default_cell):
    server = SimServer(default_cell, 1, cameras=False)
    server.cameras = renderer = SlowRenderer(wall_s=0.6)
    with server:
        # a tight stall limit: each wait for the renderer lasts longer than it
        with ArmClient(server.serial_path, stall_s=0.15) as arm:
            start = arm.telemetry().device_time
            arm.enable()
            done = arm.wait_for(lambda t: t.device_time >= start + 0.9, timeout_s=2.0)
            assert done.status & 0x080 == 0            # no fault: the watchdog was fed throughout
    gaps = np.diff(renderer.moments)
    assert len(gaps) >= 4
    assert gaps.max() <= MAX_FRAME_GAP_S + 0.002      # world time between frames, never more
    # the world waited for every late frame, each time longer than the stall limit
    assert server.held_s > 0.3 * (len(gaps) - 1)
    assert server.pace() < 0.9


def test_the_world_waits_for_a_host_the_machine_kept_from_running(default_cell):
    """A host that sends nothing for seconds of wall time with its port open (starved by a busy
    machine, not gone) finds the arm as it left it, the watchdog not tripped; a host whose port
    closed (its process ended) is gone: the world goes on and the watchdog stops the arm."""
    import threading

    import serial

    from firmware_bridge import messages as m
    from firmware_bridge.framing import Frame, FrameDecoder

    pause = threading.Event()
    with SimServer(default_cell, 1, cameras=False) as server:
        port = serial.Serial(server.serial_path, timeout=0.05)
        decoder, seq = FrameDecoder(), 0

        def send(message):
            nonlocal seq
            port.write(Frame(seq, message.TYPE, message.pack()).encode())
            seq += 1

        def latest(kind, until=lambda message: True, wait_s=1.0):
            """The newest message of `kind`, all that was waiting read first; with `until`, read on
            until the newest is one for which it holds."""
            found = None
            for _ in range(int(wait_s / 0.05)):
                data = port.read(max(1, port.in_waiting))
                for frame in decoder.feed(data):
                    message = m.decode(frame.type, frame.body)
                    if isinstance(message, kind):
                        found = message
                if found is not None and not port.in_waiting and until(found):
                    return found
            return found

        send(m.Hello(m.PROTOCOL_VERSION))
        assert latest(m.HelloReply) is not None
        send(m.Heartbeat())
        before = latest(m.Telemetry)
        pause.wait(2.5)                      # the host is starved: nothing for 2.5 s
        send(m.Heartbeat())
        after = latest(m.Telemetry)
        assert not after.status & m.Status.FAULT
        assert after.device_time - before.device_time < 0.2 + 0.05    # the world waited
        port.close()                         # the host's process is gone
        pause.wait(1.0)                      # the world goes on, the arm stops
        port = serial.Serial(server.serial_path, timeout=0.05)   # a new host opens the port
        decoder = FrameDecoder()
        send(m.Heartbeat())
        stopped = latest(m.Telemetry, until=lambda t: t.status & m.Status.FAULT, wait_s=5.0)
        assert stopped.status & m.Status.FAULT and stopped.fault & m.Fault.WATCHDOG
        assert stopped.device_time - after.device_time > 0.3
        port.close()
