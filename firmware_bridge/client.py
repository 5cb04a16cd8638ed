"""`ArmClient`: the host's handle on the arm's microcontroller.

Lifecycle: `connect()` opens the port and shakes hands (protocol version checked, joint limits
read); `enable()`, `home()`; then motions; `close()` (or leaving the `with` block) stops the arm
whatever happened. A heartbeat thread keeps the device's watchdog fed. Every wait is bounded in
the device's own time; every fault surfaces as a typed error (firmware_bridge.errors), after which
the client has already told the arm to stop.
"""

from __future__ import annotations

import sys
import threading
import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Callable

import numpy as np

from firmware_bridge.errors import (ArmError, ArmTimeout, CommandRefused, ConnectError, DeviceFault,
                                    DeviceResetError, FrameDropError, LinkError,
                                    VersionMismatchError)
from firmware_bridge.link import DEFAULT_BAUD, SerialLink
from firmware_bridge.messages import (PROTOCOL_VERSION, Ack, ClearFault, Fault,
                                      Enable, EStop, Event, EventKind, Gripper, Guard, Heartbeat,
                                      Hello, HelloReply, Home, JointInfo, Message, Nak, Rate,
                                      Reason, Status, Stop, Tare, Telemetry, TrajLoad, TrajRun,
                                      MAX_JOINTS, finite, points_per_frame)

HEARTBEAT_S = 0.05
SWITCH_INTERVAL_S = 0.0005
ACK_TIMEOUT_S = 0.08
# Telemetry comes every 4 ms: 80 ms of silence is a stalled link (detected within the 100 ms the
# design allows, with the reader's 10 ms polling).
STALL_S = 0.08
HANDSHAKE_TIMEOUT_S = 2.0

_HINTS = {
    Reason.NOT_HOMED: "Home the arm first (after power-on and after any fault).",
    Reason.FAULT_LATCHED: "Clear the fault (clear_fault) and re-home.",
    Reason.NOT_ENABLED: "Enable the arm first.",
    Reason.BUSY: "Wait for the running motion to end, or stop it.",
    Reason.LIMIT: "The trajectory leaves the joint limits or exceeds a joint's speed limit.",
    Reason.START_MISMATCH: "The trajectory does not start where the arm is: plan from the current joints.",
    Reason.NO_HANDSHAKE: "Connect (handshake) first.",
    Reason.VERSION: "Update the host or the firmware so both speak the same protocol version.",
}


@dataclass(frozen=True)
class DeviceInfo:
    protocol_version: int
    firmware_version: tuple[int, int, int]
    boot_id: int
    control_hz: int
    telemetry_hz: int
    max_points: int
    gripper_stroke: float
    force_range_n: float
    joints: tuple[JointInfo, ...]

    @property
    def joint_count(self) -> int:
        return len(self.joints)


@dataclass(frozen=True)
class MotionHandle:
    traj_id: int
    event_mark: tuple[int, int]
    duration: float


class MotionOutcome(StrEnum):
    """How a motion ended."""

    DONE = "done"          # it ran to its end
    GUARD = "guard"        # the force guard stopped it
    STOPPED = "stopped"    # a STOP (the host, the safety monitor) ended it


@dataclass(frozen=True)
class MotionResult:
    """How a motion ended, when, and where the arm was."""

    outcome: MotionOutcome
    traj_id: int
    device_time: float       # s since the device booted, when it ended
    force_n: float           # force along the guard axis when it tripped (0 otherwise)
    q: np.ndarray            # joints in the first telemetry after it ended


