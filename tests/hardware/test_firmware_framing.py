"""The C firmware's framing against the reference (firmware_bridge/framing.py), byte for byte:
CRC, COBS, whole frames, and a decoder fed any bytes at all (issue 23, item 3)."""

import ctypes
import subprocess

import pytest
from hypothesis import given, settings, strategies as st

from firmware_bridge import framing as ref
from tests.hardware.firmware_build import build, core_library


class CFrame(ctypes.Structure):
    _fields_ = [("seq", ctypes.c_uint16), ("type", ctypes.c_uint8), ("body_len", ctypes.c_uint16),
                ("body", ctypes.c_uint8 * ref.MAX_BODY)]


class CDecoder(ctypes.Structure):
    _fields_ = [("buffer", ctypes.c_uint8 * ref.MAX_ENCODED), ("len", ctypes.c_size_t),
                ("overflowed", ctypes.c_int), ("frames_ok", ctypes.c_uint32),
                ("frames_corrupt", ctypes.c_uint32)]


@pytest.fixture(scope="module")
def core():
    lib = core_library()
    lib.jr_crc16.restype = ctypes.c_uint16
    lib.jr_crc16.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint16]
    lib.jr_cobs_encode.restype = ctypes.c_size_t
    lib.jr_cobs_decode.restype = ctypes.c_int
    lib.jr_frame_encode.restype = ctypes.c_size_t
    lib.jr_decoder_push.restype = ctypes.c_int
    lib.jr_decoder_push.argtypes = [ctypes.POINTER(CDecoder), ctypes.c_uint8, ctypes.POINTER(CFrame)]
    return lib


def c_decode_stream(core, data: bytes):
    """What the C decoder makes of a byte stream: frames (seq, type, body) and None for corrupt."""
    decoder, frame, out = CDecoder(), CFrame(), []
    core.jr_decoder_init(ctypes.byref(decoder))
    for byte in data:
        got = core.jr_decoder_push(ctypes.byref(decoder), byte, ctypes.byref(frame))
        if got == 1:
            out.append((frame.seq, frame.type, bytes(frame.body[:frame.body_len])))
        elif got == 2:
            out.append(None)
    return out


@pytest.mark.parametrize("program", ["test_framing", "test_engine"])
def test_the_cores_own_tests_pass_under_the_sanitizers(program):
    result = subprocess.run([str(build(program))], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=600))
def test_crc_and_cobs_match_the_reference(core, data):
    assert core.jr_crc16(data, len(data), 0xFFFF) == ref.crc16(data)
    out = ctypes.create_string_buffer(len(data) + len(data) // 254 + 2)
    n = core.jr_cobs_encode(data, len(data), out)
    assert out.raw[:n] == ref.cobs_encode(data)
    back = ctypes.create_string_buffer(len(data) + 1)
    assert core.jr_cobs_decode(out.raw[:n], n, back, len(data) + 1) == len(data)
    assert back.raw[:len(data)] == data


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 0xFFFF), st.integers(0, 255), st.binary(max_size=ref.MAX_BODY))
def test_a_frame_is_encoded_byte_for_byte_as_the_reference_does(core, seq, kind, body):
    frame = CFrame(seq, kind, len(body))
    ctypes.memmove(frame.body, body, len(body))
    wire = ctypes.create_string_buffer(ref.MAX_ENCODED + 1)
    n = core.jr_frame_encode(ctypes.byref(frame), wire)
    assert wire.raw[:n] == ref.Frame(seq, kind, body).encode()


FRAMES = st.builds(lambda s, k, b: ref.Frame(s, k, b).encode(), st.integers(0, 0xFFFF),
                   st.integers(0, 255), st.binary(max_size=ref.MAX_BODY))


def damaged(wire: bytes, at: int) -> bytes:
    """One byte of a frame flipped (the delimiter kept where it was)."""
    i = at % (len(wire) - 1)
    return wire[:i] + bytes([wire[i] ^ 0x21]) + wire[i + 1:]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(FRAMES, st.binary(max_size=40), st.binary(min_size=240, max_size=300),
                          st.builds(damaged, FRAMES, st.integers(0, 300))), max_size=8))
def test_the_decoder_makes_of_any_bytes_what_the_reference_makes(core, pieces):
    data = b"".join(pieces)
    expected = [None if f is None else (f.seq, f.type, f.body)
                for f in ref.FrameDecoder().feed_in_order(data)]
    assert c_decode_stream(core, data) == expected


def test_a_body_longer_than_240_bytes_is_corrupt_on_both_sides(core):
    raw = bytes([1, 0, 2]) + bytes(range(1, 242))             # a body of 241 bytes
    raw += ref.crc16(raw).to_bytes(2, "little")
    wire = ref.cobs_encode(raw) + b"\x00"
    assert len(wire) - 1 <= ref.MAX_ENCODED                   # not garbage by its length alone
    assert ref.FrameDecoder().feed_in_order(wire) == [None]
    assert c_decode_stream(core, wire) == [None]
