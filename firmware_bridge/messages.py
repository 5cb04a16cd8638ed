"""Every message of the arm protocol (docs/protocol.md), with its exact byte layout.

Host to device: commands, type codes 0x01-0x3F; every command is answered by ACK or NAK carrying
the command's sequence number. Device to host: 0x80 and up. All fields little-endian; floats are
IEEE-754 f32 in SI units (m, rad, s, N, N m); device time is u64 microseconds since boot.
"""

from __future__ import annotations

import dataclasses
import math
import struct
from dataclasses import dataclass
from enum import IntEnum, IntFlag

from firmware_bridge.framing import MAX_BODY

PROTOCOL_VERSION = 4
MAX_POINTS_PER_FRAME = 8
TRAJ_LOAD_HEADER = 8      # bytes before a TRAJ_LOAD's points
MAX_JOINTS = 12


def points_per_frame(joints: int) -> int:
    """How many points of an arm of `joints` joints (1 to MAX_JOINTS) one TRAJ_LOAD carries: up
    to 8, as many as fit the 240-byte body (8 up to 6 joints, 7 for 7, 6 for 8, ... 4 for 12)."""
    if not 1 <= joints <= MAX_JOINTS:
        raise MessageError(f"an arm has 1 to {MAX_JOINTS} joints, not {joints}")
    return min(MAX_POINTS_PER_FRAME, (MAX_BODY - TRAJ_LOAD_HEADER) // (4 * (joints + 1)))


class Reason(IntEnum):
    """Why a command was refused (NAK)."""

    MALFORMED = 1          # body length or values do not fit the message
    UNKNOWN_TYPE = 2
    NO_HANDSHAKE = 3       # HELLO first
    VERSION = 4            # protocol versions differ: the device will not move
    OUT_OF_SEQUENCE = 5    # sequence number skipped; the command did not run
    FAULT_LATCHED = 6      # clear the fault first
    NOT_ENABLED = 7
    NOT_HOMED = 8          # home first (after power-on and after any fault)
    BUSY = 9               # a motion is running
    LIMIT = 10             # a point outside the joint limits or a segment over the speed limit
    BAD_TRAJECTORY = 11    # times not increasing, too many points, incomplete upload
    START_MISMATCH = 12    # the trajectory does not start where the arm is
    FAULT_ACTIVE = 13      # the cause of the fault is still there (CLEAR_FAULT)


class Status(IntFlag):
    HANDSHAKEN = 0x001
    ENABLED = 0x002
    HOMED = 0x004
    MOVING = 0x008           # a trajectory is running
    HOMING = 0x010
    GUARD_ARMED = 0x020
    GUARD_TRIPPED = 0x040    # the last motion was stopped by the force guard
    FAULT = 0x080
    GRIPPER_MOVING = 0x100
    PAUSED = 0x200           # RATE 0: motion and gripper hold where they are, to go on later
    SLOWED = 0x400           # RATE between 0 and 1: motion runs slower than planned
    PRESENCE = 0x800         # the safety input sees something: motion holds, whatever the RATE


class Fault(IntFlag):
    WATCHDOG = 0x01   # no frame from the host for the watchdog period
    ESTOP = 0x02
    COMM = 0x04       # a corrupt frame arrived
    TRACKING = 0x08   # a joint strayed too far from its set-point (blocked, collision)
    LIMIT = 0x10      # a joint left its range
    OVERLOAD = 0x20   # wrist force beyond the sensor's range
    INTERNAL = 0x40   # the firmware met an error of its own in a tick; the arm was stopped


class EventKind(IntEnum):
    TRAJ_DONE = 1
    GUARD_TRIPPED = 2
    FAULT = 3
    HOMED = 4
    STOPPED = 5
    BOOT = 6
    GRIPPER_DONE = 7


class MessageError(ValueError):
    """A body that does not fit its message type."""


def _floats(data: bytes, offset: int, count: int) -> tuple[tuple[float, ...], int]:
    end = offset + 4 * count
    if end > len(data):
        raise MessageError("body too short")
    return struct.unpack_from(f"<{count}f", data, offset), end


@dataclass(frozen=True)
class Message:
    TYPE = 0

    def pack(self) -> bytes:
        return b""

    @classmethod
    def unpack(cls, body: bytes):
        if body:
            raise MessageError(f"{cls.__name__} has no body")
        return cls()


# --- host to device --------------------------------------------------------------------------

@dataclass(frozen=True)
class Hello(Message):
    TYPE = 0x01
    protocol_version: int = PROTOCOL_VERSION

    def pack(self) -> bytes:
        return struct.pack("<H", self.protocol_version)

    @classmethod
    def unpack(cls, body: bytes):
        if len(body) != 2:
            raise MessageError("HELLO body is 2 bytes")
        return cls(*struct.unpack("<H", body))


@dataclass(frozen=True)
class Heartbeat(Message):
    TYPE = 0x02


@dataclass(frozen=True)
class Enable(Message):
    TYPE = 0x03
    on: bool = True

    def pack(self) -> bytes:
        return struct.pack("<B", int(self.on))

    @classmethod
    def unpack(cls, body: bytes):
        if len(body) != 1 or body[0] > 1:
            raise MessageError("ENABLE body is one byte, 0 or 1")
        return cls(bool(body[0]))


@dataclass(frozen=True)
class Home(Message):
    TYPE = 0x04


@dataclass(frozen=True)
class TrajLoad(Message):
    """A chunk of a trajectory: points `index` .. `index + len(points) - 1` of `total`. Each point
    is (time from start, s; joint positions, rad)."""

    TYPE = 0x05
    traj_id: int = 0
    index: int = 0
    total: int = 0
    points: tuple[tuple[float, tuple[float, ...]], ...] = ()

    def pack(self) -> bytes:
        if not self.points:
            raise MessageError("a TRAJ_LOAD carries at least one point")
        joints = len(self.points[0][1])
        if len(self.points) > points_per_frame(joints):
            raise MessageError(f"1 to {points_per_frame(joints)} points of {joints} joints per "
                               f"TRAJ_LOAD")
        out = struct.pack("<HHHBB", self.traj_id, self.index, self.total, len(self.points), joints)
        for t, q in self.points:
            if len(q) != joints:
                raise MessageError("every point needs the same number of joints")
            out += struct.pack(f"<f{joints}f", t, *q)
        return out

    @classmethod
    def unpack(cls, body: bytes):
        if len(body) < TRAJ_LOAD_HEADER:
            raise MessageError("TRAJ_LOAD header is 8 bytes")
        traj_id, index, total, count, joints = struct.unpack_from("<HHHBB", body)
        if not 1 <= joints <= MAX_JOINTS or not 1 <= count <= points_per_frame(joints):
            raise MessageError("TRAJ_LOAD point or joint count out of range")
        if len(body) != TRAJ_LOAD_HEADER + count * 4 * (joints + 1):
            raise MessageError("TRAJ_LOAD body length does not match its counts")
        points, offset = [], TRAJ_LOAD_HEADER
        for _ in range(count):
            values, offset = _floats(body, offset, joints + 1)
            points.append((values[0], tuple(values[1:])))
        return cls(traj_id, index, total, tuple(points))


@dataclass(frozen=True)
class TrajRun(Message):
    TYPE = 0x06
    traj_id: int = 0

    def pack(self) -> bytes:
        return struct.pack("<H", self.traj_id)

    @classmethod
    def unpack(cls, body: bytes):
        if len(body) != 2:
            raise MessageError("TRAJ_RUN body is 2 bytes")
        return cls(*struct.unpack("<H", body))


@dataclass(frozen=True)
class Guard(Message):
    """Force guard for the motions that follow: stop when the tared wrist force along `direction`
    (unit vector, sensor frame) exceeds `threshold_n`."""

    TYPE = 0x07
    enabled: bool = False
    direction: tuple[float, float, float] = (0.0, 0.0, 0.0)
    threshold_n: float = 0.0

    def pack(self) -> bytes:
        return struct.pack("<B4f", int(self.enabled), *self.direction, self.threshold_n)

    @classmethod
    def unpack(cls, body: bytes):
        if len(body) != 17 or body[0] > 1:
            raise MessageError("GUARD body is 17 bytes")
        enabled, dx, dy, dz, threshold = struct.unpack("<B4f", body)
        return cls(bool(enabled), (dx, dy, dz), threshold)


@dataclass(frozen=True)
class Gripper(Message):
    TYPE = 0x08
    width_m: float = 0.0
    force_n: float = 0.0

    def pack(self) -> bytes:
        return struct.pack("<2f", self.width_m, self.force_n)

    @classmethod
    def unpack(cls, body: bytes):
        if len(body) != 8:
            raise MessageError("GRIPPER body is 8 bytes")
        return cls(*struct.unpack("<2f", body))


@dataclass(frozen=True)
class Tare(Message):
    TYPE = 0x09


@dataclass(frozen=True)
class Stop(Message):
    TYPE = 0x0A


@dataclass(frozen=True)
class EStop(Message):
    TYPE = 0x0B


@dataclass(frozen=True)
class ClearFault(Message):
    TYPE = 0x0C


@dataclass(frozen=True)
class Rate(Message):
    """The pace of motion: trajectories (and homing) run at `scale` times their planned speed
    from this tick on; 0 pauses them (and the gripper) where they are, 1 is the planned speed."""

    TYPE = 0x0D
    scale: float = 1.0

    def pack(self) -> bytes:
        return struct.pack("<f", self.scale)

    @classmethod
    def unpack(cls, body: bytes):
        if len(body) != 4:
            raise MessageError("RATE body is one f32")
        (scale,) = struct.unpack("<f", body)
        if not 0.0 <= scale <= 1.0:
            raise MessageError(f"RATE scale must be within 0..1, got {scale}")
        return cls(scale)


# --- device to host --------------------------------------------------------------------------

@dataclass(frozen=True)
class Ack(Message):
    TYPE = 0x80
    cmd_seq: int = 0

    def pack(self) -> bytes:
        return struct.pack("<H", self.cmd_seq)

    @classmethod
    def unpack(cls, body: bytes):
        if len(body) != 2:
            raise MessageError("ACK body is 2 bytes")
        return cls(*struct.unpack("<H", body))


@dataclass(frozen=True)
class Nak(Message):
    TYPE = 0x81
    cmd_seq: int = 0
    reason: int = 0

    def pack(self) -> bytes:
        return struct.pack("<HB", self.cmd_seq, self.reason)

    @classmethod
    def unpack(cls, body: bytes):
        if len(body) != 3:
            raise MessageError("NAK body is 3 bytes")
        return cls(*struct.unpack("<HB", body))


@dataclass(frozen=True)
class JointInfo:
    q_min: float
    q_max: float
    speed_max: float
    q_home: float


@dataclass(frozen=True)
class HelloReply(Message):
    TYPE = 0x82
    cmd_seq: int = 0
    protocol_version: int = PROTOCOL_VERSION
    firmware_version: tuple[int, int, int] = (0, 0, 0)
    boot_id: int = 0
    control_hz: int = 0
    telemetry_hz: int = 0
    max_points: int = 0
    gripper_stroke_m: float = 0.0
    force_range_n: float = 0.0
    joints: tuple[JointInfo, ...] = ()

    def pack(self) -> bytes:
        out = struct.pack("<HH3BIHHHffB", self.cmd_seq, self.protocol_version, *self.firmware_version,
                          self.boot_id, self.control_hz, self.telemetry_hz, self.max_points,
                          self.gripper_stroke_m, self.force_range_n, len(self.joints))
        for j in self.joints:
            out += struct.pack("<4f", j.q_min, j.q_max, j.speed_max, j.q_home)
        return out

    @classmethod
    def unpack(cls, body: bytes):
        head = struct.calcsize("<HH3BIHHHffB")
        if len(body) < head:
            raise MessageError("HELLO_REPLY too short")
        values = struct.unpack_from("<HH3BIHHHffB", body)
        count = values[-1]
        if len(body) != head + 16 * count:
            raise MessageError("HELLO_REPLY length does not match its joint count")
        joints = tuple(JointInfo(*struct.unpack_from("<4f", body, head + 16 * i)) for i in range(count))
        return cls(values[0], values[1], tuple(values[2:5]), values[5], values[6], values[7],
                   values[8], values[9], values[10], joints)


@dataclass(frozen=True)
class Telemetry(Message):
    TYPE = 0x83
    device_time_us: int = 0
    boot_id: int = 0
    status: int = 0
    fault: int = 0
    traj_id: int = 0
    last_cmd_seq: int = 0
    q: tuple[float, ...] = ()
    qd: tuple[float, ...] = ()
    gripper_width_m: float = 0.0
    wrench: tuple[float, ...] = (0.0,) * 6
    q_set: tuple[float, ...] = ()      # the joint set-points (a new trajectory starts here)

    @property
    def device_time(self) -> float:
        return self.device_time_us * 1e-6

    def pack(self) -> bytes:
        n = len(self.q)
        q_set = self.q_set or self.q
        return (struct.pack("<QIHHHHB", self.device_time_us, self.boot_id, self.status, self.fault,
                            self.traj_id, self.last_cmd_seq, n)
                + struct.pack(f"<{n}f{n}f7f{n}f", *self.q, *self.qd, self.gripper_width_m,
                              *self.wrench, *q_set))

    @classmethod
    def unpack(cls, body: bytes):
        head = struct.calcsize("<QIHHHHB")
        if len(body) < head:
            raise MessageError("TELEMETRY too short")
        t, boot, status, fault, traj, last, n = struct.unpack_from("<QIHHHHB", body)
        if len(body) != head + 4 * (3 * n + 7):
            raise MessageError("TELEMETRY length does not match its joint count")
        values = struct.unpack_from(f"<{3 * n + 7}f", body, head)
        return cls(t, boot, status, fault, traj, last, tuple(values[:n]), tuple(values[n:2 * n]),
                   values[2 * n], tuple(values[2 * n + 1:2 * n + 7]), tuple(values[2 * n + 7:]))


@dataclass(frozen=True)
class Event(Message):
    """Something happened: a trajectory finished or was stopped, the guard tripped (`value` is
    the force along the guard axis, N), a fault latched (`code`), homing finished, the device
    booted."""

    TYPE = 0x84
    kind: int = 0
    device_time_us: int = 0
    traj_id: int = 0
    code: int = 0
    value: float = 0.0

    def pack(self) -> bytes:
        return struct.pack("<BQHHf", self.kind, self.device_time_us, self.traj_id, self.code, self.value)

    @classmethod
    def unpack(cls, body: bytes):
        if len(body) != struct.calcsize("<BQHHf"):
            raise MessageError("EVENT body is 17 bytes")
        return cls(*struct.unpack("<BQHHf", body))


MESSAGES: dict[int, type[Message]] = {m.TYPE: m for m in (
    Hello, Heartbeat, Enable, Home, TrajLoad, TrajRun, Guard, Gripper, Tare, Stop, EStop, ClearFault,
    Rate, Ack, Nak, HelloReply, Telemetry, Event)}
COMMANDS = tuple(t for t in MESSAGES if t < 0x80)


def finite(message: Message) -> bool:
    """Whether every number the message carries is finite (no NaN, no infinity): a device
    refuses a command that is not, as MALFORMED."""
    def ok(value) -> bool:
        if isinstance(value, float):
            return math.isfinite(value)
        if isinstance(value, (tuple, list)):
            return all(ok(v) for v in value)
        if dataclasses.is_dataclass(value):
            return all(ok(getattr(value, f.name)) for f in dataclasses.fields(value))
        return True
    return ok(message)


def decode(kind: int, body: bytes) -> Message:
    """The message of type `kind` from its body. Raises MessageError for an unknown type or a
    body that does not fit."""
    try:
        cls = MESSAGES[kind]
    except KeyError:
        raise MessageError(f"unknown message type 0x{kind:02x}") from None
    try:
        return cls.unpack(body)
    except struct.error as exc:
        raise MessageError(str(exc)) from None
