"""The C firmware's engine (core/engine.c) behind the same interface as the reference engine
(firmware_bridge/device/engine.py `DeviceEngine`): `receive`, `tick(now)`, `serve_link(now)`,
`take_output`, `boot`, driving any `DeviceHardware` through the C hardware abstraction (hal.h).
What runs is the C code a board runs; only its hardware and clock are this process's."""

from __future__ import annotations

import ctypes
import random
from pathlib import Path

import numpy as np

from firmware_bridge.device.hardware import DeviceConfig, DeviceHardware

MAX_JOINTS = 12
HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "build" / "host" / "libjrcore.so"


class FirmwareNotBuilt(RuntimeError):
    pass


class _JointInfo(ctypes.Structure):
    _fields_ = [("q_min", ctypes.c_float), ("q_max", ctypes.c_float),
                ("speed_max", ctypes.c_float), ("q_home", ctypes.c_float)]


class _Config(ctypes.Structure):
    _fields_ = [("joint_count", ctypes.c_uint8), ("joints", _JointInfo * MAX_JOINTS),
                ("gripper_stroke_m", ctypes.c_float), ("force_range_n", ctypes.c_float),
                ("control_hz", ctypes.c_uint16), ("telemetry_hz", ctypes.c_uint16),
                ("watchdog_s", ctypes.c_float), ("tracking_limit", ctypes.c_float),
                ("homing_speed_scale", ctypes.c_float), ("start_tolerance", ctypes.c_float),
                ("presence_hold_s", ctypes.c_float)]


class _Reading(ctypes.Structure):
    _fields_ = [("q", ctypes.c_float * MAX_JOINTS), ("qd", ctypes.c_float * MAX_JOINTS),
                ("gripper_width", ctypes.c_float), ("wrench", ctypes.c_float * 6),
                ("presence", ctypes.c_uint8)]


_READ = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(_Reading))
_JOINTS = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_float))
_GRIPPER = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_float, ctypes.c_float)


class _Hal(ctypes.Structure):
    _fields_ = [("ctx", ctypes.c_void_p), ("read", _READ), ("command_joints", _JOINTS),
                ("command_gripper", _GRIPPER)]


def load_library(path: Path = LIBRARY) -> ctypes.CDLL:
    if not Path(path).exists():
        raise FirmwareNotBuilt(f"the C firmware is not built ({path} is missing): run `make "
                               f"firmware` at the top of the project")
    lib = ctypes.CDLL(str(path))
    lib.jr_engine_size.restype = ctypes.c_size_t
    lib.jr_engine_output.restype = ctypes.POINTER(ctypes.c_uint8)
    lib.jr_engine_output.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_size_t)]
    lib.jr_engine_fault.restype = ctypes.c_uint16
    lib.jr_engine_init.argtypes = [ctypes.c_void_p, ctypes.POINTER(_Config), ctypes.POINTER(_Hal),
                                   ctypes.c_uint32, ctypes.c_uint64]
    lib.jr_engine_boot.argtypes = [ctypes.c_void_p, ctypes.c_uint32, ctypes.c_uint64]
    lib.jr_engine_receive.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_size_t]
    lib.jr_engine_receive.restype = ctypes.c_size_t
    lib.jr_engine_internal_errors.restype = ctypes.c_uint32
    lib.jr_engine_internal_errors.argtypes = [ctypes.c_void_p]
    lib.jr_engine_tick.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    lib.jr_engine_serve_link.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    lib.jr_engine_sent.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
    lib.jr_engine_setpoint.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_float)]
    return lib


def engine_for(firmware: str):
    """The engine class for a firmware's name: `python`, the reference engine; `c`, this
    binding's (FirmwareNotBuilt when the library is missing)."""
    from firmware_bridge.device.engine import DeviceEngine
    if firmware == "python":
        return DeviceEngine
    if firmware == "c":
        load_library()
        return CEngine
    raise ValueError(f"no firmware named {firmware!r}: python or c")


def _us(seconds: float) -> int:
    return max(0, int(round(seconds * 1e6)))


