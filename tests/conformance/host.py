"""A bare host for the conformance suite: frames and messages on a serial URL, written from
docs/protocol.md alone, so the suite checks a device, not the product's client. A reader thread
keeps every frame the device sends; a heartbeat thread feeds the watchdog every 50 ms until told
to stop (`quiet`)."""

from __future__ import annotations

import threading
import time

import serial

from firmware_bridge import messages as m
from firmware_bridge.framing import Frame, FrameDecoder

# Wall time a device gets to answer one command. The product's host allows 80 ms of device time
# (the link bench measures it); this suite checks what a device answers, not how fast, and its
# built-in devices share the machine with the parallel suite: a reference device's thread once
# waited past 0.5 s for a core, and a damaged-frame fuzz example under the loaded suite waited
# past 1 s for telemetry it then got. A wait that ends sooner than this is no figure of speed.
ANSWER_S = 5.0
HEARTBEAT_S = 0.05


class NoAnswer(AssertionError):
    pass


class Host:
    def __init__(self, url: str, baudrate: int = 1_000_000):
        self.port = serial.serial_for_url(url, baudrate=baudrate, timeout=0.005)
        self.seq = 0
        self.received: list[tuple[float, m.Message]] = []   # (wall time, message), in order
        self.corrupt = 0
        self._decoder = FrameDecoder()
        self._lock = threading.Condition()
        self._stop = threading.Event()
        self._beating = threading.Event()
        self._beat_lock = threading.Lock()
        self._last_beat: tuple[int, int] | None = None    # its number, and what was received before
        self._write_lock = threading.Lock()
        self._threads = [threading.Thread(target=self._read, daemon=True),
                         threading.Thread(target=self._beat, daemon=True)]
        for t in self._threads:
            t.start()

    def close(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(timeout=1.0)
        self.port.close()

    # --- sending --------------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        with self._write_lock:
            self.port.write(data)

    def send(self, message: m.Message, seq: int | None = None) -> int:
        return self.send_raw(message.TYPE, message.pack(), seq)

    def send_raw(self, kind: int, body: bytes, seq: int | None = None) -> int:
        """A CRC-valid frame of any type and body; numbered next unless `seq` is given."""
        with self._write_lock:
            if seq is None:
                seq, self.seq = self.seq, (self.seq + 1) & 0xFFFF
            self.port.write(Frame(seq, kind, body).encode())
        return seq

    def take_seq(self) -> int:
        """The next number, used up (by a frame the caller builds itself)."""
        with self._write_lock:
            seq, self.seq = self.seq, (self.seq + 1) & 0xFFFF
        return seq

    def take_seq_past(self, used: set[int]) -> int:
        """The next number not in `used`, used up (a device answers a repeated number with its
        earlier answer, whatever the command)."""
        with self._write_lock:
            while self.seq in used:
                self.seq = (self.seq + 1) & 0xFFFF
            seq, self.seq = self.seq, (self.seq + 1) & 0xFFFF
        return seq

    def command(self, message: m.Message, seq: int | None = None) -> m.Message:
        return self.command_raw(message.TYPE, message.pack(), seq)

    def command_raw(self, kind: int, body: bytes, seq: int | None = None) -> m.Message:
        """Send and wait for this sending's answer (a repeated number's earlier answer does not
        count)."""
        mark = self.mark()
        return self.answer(self.send_raw(kind, body, seq), after=mark)

    def answer(self, seq: int, after: int = 0) -> m.Message:
        """The device's ACK, NAK or HELLO_REPLY to command `seq` (the first after index `after`
        of what was received)."""
        def found():
            for _, msg in self.received[after:]:
                if isinstance(msg, (m.Ack, m.Nak, m.HelloReply)) and msg.cmd_seq == seq:
                    return msg
            return None
        with self._lock:
            if not self._lock.wait_for(found, ANSWER_S):
                raise NoAnswer(f"no answer to command {seq} within {ANSWER_S} s")
            return found()

    def hello(self) -> m.HelloReply:
        """Resynchronise (a 0x00 ends any half frame) and handshake; heartbeats start."""
        self.write(b"\x00")
        reply = self.command(m.Hello())
        assert isinstance(reply, m.HelloReply), reply
        self._beating.set()
        return reply

    def quiet(self) -> None:
        """Stop heartbeating (the watchdog's test): no heartbeat is sent once this returns, and
        the last one sent has been answered. A device that answers late runs it after the
        caller's next look otherwise: the QEMU board beside the loaded suite did, and a test
        read its number as a command that should not have run."""
        with self._beat_lock:
            self._beating.clear()
            last, self._last_beat = self._last_beat, None
        if last is not None:
            self.answer(*last)

    def beat(self) -> None:
        self._beating.set()

    def quiet_until_the_watchdog_s(self, timeout_s: float = ANSWER_S) -> float:
        """Stop heartbeating and wait for the watchdog's fault: device seconds from the first
        telemetry after going quiet to the fault."""
        mark = self.mark()
        self.quiet()
        event = self.wait_for(lambda e: e.kind == m.EventKind.FAULT, timeout_s, mark, m.Event)
        assert event.code == m.Fault.WATCHDOG
        return (event.device_time_us - self.since(mark, m.Telemetry)[0].device_time_us) * 1e-6

    # --- receiving ------------------------------------------------------------------------------

    def mark(self) -> int:
        with self._lock:
            return len(self.received)

    def since(self, mark: int, kind=m.Message) -> list[m.Message]:
        with self._lock:
            return [msg for _, msg in self.received[mark:] if isinstance(msg, kind)]

    def wait_for(self, predicate, timeout_s: float, mark: int = 0, kind=m.Message):
        """The first message of `kind` after `mark` for which `predicate` holds."""
        def found():
            return next((msg for _, msg in self.received[mark:]
                         if isinstance(msg, kind) and predicate(msg)), None)
        with self._lock:
            if not self._lock.wait_for(found, timeout_s):
                raise NoAnswer(f"no {kind.__name__} as expected within {timeout_s} s")
            return found()

    def telemetry(self, timeout_s: float = ANSWER_S) -> m.Telemetry:
        """The next telemetry frame."""
        return self.wait_for(lambda t: True, timeout_s, self.mark(), m.Telemetry)

    def event(self, kind: m.EventKind, timeout_s: float, mark: int = 0) -> m.Event:
        return self.wait_for(lambda e: e.kind == kind, timeout_s, mark, m.Event)

    def _read(self) -> None:
        while not self._stop.is_set():
            try:
                data = self.port.read(4096)
            except (serial.SerialException, OSError):
                return
            if not data:
                continue
            before = self._decoder.frames_corrupt
            frames = self._decoder.feed(data)
            now = time.monotonic()
            with self._lock:
                self.corrupt += self._decoder.frames_corrupt - before
                for frame in frames:
                    try:
                        self.received.append((now, m.decode(frame.type, frame.body)))
                    except m.MessageError:
                        self.corrupt += 1
                self._lock.notify_all()

    def _beat(self) -> None:
        while not self._stop.wait(HEARTBEAT_S):
            with self._beat_lock:
                if not self._beating.is_set():
                    continue
                try:
                    mark = self.mark()
                    self._last_beat = (self.send(m.Heartbeat()), mark)
                except (serial.SerialException, OSError):
                    return
