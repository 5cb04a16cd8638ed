"""The device side of the protocol: what the arm's microcontroller runs, in Python.

The engine is transport-agnostic and clock-agnostic: `receive()` takes the bytes that arrived,
`tick(now)` runs one control period at device time `now` (seconds since boot), and `take_output()`
returns the bytes to send. The simulator drives it from its physics loop; tests drive it with an
ideal arm. A C port for a microcontroller follows the same structure (docs/protocol.md).

Inside one tick, in order: read the hardware; handle every complete frame; the watchdog; safety
checks (overload, tracking, limits); motion (homing or trajectory, with the force guard evaluated
against this tick's reading before the set-point moves); write set-points; telemetry.
"""

from __future__ import annotations

import random
from collections import deque
import numpy as np

from firmware_bridge.device.clock import device_us, since_s
from firmware_bridge.device.hardware import DeviceConfig, DeviceHardware, HardwareState
from firmware_bridge.device.motion import LoadedTrajectory, straight_move
from firmware_bridge.device.stats import KEPT_ERRORS, EngineStats, GuardRecord
from firmware_bridge.device.trajectories import TrajectoryStore
from firmware_bridge.framing import Frame, FrameDecoder
from firmware_bridge.messages import (COMMANDS, PROTOCOL_VERSION, Ack, ClearFault, Enable, EStop,
                                      Event, EventKind, Fault, Gripper, Guard, Heartbeat, Hello,
                                      HelloReply, Home, Message, MessageError, Nak, Rate,
                                      Reason, Status, Stop, Tare, Telemetry, TrajLoad, TrajRun,
                                      decode, finite)

FIRMWARE_VERSION = (2, 0, 0)
F32_MAX = 3.4028234663852886e38

