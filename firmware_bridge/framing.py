"""Frames on the wire: COBS-encoded, 0x00-delimited, each carrying a sequence number, a message
type, a body and a CRC-16. Pure functions and a streaming decoder; no I/O.

Frame before COBS (little-endian):

    seq u16 | type u8 | body (0..MAX_BODY bytes) | crc u16

The CRC is CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, no reflection, no final xor) over
seq, type and body. On the wire: COBS(frame) followed by one 0x00.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

MAX_BODY = 240
MAX_FRAME = 2 + 1 + MAX_BODY + 2
# COBS adds one byte per 254 and one overhead byte; anything longer between delimiters is garbage.
MAX_ENCODED = MAX_FRAME + MAX_FRAME // 254 + 2
DELIMITER = b"\x00"


def _crc_table() -> list[int]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return table


_CRC_TABLE = _crc_table()


def crc16(data: bytes, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE (check value of b"123456789" is 0x29B1)."""
    for byte in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC_TABLE[(crc >> 8) ^ byte]
    return crc


def cobs_encode(data: bytes) -> bytes:
    """Consistent Overhead Byte Stuffing: the output holds no zero byte."""
    out = bytearray()
    block = bytearray()
    for byte in data:
        if byte == 0:
            out.append(len(block) + 1)
            out += block
            block.clear()
        else:
            block.append(byte)
            if len(block) == 254:
                out.append(255)
                out += block
                block.clear()
    out.append(len(block) + 1)
    out += block
    return bytes(out)


def cobs_decode(data: bytes) -> bytes:
    """Inverse of `cobs_encode`; raises ValueError on a malformed encoding."""
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise ValueError("zero byte inside a COBS block")
        end = i + code
        if end > n:
            raise ValueError("COBS block runs past the end of the frame")
        chunk = data[i + 1:end]
        if 0 in chunk:
            raise ValueError("zero byte inside a COBS block")
        out += chunk
        i = end
        if code < 255 and i < n:
            out.append(0)
    return bytes(out)


@dataclass(frozen=True)
class Frame:
    seq: int
    type: int
    body: bytes = b""

    def encode(self) -> bytes:
        """The bytes to write: COBS-encoded frame and its delimiter."""
        if len(self.body) > MAX_BODY:
            raise ValueError(f"frame body of {len(self.body)} bytes exceeds {MAX_BODY}")
        raw = struct.pack("<HB", self.seq & 0xFFFF, self.type) + self.body
        raw += struct.pack("<H", crc16(raw))
        return cobs_encode(raw) + DELIMITER


def parse_frame(encoded: bytes) -> Frame:
    """One delimited frame (without the 0x00) back to a Frame; ValueError if it is corrupt."""
    if len(encoded) > MAX_ENCODED:
        raise ValueError("frame too long")
    raw = cobs_decode(encoded)
    if len(raw) < 5:
        raise ValueError("frame too short")
    if len(raw) > MAX_FRAME:
        raise ValueError(f"body longer than {MAX_BODY} bytes")
    (crc,) = struct.unpack("<H", raw[-2:])
    if crc16(raw[:-2]) != crc:
        raise ValueError("CRC mismatch")
    seq, kind = struct.unpack("<HB", raw[:3])
    return Frame(seq, kind, raw[3:-2])


class FrameDecoder:
    """Splits a byte stream into frames. Corrupt frames are dropped and counted, never returned."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self.frames_ok = 0
        self.frames_corrupt = 0
        self._overflowed = False

    def feed(self, data: bytes) -> list[Frame]:
        return [f for f in self.feed_in_order(data) if f is not None]

    def feed_in_order(self, data: bytes) -> list[Frame | None]:
        """The frames `data` completes, with None where a corrupt one stood: a receiver that acts
        on a corrupt frame (a fault) does so at its place among the others."""
        frames: list[Frame | None] = []
        for byte in data:
            if byte == 0:
                if self._buffer or self._overflowed:
                    self._finish(frames)
                continue
            if len(self._buffer) >= MAX_ENCODED:
                self._overflowed = True  # garbage without delimiters; counted once at the 0x00
                self._buffer.clear()
                continue
            self._buffer.append(byte)
        return frames

    def _finish(self, frames: list[Frame | None]) -> None:
        if self._overflowed:
            self.frames_corrupt += 1
            frames.append(None)
            self._overflowed = False
            self._buffer.clear()
            return
        try:
            frames.append(parse_frame(bytes(self._buffer)))
            self.frames_ok += 1
        except ValueError:
            self.frames_corrupt += 1
            frames.append(None)
        self._buffer.clear()