class ArmClient:
    def __init__(self, url: str, *, baudrate: int = DEFAULT_BAUD, stall_s: float = STALL_S,
                 ack_timeout_s: float = ACK_TIMEOUT_S,
                 handshake_timeout_s: float = HANDSHAKE_TIMEOUT_S):
        self.url = url
        self._baudrate = baudrate
        self._stall_s = stall_s
        self._ack_timeout_s = ack_timeout_s
        self._handshake_s = handshake_timeout_s
        self._cond = threading.Condition()
        self._command_lock = threading.Lock()
        self._link: SerialLink | None = None
        self._replies: dict[int, Message] = {}
        self._telemetry: Telemetry | None = None
        self._events: list[Event] = []
        self._error: ArmError | None = None
        self._info: DeviceInfo | None = None
        self._traj_id = 0
        self._rate = 1.0
        self._heartbeat: threading.Thread | None = None
        self._stop_heartbeat = threading.Event()
        self._guard_listeners: list[Callable[[float | None], None]] = []
        self._listeners: list[Callable[[Telemetry], None]] = []

    # --- lifecycle ----------------------------------------------------------------------------

    @classmethod
    def open(cls, url: str, **kwargs) -> ArmClient:
        client = cls(url, **kwargs)
        client.connect()
        return client

    def __enter__(self) -> ArmClient:
        if self._link is None:
            self.connect()
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def connect(self) -> DeviceInfo:
        """Open the port and shake hands; raises ConnectError or VersionMismatchError."""
        self._error = None
        self._link = SerialLink(self.url, self._on_message, self._on_link_error,
                                baudrate=self._baudrate, stall_s=max(self._stall_s, self._handshake_s))
        self._link.start()
        reply = None
        deadline = time.monotonic() + self._handshake_s
        while reply is None and time.monotonic() < deadline and self._error is None:
            try:
                reply = self._command(Hello(PROTOCOL_VERSION), expect=HelloReply, timeout_s=0.25)
            except FrameDropError:
                self._error = None   # the device may still be booting: ask again
        if reply is None:
            self.close()
            raise ConnectError(f"no handshake from the device on {self.url} within "
                               f"{self._handshake_s:g} s: is it powered and running the arm firmware?")
        if reply.protocol_version != PROTOCOL_VERSION:
            self.close()
            raise VersionMismatchError(
                f"device on {self.url} speaks protocol {reply.protocol_version}, this host speaks "
                f"{PROTOCOL_VERSION}: the device will not move. Update one side.")
        if not 1 <= len(reply.joints) <= MAX_JOINTS or not finite(reply):
            self.close()
            raise ConnectError(f"the device on {self.url} describes {len(reply.joints)} joints "
                               f"(1 to {MAX_JOINTS} can be commanded) or numbers that are not "
                               f"finite: check its firmware's configuration")
        self._info = DeviceInfo(reply.protocol_version, tuple(reply.firmware_version), reply.boot_id,
                                reply.control_hz, reply.telemetry_hz, reply.max_points,
                                reply.gripper_stroke_m, reply.force_range_n, tuple(reply.joints))
        self._link.set_stall_limit(self._stall_s)  # handshake done: hold the link to the tight limit
        self.wait_for(lambda t: True, timeout_s=1.0)
        # A device keeps its pace across hosts: a host that was killed may have left it paused.
        # Start from the planned pace; whoever watches the workspace sets it from here on.
        self._command(Rate(1.0))
        self._rate = 1.0
        # The reader and heartbeat threads must get the interpreter within a few milliseconds
        # while the main thread computes (perception, planning): at Python's default 5 ms switch
        # interval the reader falls behind 250 Hz telemetry, the heartbeat waits behind the
        # backlog for its answer, and the device's 200 ms watchdog stops the arm.
        sys.setswitchinterval(min(sys.getswitchinterval(), SWITCH_INTERVAL_S))
        self._stop_heartbeat.clear()
        self._heartbeat = threading.Thread(target=self._heartbeat_loop, name="arm-heartbeat",
                                           daemon=True)
        self._heartbeat.start()
        return self._info

    def close(self) -> None:
        """Stop the arm (best effort, whatever state the link is in) and close the port."""
        self._stop_heartbeat.set()
        if self._heartbeat is not None and self._heartbeat is not threading.current_thread():
            self._heartbeat.join(timeout=1.0)
        if self._link is not None:
            try:
                self._link.send(Stop())
            except ArmError:
                pass
            self._link.close()
            self._link = None

    @property
    def info(self) -> DeviceInfo:
        if self._info is None:
            raise ConnectError("not connected: call connect() first")
        return self._info

    # --- state --------------------------------------------------------------------------------

    def telemetry(self) -> Telemetry:
        """The latest telemetry (device-time stamped)."""
        self._check()
        with self._cond:
            if self._telemetry is None:
                raise ConnectError("no telemetry yet")
            return self._telemetry

    def device_time(self) -> float:
        return self.telemetry().device_time

    def on_telemetry(self, listener: Callable[[Telemetry], None]) -> None:
        """Call `listener` (from the reader thread) with every telemetry message."""
        self._listeners.append(listener)

    def wait_for(self, predicate: Callable[[Telemetry], bool], timeout_s: float) -> Telemetry:
        """Wait until a telemetry message satisfies `predicate`; `timeout_s` in device time."""
        deadline = None
        with self._cond:
            while True:
                self._check_locked()
                t = self._telemetry
                if t is not None:
                    if predicate(t):
                        return t
                    if deadline is None:
                        deadline = t.device_time + timeout_s
                    elif t.device_time >= deadline:
                        raise ArmTimeout(f"condition not met within {timeout_s:g} s of device time")
                self._cond.wait(0.05)

    # --- commands -----------------------------------------------------------------------------

    def enable(self, on: bool = True) -> None:
        self._command(Enable(on))

    def home(self, timeout_s: float = 60.0) -> None:
        """Drive every joint to the device's home position; the arm may move afterwards."""
        mark = self._event_mark()
        self._command(Home())
        self._wait_event(mark, {EventKind.HOMED}, timeout_s, "homing")

    def tare(self) -> None:
        """Zero the wrist sensor with the tool as it is now."""
        self._command(Tare())

    def set_guard(self, direction, threshold_n: float) -> None:
        self._command(Guard(True, tuple(float(v) for v in direction), float(threshold_n)))
        for listener in self._guard_listeners:
            listener(float(threshold_n))

    def clear_guard(self) -> None:
        self._command(Guard(False))
        for listener in self._guard_listeners:
            listener(None)

    def on_guard(self, listener: Callable[[float | None], None]) -> None:
        """Call `listener` with each guard the device took: its threshold (N), None when
        cleared."""
        self._guard_listeners.append(listener)

    def gripper(self, width_m: float, force_n: float = 10.0, wait: bool = True,
                timeout_s: float = 5.0) -> float:
        """Open or close to `width_m`; returns the width reached (short of it on an object)."""
        mark = self._event_mark()
        self._command(Gripper(float(width_m), float(force_n)))
        if not wait:
            return self.telemetry().gripper_width_m
        event = self._wait_event(mark, {EventKind.GRIPPER_DONE}, timeout_s, "the gripper")
        return event.value

    def follow(self, times, positions, guard: tuple | None = None, wait: bool = True,
               timeout_s: float | None = None) -> MotionResult | MotionHandle:
        """Run a timed joint trajectory (times from 0, s; positions (N, joints), rad). With
        `guard=(direction, threshold_n)` the device stops the motion within one control tick of
        the wrist force along `direction` crossing the threshold. Returns how it ended (or, with
        wait=False, a handle to pass to `wait_motion`)."""
        times = np.asarray(times, float)
        positions = np.asarray(positions, float)
        joints = self.info.joint_count
        if positions.ndim != 2 or positions.shape[1] != joints or len(times) != len(positions):
            raise ValueError(f"expected times (N,) and positions (N, {joints}), got "
                             f"{times.shape} and {positions.shape}")
        if len(times) > self.info.max_points:
            raise ValueError(f"{len(times)} points: the device takes at most {self.info.max_points}")
        self._traj_id = self._traj_id % 0xFFFF + 1
        traj_id = self._traj_id
        per_frame = points_per_frame(joints)
        for start in range(0, len(times), per_frame):
            chunk = tuple((float(times[i]), tuple(float(v) for v in positions[i]))
                          for i in range(start, min(start + per_frame, len(times))))
            self._command(TrajLoad(traj_id, start, len(times), chunk), what="trajectory upload")
        if guard is not None:
            self.set_guard(guard[0], guard[1])
        else:
            self.clear_guard()
        handle = MotionHandle(traj_id, self._event_mark(), float(times[-1]))
        self._command(TrajRun(traj_id), what="trajectory start")
        if not wait:
            return handle
        return self.wait_motion(handle, timeout_s)

    def wait_motion(self, handle: MotionHandle, timeout_s: float | None = None) -> MotionResult:
        """Wait for a motion started with `follow(..., wait=False)` to end; by default allow
        half again its planned duration plus two seconds of device time."""
        traj_id = handle.traj_id
        if timeout_s is None:
            timeout_s = handle.duration * 1.5 + 2.0
        kinds = {EventKind.TRAJ_DONE, EventKind.GUARD_TRIPPED, EventKind.STOPPED}
        event = self._wait_event(handle.event_mark, kinds, timeout_s, "the motion", traj_id=traj_id)
        outcome = {EventKind.TRAJ_DONE: MotionOutcome.DONE, EventKind.GUARD_TRIPPED: MotionOutcome.GUARD,
                   EventKind.STOPPED: MotionOutcome.STOPPED}[EventKind(event.kind)]
        after = self.wait_for(lambda t: t.device_time_us >= event.device_time_us, 1.0)
        return MotionResult(outcome, traj_id, event.device_time_us * 1e-6, event.value,
                            np.array(after.q))

    def set_rate(self, scale: float) -> None:
        """Run motion at `scale` (0..1) of its planned pace from the device's next tick: 0 pauses
        the arm and the fingers where they are, 1 goes on at full pace. Waits for motions stretch
        by the time the device spends paused or slowed."""
        scale = float(scale)
        if not 0.0 <= scale <= 1.0:
            raise ValueError(f"a motion rate is within 0..1, got {scale}")
        self._command(Rate(scale))
        self._rate = scale

    @property
    def rate(self) -> float:
        """The pace last set with `set_rate` (1 after connecting)."""
        return self._rate

    def stop(self) -> None:
        """Controlled stop: the running motion ends where it is."""
        self._command(Stop())

    def estop(self) -> None:
        """Emergency stop: the arm holds and a fault latches until cleared."""
        self._command(EStop())

    def clear_fault(self) -> None:
        """Clear a latched fault; the arm must be re-homed before it moves again."""
        self._command(ClearFault())

    # --- inside -------------------------------------------------------------------------------

    def _command(self, message: Message, expect: type[Message] = Ack, what: str | None = None,
                 timeout_s: float | None = None):
        """Send one command and wait for its answer (stop-and-wait: in order, exactly once)."""
        self._check()
        with self._command_lock:
            link = self._link
            if link is None:
                raise ConnectError("not connected")
            seq = link.next_seq
            with self._cond:
                self._replies.pop(seq, None)
            limit = timeout_s or self._ack_timeout_s
            link.send(message)
            # The answer is due within `limit` of device time from when the device got the command
            # (its telemetry says so in `last_cmd_seq`). Counting from the telemetry on hand at
            # sending would be wrong when this process fell behind reading: a backlog of older
            # telemetry would make a prompt answer look late. A command the device never got is
            # caught by the device (a corrupt frame latches a fault), by the stall limit, and in the
            # end by the wall-clock backstop.
            backstop = time.monotonic() + max(limit, self._stall_s) + limit
            received_at = None
            with self._cond:
                while seq not in self._replies:
                    self._check_locked()
                    t = self._telemetry
                    if received_at is None and t is not None and t.last_cmd_seq == seq:
                        received_at = t.device_time
                    late = (received_at is not None and t.device_time - received_at > limit) \
                        or time.monotonic() > backstop
                    if late:
                        error = FrameDropError(f"no answer to {type(message).__name__} (seq {seq}) "
                                               f"within {limit * 1000:.0f} ms of device time")
                        self._set_error(error)
                        raise error
                    self._cond.wait(0.01)
                reply = self._replies.pop(seq)
        if isinstance(reply, Nak):
            name = what or type(message).__name__.upper()
            hint = _HINTS.get(reply.reason, "")
            latched = self._telemetry.fault if self._telemetry is not None else 0
            if reply.reason == Reason.FAULT_LATCHED and latched:
                hint = f"Latched: {'+'.join(f.name for f in Fault if f & latched)}. {hint}"
            raise CommandRefused(name, reply.reason, hint)
        if not isinstance(reply, expect):
            raise CommandRefused(type(message).__name__, 0, f"unexpected answer {type(reply).__name__}")
        return reply

    def _event_mark(self) -> tuple[int, int]:
        """Where to start looking for the answer to the next command: events after this index,
        telemetry produced after the device ran the next command's sequence number."""
        with self._cond:
            return len(self._events), self._link.next_seq if self._link is not None else 0

    def _wait_event(self, mark: tuple[int, int], kinds: set, timeout_s: float, what: str,
                    traj_id: int | None = None) -> Event:
        first_event, first_seq = mark
        deadline = seen = None
        with self._cond:
            while True:
                self._check_locked()
                for event in self._events[first_event:]:
                    if event.kind == EventKind.FAULT:
                        raise DeviceFault(event.code)
                    if event.kind in kinds and (traj_id is None or event.kind == EventKind.GRIPPER_DONE
                                                or event.traj_id == traj_id):
                        return event
                t = self._telemetry
                if t is not None:
                    current = (t.last_cmd_seq - first_seq) & 0xFFFF < 0x8000
                    if t.fault and current:
                        raise DeviceFault(t.fault)
                    if deadline is None:
                        deadline = seen = t.device_time
                        deadline += timeout_s
                    # Device time spent paused (by RATE 0 or by the safety input), or the part
                    # of it lost to slowing, does not count.
                    rate = 0.0 if t.status & (Status.PAUSED | Status.PRESENCE) else self._rate
                    deadline += (t.device_time - seen) * (1.0 - rate)
                    seen = t.device_time
                    if t.device_time >= deadline:
                        raise ArmTimeout(f"{what} did not finish within {timeout_s:g} s of device time")
                self._cond.wait(0.05)

    def _on_message(self, seq: int, message: Message) -> None:
        with self._cond:
            if isinstance(message, Telemetry):
                if self._info is not None and message.boot_id != self._info.boot_id:
                    self._set_error(DeviceResetError(
                        f"the device on {self.url} rebooted (boot id changed): it is not homed; "
                        f"reconnect, then home"))
                elif self._telemetry is not None and message.device_time_us < self._telemetry.device_time_us:
                    self._set_error(DeviceResetError(f"the device clock on {self.url} went back: it rebooted"))
                self._telemetry = message
            elif isinstance(message, (Ack, Nak, HelloReply)):
                self._replies[message.cmd_seq] = message
                if isinstance(message, HelloReply) and self._link is not None:
                    self._link.synced()
            elif isinstance(message, Event):
                if message.kind == EventKind.BOOT and self._info is not None:
                    self._set_error(DeviceResetError(f"the device on {self.url} rebooted: it is not "
                                                     f"homed; reconnect, then home"))
                self._events.append(message)
            self._cond.notify_all()
        if isinstance(message, Telemetry):
            for listener in self._listeners:
                listener(message)

    def _on_link_error(self, error: LinkError) -> None:
        with self._cond:
            self._set_error(error)
            self._cond.notify_all()

    def _set_error(self, error: ArmError) -> None:
        """Remember the first fault, stop heartbeating (the device's watchdog then stops it even
        if nothing else gets through) and try to tell the arm to stop."""
        if self._error is not None:
            return
        self._error = error
        self._stop_heartbeat.set()
        link = self._link
        if link is not None and not isinstance(error, VersionMismatchError):
            threading.Thread(target=self._best_effort_stop, args=(link,), daemon=True).start()

    @staticmethod
    def _best_effort_stop(link: SerialLink) -> None:
        try:
            link.send(Stop())
        except ArmError:
            pass

    def _check(self) -> None:
        with self._cond:
            self._check_locked()

    def _check_locked(self) -> None:
        if self._error is not None:
            raise self._error

    def _heartbeat_loop(self) -> None:
        while not self._stop_heartbeat.wait(HEARTBEAT_S):
            try:
                self._command(Heartbeat())
            except ArmError:
                return