class DeviceEngine:
    def __init__(self, config: DeviceConfig, hardware: DeviceHardware, boot_time: float = 0.0,
                 rng: random.Random | None = None):
        self.config = config
        self.hardware = hardware
        self._rng = rng or random.Random()
        self.stats = EngineStats()
        self._home = np.array([j.q_home for j in config.joints])
        self._telemetry_every = max(1, round(config.control_hz / config.telemetry_hz))
        self.boot(boot_time)

    # --- lifecycle ----------------------------------------------------------------------------

    def boot(self, now: float) -> None:
        """Power-on (or a reset): everything forgotten, not homed, set-points where the arm is."""
        self.boot_time = now
        self.boot_id = self._rng.getrandbits(32)
        self._decoder = FrameDecoder()
        self._inbox = bytearray()
        self._out = bytearray()
        self._tx_seq = 0
        self._handshaken = False
        self._watchdog_armed = False    # from the first handshake to the next boot
        self._replied = False
        self._enabled = False
        self._homed = False
        self._fault = Fault(0)
        self._last_seq: int | None = None
        self._last_reply: Message | None = None
        self._last_rx = None
        self._trajectories = TrajectoryStore()
        self._motion: LoadedTrajectory | None = None
        self._motion_elapsed = 0.0      # trajectory time reached, run at `_pace` of device time
        self._motion_clock = now        # when `_motion_elapsed` was last brought up to date
        self._rate = 1.0                # the host's RATE
        self._presence_held = False     # the safety input holds the arm
        self._presence_seen = -np.inf   # device time the input last saw something
        self._homing = False
        self._guard = Guard()
        self._guard_tripped = False
        self._guard_pending: float | None = None
        self._tare = np.zeros(6)
        self._recent_wrench: deque[np.ndarray] = deque(maxlen=self.config.tare_samples)
        self._gripper_target: float | None = None
        self._gripper_last = (0.0, 0.0)
        self._gripper_force = 0.0
        self._ticks = 0
        state = self.hardware.read()
        self._setpoint = state.q.copy()
        self._state = state
        self._now = now
        self._emit(Event(EventKind.BOOT, self._device_us(now)))

    # --- I/O ----------------------------------------------------------------------------------

    def receive(self, data: bytes) -> None:
        self._inbox += data

    def take_output(self) -> bytes:
        out = bytes(self._out)
        self._out.clear()
        return out

    # --- the control loop ---------------------------------------------------------------------

    def tick(self, now: float) -> None:
        """One control period. Nothing the host sends makes it raise: a command that does not fit
        is refused (NAK). An error of the engine's own, or a reading that is not a number,
        latches Fault.INTERNAL and stops the arm; each stage of the tick (reading, commands,
        control, telemetry) is kept apart, so one that fails every tick leaves the others, and
        the link, running."""
        self._now = now
        self._guarded(self._read_hardware)
        self._guarded(lambda: self._read_commands(now))
        self._guarded(lambda: self._control(now))
        self._ticks += 1
        if self._ticks % self._telemetry_every == 0:
            self._guarded(lambda: self._emit(self._telemetry()))

    def _control(self, now: float) -> None:
        state = self._state
        if self._watchdog_armed and self._last_rx is not None \
                and self._since(self._last_rx) > self.config.watchdog_s:
            self._latch(Fault.WATCHDOG)
        self._safety(state)
        self._presence(now, state)
        self._advance_motion(now, state)
        self.hardware.command_joints(self._setpoint)
        self._advance_gripper(state)

    def _read_hardware(self) -> None:
        """This tick's reading; one that is not a finite f32 (a driver handing back garbage) is
        refused and the last good one kept: every check compares against it, and a NaN passes
        every comparison."""
        state = self.hardware.read()
        values = np.concatenate([np.ravel(state.q), np.ravel(state.qd), np.ravel(state.wrench),
                                 [state.gripper_width]]).astype(float)
        if not np.all(np.abs(values) <= F32_MAX):        # also false for NaN
            raise ValueError("the hardware read a value that is not a finite f32 "
                             "(joints, speeds, wrist or gripper)")
        self._state = state
        self._recent_wrench.append(state.wrench.copy())

    def serve_link(self, now: float) -> None:
        """Read and answer the host's commands without a control tick: for a device whose world
        stands still for a moment (a simulated cell waiting for its renderer on a busy machine).
        The link stays alive; nothing moves and no device time passes."""
        self._now = now
        self._guarded(self._read_hardware)
        self._guarded(lambda: self._read_commands(now))

    def _guarded(self, stage) -> None:
        try:
            stage()
        except Exception as exc:  # noqa: BLE001 - a control loop that dies leaves the arm unattended
            self._internal_error(exc)

    def _read_commands(self, now: float) -> None:
        """Handle what arrived, frame by frame in the order it came: a corrupt frame latches COMM
        where it stands among the others (a CLEAR_FAULT before it in the same tick does not clear
        it; one after it does)."""
        data = bytes(self._inbox)
        self._inbox.clear()
        for frame in self._decoder.feed_in_order(data):
            if frame is None:
                if self._handshaken:
                    self._latch(Fault.COMM)
                continue
            self.stats.frames_ok += 1
            self._last_rx = now
            self._replied = False
            try:
                self._handle(frame)
            except Exception as exc:  # noqa: BLE001 - as in tick: the next frames go on
                self._internal_error(exc)
                if not self._replied and self._handshaken and self._last_seq == frame.seq:
                    # taken in sequence, then failed: its answer, for it and any repeat
                    self._reply(Nak(frame.seq, Reason.FAULT_LATCHED))
        self.stats.frames_corrupt = self._decoder.frames_corrupt

    def _internal_error(self, exc: Exception) -> None:
        """The engine's own error: stop the arm where it is commanded to be, latch INTERNAL. The
        first few are kept for the report (one that repeats every tick would fill the memory)."""
        self.stats.internal_error_count += 1
        if len(self.stats.internal_errors) < KEPT_ERRORS:
            self.stats.internal_errors.append(f"{type(exc).__name__}: {exc}")
        try:
            self._latch(Fault.INTERNAL)
        except Exception:  # noqa: BLE001 - its EVENT could not be sent: the arm stops all the same
            self._fault |= Fault.INTERNAL
            self._motion = None
            self._homing = False

    # --- commands -----------------------------------------------------------------------------

    def _handle(self, frame: Frame) -> None:
        if frame.type >= 0x80:
            return  # not a command: ignore what a host should never send
        message, refused = None, None
        try:
            message = decode(frame.type, frame.body)
            if not finite(message):
                if isinstance(message, TrajLoad):
                    self._trajectories.forget(message.traj_id)   # no half of it stays runnable
                message, refused = None, Reason.MALFORMED
        except MessageError:
            refused = Reason.UNKNOWN_TYPE if frame.type not in _KNOWN else Reason.MALFORMED
        if isinstance(message, Hello):
            self._hello(frame.seq, message)
            return
        if not self._handshaken:
            self._reply(Nak(frame.seq, refused or Reason.NO_HANDSHAKE), remember=False)
            return
        if frame.seq == self._last_seq:
            # The host did not hear our answer and sent the same command again: answer again,
            # run nothing twice.
            self.stats.duplicates += 1
            if self._last_reply is not None:
                self._emit(self._last_reply)
            return
        if frame.seq != (self._last_seq + 1) & 0xFFFF:
            self._reply(Nak(frame.seq, Reason.OUT_OF_SEQUENCE), remember=False)
            return
        # An in-sequence command uses up its number whether it runs or is refused, even when it
        # could not be read (docs/protocol.md section 4): the host's next command is seq + 1.
        self._last_seq = frame.seq
        if refused is not None:
            self._reply(Nak(frame.seq, refused))
            return
        reason = self._execute(message)
        self.stats.commands_executed += 1
        self._reply(Ack(frame.seq) if reason is None else Nak(frame.seq, reason))

    def _hello(self, seq: int, hello: Hello) -> None:
        # A HELLO is a host starting over: whatever it set going stops (and one of another
        # version, which leaves no way to command the arm, must not leave it moving).
        if self._motion is not None or self._homing:
            self._hold(EventKind.STOPPED)
        compatible = hello.protocol_version == PROTOCOL_VERSION
        self._handshaken = compatible
        self._watchdog_armed = self._watchdog_armed or compatible
        self._last_seq = seq
        self._last_rx = self._now
        cfg = self.config
        self._reply(HelloReply(seq, PROTOCOL_VERSION, FIRMWARE_VERSION, self.boot_id, cfg.control_hz,
                               cfg.telemetry_hz, cfg.max_points, cfg.gripper_stroke,
                               cfg.force_range_n, cfg.joints))

    def _execute(self, message: Message) -> Reason | None:
        """Run one in-sequence command; the reason it was refused, or None."""
        if isinstance(message, Heartbeat):
            return None
        if isinstance(message, EStop):
            self._latch(Fault.ESTOP)
            return None
        if isinstance(message, Stop):
            if self._motion is not None or self._homing:
                self._hold(EventKind.STOPPED)
            return None
        if isinstance(message, ClearFault):
            return self._clear_fault()
        if isinstance(message, Tare):
            if self._recent_wrench:
                self._tare = np.mean(np.array(self._recent_wrench), axis=0)
            return None
        if isinstance(message, Guard):
            return self._set_guard(message)
        if isinstance(message, Rate):
            self._set_rate(message.scale)
            return None
        if isinstance(message, TrajLoad):
            return self._trajectories.load(message, self.config)
        if isinstance(message, Enable):
            if not message.on:
                self._hold(EventKind.STOPPED if self._motion is not None else None)
            self._enabled = message.on
            return None
        # Everything below moves something.
        if self._fault:
            return Reason.FAULT_LATCHED
        if not self._enabled:
            return Reason.NOT_ENABLED
        if isinstance(message, Gripper):
            if not 0.0 <= message.width_m <= self.config.gripper_stroke + 1e-6 or message.force_n < 0:
                return Reason.MALFORMED
            self._gripper_target = message.width_m
            self._gripper_force = message.force_n
            self._gripper_last = (self._now, self._state.gripper_width)
            if self._pace > 0.0:
                self.hardware.command_gripper(message.width_m, message.force_n)
            return None
        if self._motion is not None or self._homing:
            return Reason.BUSY
        if isinstance(message, Home):
            self._start(straight_move(self._setpoint, self._home, self.config.joints,
                                      self.config.homing_speed_scale))
            self._homing = True
            return None
        if isinstance(message, TrajRun):
            return self._run(message.traj_id)
        return Reason.UNKNOWN_TYPE

    def _set_guard(self, guard: Guard) -> Reason | None:
        if guard.enabled:
            norm = float(np.linalg.norm(guard.direction))
            if not 0.5 < norm < 2.0 or not guard.threshold_n > 0:
                return Reason.MALFORMED
            guard = Guard(True, tuple(float(v) / norm for v in guard.direction), guard.threshold_n)
        self._guard = guard
        return None

    def _run(self, traj_id: int) -> Reason | None:
        if not self._homed:
            return Reason.NOT_HOMED
        trajectory = self._trajectories.loaded.get(traj_id)
        if trajectory is None:
            return Reason.BAD_TRAJECTORY
        if np.max(np.abs(trajectory.positions[0] - self._setpoint)) > self.config.start_tolerance:
            return Reason.START_MISMATCH
        self._start(trajectory)
        self._guard_tripped = False
        self._guard_pending = None
        return None

    def _clear_fault(self) -> Reason | None:
        if not self._fault:
            return None
        if np.linalg.norm(self._tared()[:3]) > self.config.force_range_n:
            return Reason.FAULT_ACTIVE
        self._fault = Fault(0)
        self._homed = False   # positions may have been disturbed: re-home before moving
        self._last_rx = self._now
        return None

    # --- motion -------------------------------------------------------------------------------

    def _advance_motion(self, now: float, state: HardwareState) -> None:
        if self._motion is None:
            return
        if not self._homing and self._guard.enabled:
            force = float(self._tared()[:3] @ np.array(self._guard.direction))
            if force > self._guard.threshold_n:
                # Stop in this very tick: the set-point stays where it was last tick, so the
                # commanded velocity is zero from now on.
                self.stats.guard_trips.append(GuardRecord(self._motion.traj_id, now, now, force))
                self._guard_tripped = True
                self._emit(Event(EventKind.GUARD_TRIPPED, self._device_us(now), self._motion.traj_id,
                                 0, force))
                self._motion = None
                return
        self._motion_elapsed += self._since(self._motion_clock) * self._pace
        self._motion_clock = now
        elapsed = self._motion_elapsed
        self._setpoint = self._motion.target(elapsed)
        if elapsed >= self._motion.duration:
            if self._homing:
                self._homing = False
                self._homed = True
                self._emit(Event(EventKind.HOMED, self._device_us(now)))
            else:
                self._emit(Event(EventKind.TRAJ_DONE, self._device_us(now), self._motion.traj_id))
            self._motion = None

    def _start(self, motion: LoadedTrajectory) -> None:
        self._motion = motion
        self._motion_elapsed = 0.0
        self._motion_clock = self._now

    @property
    def _pace(self) -> float:
        """The pace motion runs at: the host's RATE, or nothing while the safety input holds."""
        return 0.0 if self._presence_held else self._rate

    def _set_rate(self, scale: float) -> None:
        """Motion from now on runs at `scale` of its planned pace."""
        self._change_pace(lambda: setattr(self, "_rate", scale))

    def _presence(self, now: float, state: HardwareState) -> None:
        """The safety input holds motion from the tick it sees something until it has been clear
        for `presence_hold_s`, whatever the host does."""
        if state.presence:
            self._presence_seen = now
        held = self._since(self._presence_seen) < self.config.presence_hold_s
        if held != self._presence_held:
            # a hold starts with this tick's set-point equal to the last one, as a guard's stop
            self._change_pace(lambda: setattr(self, "_presence_held", held), count_tick=not held)

    def _change_pace(self, change, count_tick: bool = True) -> None:
        """Apply `change` to what sets the pace. Time so far counts at the old pace (without this
        tick's, unless `count_tick`). Stopping also holds the fingers where they are (a hand may
        be near them); going on sends them on to their target."""
        before = self._pace
        if self._motion is not None:
            if count_tick:
                self._motion_elapsed += self._since(self._motion_clock) * before
            self._motion_clock = self._now
        change()
        after = self._pace
        if self._gripper_target is not None and (after == 0.0) != (before == 0.0):
            width = self._state.gripper_width if after == 0.0 else self._gripper_target
            self.hardware.command_gripper(width, self._gripper_force)
            self._gripper_last = (self._now, self._state.gripper_width)

    def _hold(self, event: EventKind | None) -> None:
        """Stop where the set-point is now (zero commanded velocity from this tick)."""
        traj_id = self._motion.traj_id if self._motion is not None else 0
        self._motion = None
        self._homing = False
        if event is not None:
            self._emit(Event(event, self._device_us(self._now), traj_id))

    def _advance_gripper(self, state: HardwareState) -> None:
        if self._gripper_target is None or self._pace == 0.0:
            return
        t0, w0 = self._gripper_last
        reached = abs(state.gripper_width - self._gripper_target) < 0.0005
        if self._since(t0) >= 0.05:
            # Closed on an object when the fingers stopped moving short of the target.
            stalled = abs(state.gripper_width - w0) < 0.0002
            self._gripper_last = (self._now, state.gripper_width)
            if stalled or reached:
                self._gripper_target = None
                self._emit(Event(EventKind.GRIPPER_DONE, self._device_us(self._now), 0, 0,
                                 state.gripper_width))

    # --- safety -------------------------------------------------------------------------------

    def _safety(self, state: HardwareState) -> None:
        if np.any(np.abs(state.wrench[:3] - self._tare[:3]) > self.config.force_range_n):
            self._latch(Fault.OVERLOAD)
        if np.max(np.abs(state.q - self._setpoint)) > self.config.tracking_limit:
            self._latch(Fault.TRACKING)
        q_min = np.array([j.q_min for j in self.config.joints])
        q_max = np.array([j.q_max for j in self.config.joints])
        if np.any(state.q < q_min - 0.01) or np.any(state.q > q_max + 0.01):
            self._latch(Fault.LIMIT)

    def _latch(self, fault: Fault) -> None:
        if fault in self._fault:
            return
        self._fault |= fault
        self._motion = None
        self._homing = False
        if fault is Fault.TRACKING:
            self._setpoint = self._state.q.copy()  # stop fighting whatever blocks the arm
        self._emit(Event(EventKind.FAULT, self._device_us(self._now), 0, int(fault)))

    # --- helpers ------------------------------------------------------------------------------

    def _tared(self) -> np.ndarray:
        return self._state.wrench - self._tare

    def _status(self) -> Status:
        status = Status(0)
        for flag, on in ((Status.HANDSHAKEN, self._handshaken), (Status.ENABLED, self._enabled),
                         (Status.HOMED, self._homed), (Status.MOVING, self._motion is not None and not self._homing),
                         (Status.HOMING, self._homing), (Status.GUARD_ARMED, self._guard.enabled),
                         (Status.GUARD_TRIPPED, self._guard_tripped), (Status.FAULT, bool(self._fault)),
                         (Status.GRIPPER_MOVING, self._gripper_target is not None),
                         (Status.PAUSED, self._rate == 0.0), (Status.SLOWED, 0.0 < self._rate < 1.0),
                         (Status.PRESENCE, self._presence_held)):
            if on:
                status |= flag
        return status

    def _telemetry(self) -> Telemetry:
        s = self._state
        traj_id = self._motion.traj_id if self._motion is not None else 0
        return Telemetry(self._device_us(self._now), self.boot_id, int(self._status()), int(self._fault),
                         traj_id, self._last_seq or 0, tuple(float(v) for v in s.q),
                         tuple(float(v) for v in s.qd), float(s.gripper_width),
                         tuple(float(v) for v in self._tared()),
                         tuple(float(v) for v in self._setpoint))

    def _since(self, then: float) -> float:
        return since_s(self._now, then)

    def _device_us(self, now: float) -> int:
        return device_us(now, self.boot_time)

    def _emit(self, message: Message) -> None:
        self._out += Frame(self._tx_seq, message.TYPE, message.pack()).encode()
        self._tx_seq = (self._tx_seq + 1) & 0xFFFF

    def _reply(self, message: Message, remember: bool = True) -> None:
        self._replied = True
        self._emit(message)
        if remember:
            self._last_reply = message

    # --- for tests and measurement ------------------------------------------------------------

    @property
    def fault(self) -> Fault:
        return self._fault

    @property
    def setpoint(self) -> np.ndarray:
        return self._setpoint.copy()

    @property
    def device_time(self) -> float:
        return self._now - self.boot_time


_KNOWN = set(COMMANDS)
