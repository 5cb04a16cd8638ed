"""The safety monitor: while the robot plays, something entering the workspace around the tower
(a hand, an arm, a sleeve) pauses the arm on the device (RATE 0) at the first camera frame that
shows it; something near the workspace slows the arm; the arm goes on at full pace once both have
stayed clear for CLEAR_S of world time. The robot's own arm is cut out of every comparison: its
links are projected into each image from the joints the firmware reported at the frame's own world
time (kept from telemetry), grown by a margin. Joints read when the frame is compared instead
would be 50-100 ms late, and more on a busy machine, in which a transit moves the tool several
centimetres: the arm's own edge would then read as a hand.

It watches every camera in a thread of its own and never waits on the robot's turn, so a pause
lands within a frame period plus the time to compare one frame, whatever the turn is doing.

Something that stays in the workspace for LOOK_AFTER_S is looked at with perception (while the
arm is at work): a tower that fell stops the arm's motion and ends the watch (`fell_t`; the arm
then retracts, slowly: controller/safety/retract.py); blocks lying on the table, where a dropped block
lands, are things the cameras can read and not a hand, and are cut out of the comparison.

A watch that cannot see (a camera silent for SILENT_S, or the watching thread stopped by an error)
must neither leave the arm paused for ever nor let it move unwatched: the move it is in is stopped,
the turn is given up with the reason (`stuck`), and `check()` raises SafetyWatchError to whoever
waits on the watch between turns.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections import deque
from dataclasses import dataclass
from enum import StrEnum
from typing import Callable

import numpy as np

from controller.cell_link import CellLink
from firmware_bridge.errors import ArmError
from firmware_bridge.messages import Status
from perception.events import WORKSPACE_MARGIN, WorkspaceWatch, capsule_mask
from perception.pipeline import Perception
from planning.game.geometry import TowerPose
from planning.collision import FINE_PARTS
from planning.kinematics import ArmModel

NEAR_MARGIN = 0.35        # m around the workspace: a person this close gets a slower arm
SLOW_RATE = 0.4
CLEAR_S = 0.5             # world time both zones stay clear before the arm goes on
ARM_GROW = 0.04           # m added to each link's radius: calibration, rendering, telemetry spacing
TOOL_GROW = 0.09          # the tool may carry a block sticking 60 mm out of its fingers
POLL_S = 0.004


class Level(StrEnum):
    CLEAR = "clear"          # nothing in the workspace
    NEAR = "near"            # something close: the arm slows
    INSIDE = "inside"        # something inside: the arm pauses
    FALLEN = "fallen"        # the tower fell: the watch is over


# Per level: the arm's pace, the event that reports the change, the status that shows it taken.
# After a fall the arm only retracts, and slowly: blocks may still be falling.
LEVELS = {Level.CLEAR: (1.0, "resume", Status(0)), Level.NEAR: (SLOW_RATE, "slow", Status.SLOWED),
          Level.INSIDE: (0.0, "pause", Status.PAUSED),
          Level.FALLEN: (SLOW_RATE, "fall", Status.SLOWED)}
LOOK_AFTER_S = 2.0        # world time something has stayed in the workspace before a look
# World time something may stay in the workspace while the arm is held at work before the turn is
# given up. The looks cut out blocks whose markers they read on the table; two blocks that fell
# off the top during a place, their markers out of sight, held the arm for 14 minutes of a
# seed-1 match with nothing said (a hand pauses the arm for a few seconds).
HELD_LIMIT_S = 30.0
JOINT_HISTORY = 1000      # telemetry readings kept (4 s at 250 Hz) to find the arm at a frame's time
DROPPED_RADIUS = 0.07     # m around a marker seen on the table: the block that carries it
# Host time a camera may send no new frame before the watch counts itself blind. The simulated
# cameras render 5-10 frames/s on a loaded laptop; a real camera that stops this long has gone.
SILENT_S = 5.0


class SafetyWatchError(RuntimeError):
    """The safety monitor cannot watch the workspace: the match must stop until it can."""


@dataclass(frozen=True)
class SafetyEvent:
    kind: str             # "pause", "slow", "resume", "fall", "dropped"
    frame_t: float        # world time of the frame that showed it
    device_t: float       # device time of the first reading at the new pace
    camera: str | None
    fraction: float       # share of the zone's pixels that changed

    @property
    def latency_s(self) -> float:
        return self.device_t - self.frame_t


class SafetyMonitor:
    def __init__(self, link: CellLink, arm_model: ArmModel,
                 on_event: Callable[[SafetyEvent], None] | None = None):
        self.link = link
        self.arm_model = arm_model
        self.on_event = on_event
        cameras = link.perception.cameras
        self._cameras = {c.name: c for c in cameras}
        model = link.perception.model
        self.inside = WorkspaceWatch(model, cameras, WORKSPACE_MARGIN)
        self.near = WorkspaceWatch(model, cameras, NEAR_MARGIN)
        self.events: list[SafetyEvent] = []
        self.level = Level.CLEAR
        self.fell_t: float | None = None       # world time of the frame that showed a fall
        self.stuck: str | None = None          # why the turn must be given up, if it must
        self.arm_at_work = False               # the robot's turn is on: look at what stays
        self._looker = Perception(link.cell, link.perception.cameras, link.perception.pose)
        self._dropped: list[np.ndarray] = []   # world points of blocks lying on the table
        self._inside_since: float | None = None
        self._next_look = -np.inf
        self._last_seen: dict[str, float] = {}  # world time something was last seen, per level
        self._reference_arm: dict[str, np.ndarray] = {}
        self._joints: deque[tuple[float, np.ndarray]] = deque(maxlen=JOINT_HISTORY)
        if link.arm is not None:
            link.arm.on_telemetry(self._keep_joints)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._look_lock = threading.Lock()     # the looker: the watching thread and `watch()` both use it
        self._thread: threading.Thread | None = None
        self.error: Exception | None = None

    # --- lifecycle -------------------------------------------------------------------------------

    def watch(self, pose: TowerPose, layers: int) -> None:
        """The workspace is clear now (the robot has looked): remember it, and watch from here on.
        Called again at every turn, as the tower grows."""
        self.check()
        frames = self.link.frames(self.link.arm.device_time())
        images = {name: f.image for name, f in frames.items()}
        # The looks compare with the last tower seen standing, first the one standing now: slots
        # emptied since are blocks that fell, seen even when they landed out of the cameras'
        # view. The looker forgets the tower of the last turn (a new round may have replaced it).
        with self._look_lock:
            self._looker.new_tower(pose, layers)
            self._looker.observe(frames)
        with self._lock:
            self.inside.set_clear(images, pose, layers)
            self.near.set_clear(images, pose, layers)
            self._reference_arm = {name: self._arm_mask(name, image.shape) for name, image in images.items()}
            self._dropped = []
            if self.level is Level.FALLEN:         # a new round, a tower standing again
                self.level, self.fell_t = Level.CLEAR, None
            if self.error is None:
                self.stuck = None
        if self._thread is None:
            self._stop.clear()
            self._thread = threading.Thread(target=self._run, name="safety-monitor", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop watching; the arm is left at full pace (it is idle between turns)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None
        self._set_level(Level.CLEAR, None, None, 0.0)

    def __enter__(self) -> SafetyMonitor:
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    # --- watching --------------------------------------------------------------------------------

    def check(self) -> None:
        """Raise SafetyWatchError if the watch has stopped seeing (see `stuck`)."""
        if self.error is not None:
            raise SafetyWatchError(self.stuck or str(self.error))

    def _run(self) -> None:
        seen = {name: 0 for name in self.link.cameras}
        heard = {name: time.monotonic() for name in self.link.cameras}
        try:
            while not self._stop.wait(POLL_S):
                for name, source in list(self.link.cameras.items()):
                    frame = source.latest()
                    if frame is None or frame.number == seen.get(name):
                        if time.monotonic() - heard[name] > SILENT_S:
                            raise SafetyWatchError(f"camera {name} has sent no frame for "
                                                   f"{SILENT_S:g} s: check its cable and power")
                        continue
                    seen[name], heard[name] = frame.number, time.monotonic()
                    self._check(name, frame)
        except Exception as exc:       # any error: the watch is blind from here on
            self._blind(exc)

    def _blind(self, exc: Exception) -> None:
        """The watch has stopped: stop the move the arm is in (it may be held paused) and say
        why. A fault of the link itself is met by the turn's own calls as well."""
        self.error = exc
        what = str(exc) if isinstance(exc, SafetyWatchError) else f"{type(exc).__name__}: {exc}"
        self.stuck = (f"the safety monitor stopped watching ({what}); the arm was stopped where it "
                      f"was: fix the cause, check the tower, then go on (play --resume LOG)")
        try:
            self.link.arm.stop()
        except (ArmError, OSError):
            pass                       # the link is gone: the device's watchdog stops the arm

    def _check(self, name: str, frame) -> None:
        if self.level is Level.FALLEN:
            return
        with self._lock:
            exclude = self._arm_mask(name, frame.image.shape, frame.time) \
                | self._reference_arm.get(name, False)
            if self._dropped:
                points = np.array(self._dropped)
                exclude = exclude | capsule_mask(self._cameras[name], frame.image.shape, points,
                                                 points, np.full(len(points), DROPPED_RADIUS))
            inside = self.inside.update(name, frame.image, frame.time, exclude)
            near = None if inside else self.near.update(name, frame.image, frame.time, exclude)
        if inside is not None:
            self._last_seen[Level.INSIDE] = frame.time
            if self._inside_since is None:
                self._inside_since = frame.time
            self._set_level(Level.INSIDE, frame.time, name, inside.fraction)
            if self.arm_at_work and frame.time - self._inside_since >= LOOK_AFTER_S \
                    and frame.time >= self._next_look:
                self._next_look = frame.time + LOOK_AFTER_S
                self._look_at_what_stays(frame.time)
            if self.arm_at_work and self.stuck is None and self.level is Level.INSIDE \
                    and frame.time - self._inside_since >= HELD_LIMIT_S:
                self.stuck = (f"something has stayed in the workspace for {HELD_LIMIT_S:g} s that the "
                              f"cameras cannot read as blocks on the table (blocks fallen with their "
                              f"markers out of sight?); the arm is held there: clear the workspace "
                              f"and check the tower, then go on (play --resume LOG)")
                self.link.arm.stop()      # ends the move it was held in; the turn then stops
            return
        # A camera that sees the workspace clear while another still sees something in it
        # neither ends the hold nor starts its clock again: `_inside_since` runs until the
        # level drops (a block dropped where one camera alone sees it held a seed-2 match).
        if near is not None:
            self._last_seen[Level.NEAR] = frame.time
            if self.level is not Level.INSIDE or frame.time - self._last_seen.get(Level.INSIDE, -1e9) >= CLEAR_S:
                self._set_level(Level.NEAR, frame.time, name, near.fraction)
        else:
            latest = max(self._last_seen.values(), default=-1e9)
            if self.level is not Level.CLEAR and frame.time - latest >= CLEAR_S:
                self._set_level(Level.CLEAR, frame.time, name, 0.0)

    def _look_at_what_stays(self, frame_t: float) -> None:
        """Something has stayed in the workspace: a fallen tower ends the watch and stops the
        arm's motion; blocks lying on the table are cut out of the comparison from now on."""
        frames = {name: source.latest() for name, source in self.link.cameras.items()}
        if any(f is None for f in frames.values()):
            return
        with self._look_lock:
            seen = self._looker.observe(frames).observation
        if seen.fell:
            self.fell_t = frame_t
            self.link.arm.stop()
            self._set_level(Level.FALLEN, frame_t, None, 1.0)
            return
        new = [p for b, p in seen.table_points.items()
               if all(np.linalg.norm(np.subtract(p, q)) > DROPPED_RADIUS for q in self._dropped)]
        if new:
            with self._lock:
                self._dropped += [np.array(p) for p in new]
            self._report("dropped", frame_t, self.link.arm.device_time(), None, 0.0)

    def _set_level(self, level: Level, frame_t: float | None, camera: str | None,
                   fraction: float) -> None:
        if level == self.level:
            return
        arm = self.link.arm
        rate, kind, _ = LEVELS[level]
        if arm is not None:
            arm.set_rate(rate)
        self.level = level
        if level is not Level.INSIDE:
            self._inside_since = None
        if frame_t is None or arm is None:
            return
        self._report(kind, frame_t, self._paced_at(level), camera, fraction)

    def _report(self, kind: str, frame_t: float, device_t: float, camera: str | None,
                fraction: float) -> None:
        event = SafetyEvent(kind, frame_t, device_t, camera, fraction)
        self.events.append(event)
        if self.on_event is not None:
            self.on_event(event)

    def _paced_at(self, level: Level) -> float:
        """Device time of the first reading at the new pace."""
        wanted = LEVELS[level][2]
        paced = Status.PAUSED | Status.SLOWED
        return self.link.arm.wait_for(lambda t: Status(t.status) & paced == wanted, 1.0).device_time

    def _keep_joints(self, telemetry) -> None:
        if self._joints and telemetry.device_time < self._joints[-1][0]:
            self._joints.clear()             # the device restarted its clock
        self._joints.append((telemetry.device_time, np.array(telemetry.q)))

    def _joints_at(self, world_t: float | None) -> np.ndarray:
        """The joints the arm reported nearest `world_t` (the latest when None or when `world_t`
        lies outside what is kept)."""
        history = list(self._joints)
        if world_t is None or not history or not history[0][0] <= world_t <= history[-1][0] + 0.05:
            return np.array(self.link.arm.telemetry().q)
        i = bisect.bisect_left([t for t, _ in history], world_t)
        near = [history[j] for j in (i - 1, i) if 0 <= j < len(history)]
        return min(near, key=lambda s: abs(s[0] - world_t))[1]

    def _arm_mask(self, name: str, shape, world_t: float | None = None) -> np.ndarray:
        """Where the robot's own arm is in this camera's image taken at `world_t`, from the
        joints it reported then."""
        caps = self.arm_model.link_capsules(self._joints_at(world_t))
        grow = np.array([TOOL_GROW if n in FINE_PARTS or n == "body" else ARM_GROW
                         for n in caps.names])
        return capsule_mask(self._cameras[name], shape, caps.starts, caps.ends, caps.radii + grow)
