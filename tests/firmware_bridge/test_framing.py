"""Framing: every frame round-trips, and a corrupted stream never yields a wrong frame."""

import pytest
from hypothesis import given, settings, strategies as st

from firmware_bridge.framing import (MAX_BODY, Frame, FrameDecoder, cobs_decode, cobs_encode, crc16,
                                     parse_frame)

frames = st.builds(Frame, st.integers(0, 0xFFFF), st.integers(0, 255), st.binary(max_size=MAX_BODY))


def test_crc16_check_value():
    assert crc16(b"123456789") == 0x29B1


@given(st.binary(max_size=1000))
def test_cobs_round_trips_and_never_emits_zero(data):
    encoded = cobs_encode(data)
    assert 0 not in encoded
    assert cobs_decode(encoded) == data


@given(frames)
def test_frames_round_trip(frame):
    wire = frame.encode()
    assert wire.endswith(b"\x00") and wire.count(0) == 1
    assert parse_frame(wire[:-1]) == frame


@given(st.lists(frames, min_size=1, max_size=6), st.integers(1, 7))
def test_decoder_splits_a_stream_however_it_is_chunked(batch, chunk):
    stream = b"".join(f.encode() for f in batch)
    decoder = FrameDecoder()
    out = []
    for i in range(0, len(stream), chunk):
        out += decoder.feed(stream[i:i + chunk])
    assert out == batch and decoder.frames_corrupt == 0


@settings(derandomize=True, max_examples=300)
@given(st.lists(frames, min_size=1, max_size=5), st.data())
def test_a_corrupted_stream_never_yields_a_wrong_frame(batch, data):
    stream = bytearray(b"".join(f.encode() for f in batch))
    kind = data.draw(st.sampled_from(["flip", "insert", "delete", "garbage"]))
    pos = data.draw(st.integers(0, len(stream) - 1))
    if kind == "flip":
        for bit in data.draw(st.lists(st.integers(0, 7), min_size=1, max_size=3, unique=True)):
            stream[pos] ^= 1 << bit
    elif kind == "insert":
        stream[pos:pos] = data.draw(st.binary(min_size=1, max_size=8))
    elif kind == "delete":
        del stream[pos:pos + data.draw(st.integers(1, 8))]
    else:
        stream[pos:pos] = bytes(data.draw(st.binary(min_size=300, max_size=600)))
    decoder = FrameDecoder()
    out = decoder.feed(bytes(stream))
    for frame in out:
        assert frame in batch   # dropped perhaps (sequence numbers tell), but never wrong


@given(frames, st.integers(0, 10_000), st.integers(0, 7))
def test_one_flipped_bit_is_always_caught_and_counted(frame, where, bit):
    wire = bytearray(frame.encode())
    pos = where % (len(wire) - 1)   # not the delimiter
    wire[pos] ^= 1 << bit
    decoder = FrameDecoder()
    out = decoder.feed(bytes(wire))
    assert out == [] and decoder.frames_corrupt >= 1


def test_oversized_body_is_refused():
    with pytest.raises(ValueError):
        Frame(0, 1, bytes(MAX_BODY + 1)).encode()


@pytest.mark.parametrize("bad", [b"", b"\x01", b"\x05ab", b"\x02\x00"])
def test_malformed_frames_raise(bad):
    with pytest.raises(ValueError):
        parse_frame(bad)


def test_frames_and_corrupt_ones_come_out_in_the_order_they_arrived():
    good = [Frame(i, 0x02).encode() for i in range(3)]
    bad = bytearray(Frame(9, 0x02).encode())
    bad[1] ^= 0x10
    decoder = FrameDecoder()
    out = decoder.feed_in_order(good[0] + bytes(bad) + good[1] + b"\x01" * 300 + b"\x00" + good[2])
    assert [f.seq if f is not None else None for f in out] == [0, None, 1, None, 2]
    assert decoder.frames_corrupt == 2