class CEngine:
    """The C engine with `hardware` as its arm; device time in seconds, as DeviceEngine's."""

    def __init__(self, config: DeviceConfig, hardware: DeviceHardware, boot_time: float = 0.0,
                 rng: random.Random | None = None, library: Path = LIBRARY):
        if len(config.joints) > MAX_JOINTS:
            raise ValueError(f"the C firmware drives at most {MAX_JOINTS} joints")
        self.config = config
        self.hardware = hardware
        self._rng = rng or random.Random()
        self._lib = load_library(library)
        # 8-byte aligned, as the engine's 64-bit fields need
        self._engine = (ctypes.c_uint64 * ((self._lib.jr_engine_size() + 7) // 8))()
        cfg = _Config(len(config.joints))
        for i, j in enumerate(config.joints):
            cfg.joints[i] = _JointInfo(j.q_min, j.q_max, j.speed_max, j.q_home)
        cfg.gripper_stroke_m, cfg.force_range_n = config.gripper_stroke, config.force_range_n
        cfg.control_hz, cfg.telemetry_hz = config.control_hz, config.telemetry_hz
        cfg.watchdog_s, cfg.tracking_limit = config.watchdog_s, config.tracking_limit
        cfg.homing_speed_scale, cfg.start_tolerance = config.homing_speed_scale, config.start_tolerance
        cfg.presence_hold_s = config.presence_hold_s
        self._cfg = cfg
        # the callbacks live as long as the engine: C holds pointers to them
        self._hal = _Hal(None, _READ(self._read), _JOINTS(self._command_joints),
                         _GRIPPER(self._command_gripper))
        self.stats = _Stats(self)
        self.boot_time = boot_time
        self._lib.jr_engine_init(self._engine, ctypes.byref(cfg), ctypes.byref(self._hal),
                                 self._rng.getrandbits(32), _us(boot_time))

    # --- the hardware, called from C ------------------------------------------------------------

    def _read(self, _ctx, out) -> int:
        try:
            state = self.hardware.read()
            n = len(self.config.joints)
            reading = out.contents
            for i in range(n):
                reading.q[i] = float(state.q[i])
                reading.qd[i] = float(state.qd[i])
            reading.gripper_width = float(state.gripper_width)
            for i in range(6):
                reading.wrench[i] = float(state.wrench[i])
            reading.presence = 1 if state.presence else 0
            return 0
        except BaseException as exc:  # noqa: BLE001 - never into C: the firmware latches INTERNAL
            self.stats.note(exc)
            return 1

    def _command_joints(self, _ctx, q) -> int:
        try:
            self.hardware.command_joints(np.array(q[:len(self.config.joints)], float))
            return 0
        except BaseException as exc:  # noqa: BLE001 - as in _read
            self.stats.note(exc)
            return 1

    def _command_gripper(self, _ctx, width: float, force: float) -> int:
        try:
            self.hardware.command_gripper(width, force)
            return 0
        except BaseException as exc:  # noqa: BLE001 - as in _read
            self.stats.note(exc)
            return 1

    # --- DeviceEngine's interface ---------------------------------------------------------------

    def boot(self, now: float) -> None:
        self.boot_time = now
        self._lib.jr_engine_boot(self._engine, self._rng.getrandbits(32), _us(now))

    def receive(self, data: bytes) -> None:
        data = bytes(data)
        while data:            # the engine's inbox takes what fits; a tick makes room
            taken = self._lib.jr_engine_receive(self._engine, data, len(data))
            data = data[taken:]
            if data and not taken:
                raise RuntimeError("the C firmware's inbox is full: tick it before sending more")

    def tick(self, now: float) -> None:
        self._lib.jr_engine_tick(self._engine, _us(now))

    def serve_link(self, now: float) -> None:
        self._lib.jr_engine_serve_link(self._engine, _us(now))

    def take_output(self) -> bytes:
        n = ctypes.c_size_t()
        buffer = self._lib.jr_engine_output(self._engine, ctypes.byref(n))
        out = ctypes.string_at(buffer, n.value)
        self._lib.jr_engine_sent(self._engine, n.value)
        return out

    @property
    def fault(self) -> int:
        return int(self._lib.jr_engine_fault(self._engine))

    @property
    def setpoint(self) -> np.ndarray:
        out = (ctypes.c_float * MAX_JOINTS)()
        self._lib.jr_engine_setpoint(self._engine, out)
        return np.array(out[:len(self.config.joints)], float)


class _Stats:
    """What the reference engine's `stats` tell of its errors: the C engine counts them; the
    driver's own exceptions (this process's hardware) are kept as the reference keeps its."""

    KEPT = 10

    def __init__(self, engine: CEngine):
        self._engine = engine
        self._notes: list[str] = []

    def note(self, exc: BaseException) -> None:
        if len(self._notes) < self.KEPT:
            self._notes.append(f"{type(exc).__name__}: {exc}")

    @property
    def internal_error_count(self) -> int:
        return int(self._engine._lib.jr_engine_internal_errors(self._engine._engine))

    @property
    def internal_errors(self) -> list[str]:
        count = self.internal_error_count
        return (self._notes or [f"the C firmware latched INTERNAL ({count} errors: a reading it "
                                f"refused, or a driver that failed)"])[:count] if count else []

