"""The host end of the serial link: a pyserial port opened by URL (a device path, a pty,
`loop://`, `socket://host:port`), a reader thread that turns bytes into messages, and the link's
own fault detection (corrupt frames, gaps in the device's sequence numbers, a stalled or closed
port). It knows frames and messages, not the arm.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

import serial

from firmware_bridge.errors import (ConnectError, CorruptFrameError, DeviceResetError,
                                    FrameDropError, LinkError, LinkStalledError, PortClosedError)
from firmware_bridge.framing import Frame, FrameDecoder
from firmware_bridge.messages import Event, EventKind, Message, MessageError, decode

DEFAULT_BAUD = 1_000_000
READ_CHUNK = 4096
# A write may wait this long for room in the port, or as long as the link's silence limit if
# longer: a simulated cell its machine kept from running for 2 s filled its pty, and a 0.5 s wait
# called the port closed (a busy machine plays slower, never stops).
WRITE_TIMEOUT_S = 0.5
READ_TIMEOUT_S = 0.01
# A pass of the reader counts as silence up to this long (its read waits READ_TIMEOUT_S): a longer
# one means this process was kept from running (a busy machine, a garbage collection), and a device
# on the same machine, such as the simulated cell, was kept from running as well (one of its own
# would have left its bytes waiting in the port). Silence is counted over the time the reader could
# listen: a CI run beside the parallel suite called a simulated cell stalled after 603 ms, the
# world in the same process. A machine so loaded that every pass is long still finds a dead device,
# later.
PAUSED_S = 0.05


@dataclass
class LinkStats:
    frames_in: int = 0
    frames_out: int = 0
    frames_corrupt: int = 0
    frames_dropped: int = 0


class SerialLink:
    """Sends messages with consecutive sequence numbers; hands every received message, in order,
    to `on_message`; reports the first fault to `on_error` and stops reading."""

    def __init__(self, url: str, on_message: Callable[[int, Message], None],
                 on_error: Callable[[LinkError], None], *, baudrate: int = DEFAULT_BAUD,
                 stall_s: float = 0.1):
        self.url = url
        self.stats = LinkStats()
        self._on_message = on_message
        self._on_error = on_error
        self._stall_s = stall_s
        self._decoder = FrameDecoder()
        self._write_lock = threading.Lock()
        self._seq = 0
        self._last_rx_seq: int | None = None
        self._last_rx_time = time.monotonic()
        self._running = False
        self._failed = False
        # Until the first good answer after (re)connecting, bytes that were already in flight may
        # arrive cut in half: they are dropped and counted, not treated as faults.
        self._synced = False
        try:
            self._port = serial.serial_for_url(url, baudrate=baudrate, timeout=READ_TIMEOUT_S,
                                               write_timeout=max(WRITE_TIMEOUT_S, stall_s))
        except (serial.SerialException, OSError, ValueError) as exc:
            raise ConnectError(f"cannot open serial port {url!r}: {exc}. Is the arm (or `jenga-robot "
                               f"sim serve`) running, and is the path right?") from None
        self._reader = threading.Thread(target=self._read_loop, name=f"arm-link-reader {url}",
                                        daemon=True)

    def start(self) -> None:
        try:
            self._port.reset_input_buffer()
            self._port.write(b"\x00")  # end whatever half frame the device may be holding
        except (serial.SerialException, OSError) as exc:
            raise ConnectError(f"serial port {self.url} failed: {exc}") from None
        self._running = True
        self._last_rx_time = time.monotonic()
        self._reader.start()

    def synced(self) -> None:
        """The handshake answer arrived: from now on every corrupt frame or gap is a fault."""
        self._synced = True

    def set_stall_limit(self, stall_s: float) -> None:
        self._stall_s = stall_s
        self._port.write_timeout = max(WRITE_TIMEOUT_S, stall_s)

    def send(self, message: Message, seq: int | None = None) -> int:
        """Write one message; returns its sequence number."""
        with self._write_lock:
            if seq is None:
                seq = self._seq
                self._seq = (self._seq + 1) & 0xFFFF
            data = Frame(seq, message.TYPE, message.pack()).encode()
            try:
                self._port.write(data)
            except (serial.SerialException, OSError) as exc:
                self._fail(PortClosedError(f"serial port {self.url} failed while writing: {exc}"))
                raise PortClosedError(f"serial port {self.url} failed while writing: {exc}") from None
            self.stats.frames_out += 1
            return seq

    @property
    def next_seq(self) -> int:
        return self._seq

    def close(self) -> None:
        self._running = False
        if self._reader.is_alive() and threading.current_thread() is not self._reader:
            self._reader.join(timeout=1.0)
        try:
            self._port.close()
        except (serial.SerialException, OSError):
            pass

    # --- reader -------------------------------------------------------------------------------

    def _read_loop(self) -> None:
        quiet_s, last_pass = 0.0, time.monotonic()    # silence heard since the last frame
        while self._running and not self._failed:
            try:
                data = self._port.read(max(1, min(self._port.in_waiting, READ_CHUNK)))
            except (serial.SerialException, OSError, TypeError, AttributeError) as exc:
                if self._running:
                    self._fail(PortClosedError(f"serial port {self.url} closed or vanished: {exc}. "
                                               f"Check the cable and that the device is powered"))
                return
            now = time.monotonic()
            quiet_s += min(now - last_pass, PAUSED_S)
            last_pass = now
            if data:
                # in the order they came: what arrived before a corrupt frame (an ACK, the
                # EVENT of a fault) is delivered before the link fails on it
                for frame in self._decoder.feed_in_order(data):
                    self.stats.frames_corrupt = self._decoder.frames_corrupt
                    if frame is None:
                        if self._synced:
                            self._fail(CorruptFrameError(
                                f"corrupt frame from the device on {self.url} (CRC or framing): "
                                f"the link is not trustworthy"))
                            return
                        continue
                    if not self._accept(frame, now):
                        return
            if self._last_rx_time >= now:        # a frame came in this pass
                quiet_s = 0.0
            if quiet_s > self._stall_s and not self._bytes_waiting():
                # Bytes waiting in the port mean this thread was kept from reading (a busy host),
                # not that the device went quiet: they are read on the next pass.
                self._fail(LinkStalledError(f"nothing from the device on {self.url} for "
                                            f"{(now - self._last_rx_time) * 1000:.0f} ms"))
                return

    def _bytes_waiting(self) -> bool:
        try:
            return self._port.in_waiting > 0
        except (serial.SerialException, OSError, TypeError, AttributeError):
            return False

    def _accept(self, frame: Frame, now: float) -> bool:
        try:
            message = decode(frame.type, frame.body)
        except MessageError as exc:
            self.stats.frames_corrupt += 1
            if not self._synced:
                return True
            self._fail(CorruptFrameError(f"unreadable message from the device on {self.url}: {exc}"))
            return False
        if self._synced and isinstance(message, Event) and message.kind == EventKind.BOOT:
            # A rebooted device numbers its frames from 0 again: that is a reset, not a gap.
            self._fail(DeviceResetError(f"the device on {self.url} rebooted: it is not homed any "
                                        f"more; reconnect, then home"))
            return False
        if self._synced and self._last_rx_seq is not None \
                and frame.seq != (self._last_rx_seq + 1) & 0xFFFF:
            missing = (frame.seq - self._last_rx_seq - 1) & 0xFFFF
            self.stats.frames_dropped += missing
            self._fail(FrameDropError(f"{missing} frame(s) from the device went missing on "
                                      f"{self.url} (sequence {self._last_rx_seq} then {frame.seq})"))
            return False
        self._last_rx_seq = frame.seq
        self.stats.frames_in += 1
        self._last_rx_time = now
        self._on_message(frame.seq, message)
        return True

    def _fail(self, error: LinkError) -> None:
        if self._failed:
            return
        self._failed = True
        self._on_error(error)
