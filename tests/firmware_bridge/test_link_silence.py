"""The link's silence limit counts the device's silence, not this process's: a reader kept from
running (a busy machine, a garbage collection) also kept a device on the same machine from running,
so a pause counts as no more than one pass of silence; a device that stays silent after it, or on
a machine so loaded that every pass is long, is still found stalled."""

import threading
import time

from firmware_bridge import messages as m
from firmware_bridge.errors import LinkStalledError
from firmware_bridge.framing import Frame
from firmware_bridge.link import PAUSED_S, READ_TIMEOUT_S, SerialLink

STALL_S = 0.2
PAUSE_S = 0.6            # longer than the stall limit, as a loaded machine's pauses were


class PausingPort:
    """A port whose reads wait `pass_s` (the link's READ_TIMEOUT_S, or longer on a loaded
    machine), except the third, which returns after PAUSE_S with nothing (the process was paused
    while the device said nothing either); the fourth gives what `after` says."""

    def __init__(self, after: bytes, pass_s: float = READ_TIMEOUT_S):
        self.after = after
        self.pass_s = pass_s
        self.reads = 0
        self.write_timeout = 0.5
        self.in_waiting = 0

    def read(self, size: int) -> bytes:
        self.reads += 1
        if self.reads == 3:
            time.sleep(PAUSE_S)
            return b""
        if self.reads == 4:
            return self.after
        time.sleep(self.pass_s)
        return b""

    def write(self, data: bytes) -> int:
        return len(data)

    def reset_input_buffer(self) -> None:
        pass

    def close(self) -> None:
        pass


def run_link(after: bytes, wait_s: float, pass_s: float = READ_TIMEOUT_S):
    messages, errors, failed = [], [], threading.Event()

    def on_error(error):
        errors.append((time.monotonic(), error))
        failed.set()

    link = SerialLink("loop://", lambda seq, message: messages.append(message), on_error,
                      stall_s=STALL_S)
    link._port = port = PausingPort(after, pass_s)
    started = time.monotonic()
    link.start()
    failed.wait(wait_s)
    link.close()
    return started, port, messages, errors


def test_a_pause_of_this_process_is_not_the_devices_silence():
    assert PAUSE_S > STALL_S + PAUSED_S
    answer = Frame(0, m.Ack.TYPE, m.Ack(0).pack()).encode()
    _, port, messages, errors = run_link(answer, wait_s=PAUSE_S + 0.3 * STALL_S)
    assert port.reads >= 4
    assert messages == [m.Ack(0)]
    assert errors == []


def test_a_device_silent_after_the_pause_is_still_found_stalled():
    started, _, messages, errors = run_link(b"", wait_s=5.0)
    assert messages == []
    (when, error), = errors
    assert isinstance(error, LinkStalledError)
    assert when - started >= PAUSE_S + STALL_S - PAUSED_S    # the pause counted as one pass


def test_a_machine_so_loaded_that_every_pass_is_long_still_finds_a_silent_device():
    started, _, messages, errors = run_link(b"", wait_s=5.0, pass_s=2 * PAUSED_S)
    (when, error), = errors
    assert isinstance(error, LinkStalledError)
    assert when - started < 2 * STALL_S + PAUSE_S + 1.0
