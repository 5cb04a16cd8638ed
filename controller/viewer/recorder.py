"""A recording of the robot at work in Rerun's format, to a file (`.rrd`), to a live viewer, or
both. Everything is on one time line, `device_time` (the arm's clock, s). Entity paths are
docs/viewer.md's (`paths` below). The telemetry comes from the link's reader thread at 250 Hz:
it is kept in a buffer and sent in columns a few times a second, so that the reader thread
spends microseconds on it, not a call into the recording per message."""

from __future__ import annotations

import ctypes
import signal
import socket
import subprocess
import threading
import time
from pathlib import Path
from typing import Callable

import cv2
import numpy as np
import rerun as rr

from controller.viewer.analytics import viewer_environment
from controller.viewer.scene import Boxes
from planning.processes import stop_process

TIMELINE = "device_time"
FLUSH_S = 0.25
CAMERA_PERIOD_S = 0.5          # a camera frame each half second is enough to follow the game
JPEG_QUALITY = 75
# frames are recorded at half size (a 1280x720 camera at 640x360): a quarter of the bytes, and
# the markers and the tower stay readable; the MP4s keep the full size
CAMERA_SCALE = 0.5
MAX_BUFFERED = 25_000          # telemetry samples kept for the recorder thread: 100 s at 250 Hz
CLOSE_TIMEOUT_S = 5.0


class paths:
    """The entity paths a layout can be built on (docs/viewer.md)."""
    WRIST_FORCE = "arm/wrist_force"            # x, y, z, magnitude (N)
    GUARD = "arm/guard_threshold"              # the active guard's threshold (N); a gap: none
    JOINTS = "arm/joints"                      # one series per joint (rad)
    GRIPPER = "arm/gripper_opening"            # m
    CAMERAS = "cameras"                        # cameras/NAME, and cameras/NAME/markers
    TOWER = "tower/blocks"                     # boxes where perception measured the blocks,
                                               # by belief (the block being taken: yellow)
    TARGET = "tower/placement"                 # the slot it goes to
    PROBES = "probes"                          # probes/L.S: a probe's force along its push
    PULLS = "pulls"                            # pulls/L.S: the drawn block's drag (match logs)
    EVENTS = "events"                          # phases, referee's calls, pauses, falls


class RecorderError(RuntimeError):
    """The recording or the viewer could not be started: the message says why."""


def _costed(method):
    """Counts the wall time a call takes into the recorder's cost, on the caller's thread (the
    recorder's own thread is counted by its CPU time instead)."""
    def costed(self, *args, **kwargs):
        if threading.current_thread() is self._thread:
            return method(self, *args, **kwargs)
        start = time.perf_counter()
        try:
            return method(self, *args, **kwargs)
        finally:
            self._calls_s += time.perf_counter() - start
    costed.__name__, costed.__doc__ = method.__name__, method.__doc__
    return costed


_LIBC = ctypes.CDLL(None, use_errno=True)     # looked up now: the child must import nothing
_PR_SET_PDEATHSIG = 1


def _end_with_parent() -> None:
    """In the child, before it runs: SIGTERM when this program's process ends (Linux)."""
    _LIBC.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM)


def rerun_binary() -> Path:
    """Rerun's own program, shipped in the rerun-sdk package (run directly, not through
    `python -m rerun_cli`, whose wrapper would leave its child running when stopped)."""
    import rerun_cli
    binary = Path(rerun_cli.__file__).parent / "rerun"
    if not binary.exists():
        raise RecorderError(f"Rerun's viewer is not installed ({binary} is missing): reinstall "
                            f"the rerun-sdk package")
    return binary


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Recorder:
    """`rrd`: a file to record to; `viewer`: show it live (a native viewer where there is a
    display, else the web viewer served on 127.0.0.1, its address in `address`). `has_display`
    and `announce` are for the caller (the command line): whether a window can open, and where
    to say what was started."""

    def __init__(self, rrd: Path | None = None, viewer: bool = False,
                 has_display: bool = False, announce: Callable[[str], None] = print,
                 application: str = "jenga-robot", timeline: str = TIMELINE,
                 viewer_analytics: bool = False):
        if rrd is None and not viewer:
            raise ValueError("a recording needs a file, a viewer or both")
        self.address: str | None = None
        self.say = announce
        self.timeline = timeline
        self._viewer_process: subprocess.Popen | None = None
        if rrd is not None:                # checked before anything is started
            if Path(rrd).exists() and Path(rrd).stat().st_size > 0:
                raise RecorderError(f"{rrd} already holds a recording: name another file (nothing "
                                    f"is written over)")
            try:
                Path(rrd).parent.mkdir(parents=True, exist_ok=True)
                Path(rrd).touch()
            except OSError as exc:
                raise RecorderError(f"cannot write the recording {rrd}: {exc}") from None
        self.stream = rr.RecordingStream(application)
        sinks = []
        try:
            if viewer:
                try:
                    env, said = viewer_environment(viewer_analytics)
                except RuntimeError as exc:
                    raise RecorderError(str(exc)) from None
                announce(said)
                sinks.append(self._start_viewer(has_display, announce, env))
            if rrd is not None:
                sinks.append(rr.FileSink(str(rrd)))
            self.stream.set_sinks(*sinks)
        except BaseException:
            self._stop_viewer()
            raise
        self._lock = threading.Lock()
        self._telemetry: list[tuple[float, np.ndarray, np.ndarray, float]] = []
        self._camera_last: dict[str, float] = {}
        self._stop = threading.Event()
        self._frames_source: Callable[[], dict] | None = None
        # what recording cost: the recorder thread's CPU time, and the time the controller's
        # threads spent in its calls (docs/benchmarks.md compares it with a game's wall time)
        self._thread_cpu_s = 0.0
        self._calls_s = 0.0
        self._thread = threading.Thread(target=self._run, name="recorder", daemon=True)
        self._thread.start()

    # --- the viewer ---------------------------------------------------------------------------

    def _start_viewer(self, has_display: bool, announce: Callable[[str], None],
                      env: dict[str, str]):
        """The viewer as a process of its own (Rerun's), bound to 127.0.0.1, that this
        recording streams to."""
        port = _free_port()
        command = [str(rerun_binary()), "--bind", "127.0.0.1", "--port", str(port),
                   "--expect-data-soon"]
        if not has_display:
            web_port = _free_port()
            command += ["--serve-web", "--web-viewer-port", str(web_port)]
        # A window is the user's to close: its own session, so that Ctrl-C at the terminal does
        # not close it. A web viewer ends with this program, however it ends.
        self._viewer_process = subprocess.Popen(
            command, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL, env=env, start_new_session=True,
            preexec_fn=None if has_display else _end_with_parent)
        deadline = time.monotonic() + 20.0
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                break
            except OSError:
                if self._viewer_process.poll() is not None or time.monotonic() > deadline:
                    self._stop_viewer()
                    raise RecorderError("the Rerun viewer did not start (python -m rerun_cli "
                                        "--help checks the rerun-sdk install)") from None
                time.sleep(0.1)
        if has_display:
            announce("viewer: the Rerun viewer opens in its own window")
        else:
            self.address = f"http://127.0.0.1:{web_port}/?url=rerun%2Bhttp%3A%2F%2F127.0.0.1%3A{port}%2Fproxy"
            announce(f"viewer: {self.address}")
        return rr.GrpcSink(f"rerun+http://127.0.0.1:{port}/proxy")

    def _stop_viewer(self) -> None:
        stop_process(self._viewer_process, timeout_s=5)
        self._viewer_process = None

    # --- what is recorded ---------------------------------------------------------------------

    def telemetry(self, message) -> None:
        """One telemetry message (firmware_bridge.messages.Telemetry): from the link's reader
        thread, which must not wait or fail here, so it only keeps the numbers."""
        with self._lock:
            if len(self._telemetry) < MAX_BUFFERED:   # a recorder thread that stopped: no more
                self._telemetry.append((message.device_time, message.wrench[:3], message.q,
                                        message.gripper_width_m))

    def frames_from(self, source: Callable[[], dict]) -> None:
        """Where the cameras' newest frames are (name: perception.sources.Frame or None): the
        recorder takes one from each every CAMERA_PERIOD_S of device time."""
        self._frames_source = source

    @_costed
    def camera(self, frame, markers: list | None = None) -> None:
        """A camera frame (perception.sources.Frame), and the marker sightings found in it."""
        name = frame.camera
        self._camera_last[name] = frame.time
        image = cv2.resize(frame.image, None, fx=CAMERA_SCALE, fy=CAMERA_SCALE,
                           interpolation=cv2.INTER_AREA)
        ok, jpeg = cv2.imencode(".jpg", cv2.cvtColor(image, cv2.COLOR_RGB2BGR),
                                [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
        if not ok:
            return
        path = f"{paths.CAMERAS}/{name}"
        self.stream.set_time(self.timeline, duration=frame.time)
        self.stream.log(path, rr.EncodedImage(contents=jpeg.tobytes(), media_type="image/jpeg"))
        if markers is not None:
            centres = np.array([s.centre for s in markers], float).reshape(-1, 2) * CAMERA_SCALE
            self.stream.log(f"{path}/markers", rr.Points2D(
                centres, radii=3.0, labels=[str(s.marker) for s in markers],
                colors=(255, 80, 200)))

    @_costed
    def guard(self, device_time: float, threshold_n: float | None) -> None:
        self.stream.set_time(self.timeline, duration=device_time)
        value = np.nan if threshold_n is None else threshold_n
        self.stream.log(paths.GUARD, rr.Scalars(value))

    @_costed
    def boxes(self, path: str, device_time: float, boxes: Boxes | None) -> None:
        """Boxes at `path` from `device_time` on; None clears them."""
        self.stream.set_time(self.timeline, duration=device_time)
        if boxes is None or not len(boxes):
            self.stream.log(path, rr.Clear(recursive=False))
            return
        self.stream.log(path, rr.Boxes3D(centers=boxes.centres, half_sizes=boxes.half_sizes,
                                         quaternions=boxes.quaternions(), colors=boxes.colours,
                                         labels=boxes.labels, fill_mode="solid"))

    @_costed
    def probe(self, name: str, trace: list[tuple[float, float]], said: str,
              device_time: float) -> None:
        """A probe's force along its push (device time, N), and what it found as an event
        (controller/wording.py `probe_result`)."""
        self.series(f"{paths.PROBES}/{name}", trace)
        self.event(device_time, said)

    @_costed
    def series(self, path: str, trace: list[tuple[float, float]]) -> None:
        """A force along the time line: (time, N) pairs."""
        if trace:
            times, forces = zip(*trace)
            self.stream.send_columns(path, indexes=[rr.TimeColumn(
                self.timeline, duration=np.array(times, float))],
                columns=rr.Scalars.columns(scalars=np.array(forces, float)))

    @_costed
    def event(self, device_time: float, text: str, level: str = "INFO") -> None:
        self.stream.set_time(self.timeline, duration=device_time)
        self.stream.log(paths.EVENTS, rr.TextLog(text, level=level))

    # --- the background work ------------------------------------------------------------------

    def add_cost(self, seconds: float) -> None:
        """Time spent for the recording elsewhere (the cameras' video threads)."""
        self._calls_s += seconds

    @property
    def cost_s(self) -> float:
        """Seconds of the controller's time the recording took so far."""
        return self._thread_cpu_s + self._calls_s

    def _run(self) -> None:
        while not self._stop.wait(FLUSH_S):
            try:
                self._flush_telemetry()
                self._take_frames()
            except Exception as exc:      # noqa: BLE001 - the recording stops, not the robot
                self.say(f"viewer: recording stopped ({type(exc).__name__}: {exc}); the game "
                         f"goes on")
                return
            finally:
                self._thread_cpu_s = time.thread_time()

    def _take_frames(self) -> None:
        if self._frames_source is None:
            return
        try:
            frames = self._frames_source()
        except Exception:                 # a camera that went away: the game says so, not this
            return
        for frame in frames.values():
            if frame is not None and frame.time >= self._camera_last.get(frame.camera, -1e9) \
                    + CAMERA_PERIOD_S:
                self.camera(frame)

    def _flush_telemetry(self) -> None:
        with self._lock:
            samples, self._telemetry = self._telemetry, []
        if not samples:
            return
        times = np.array([s[0] for s in samples], float)
        force = np.array([s[1] for s in samples], float)
        index = [rr.TimeColumn(self.timeline, duration=times)]
        self.stream.send_columns(paths.WRIST_FORCE, indexes=index, columns=rr.Scalars.columns(
            scalars=np.column_stack([force, np.linalg.norm(force, axis=1)])))
        joints = [s[2] for s in samples]
        if all(len(q) == len(joints[0]) for q in joints) and len(joints[0]):
            self.stream.send_columns(paths.JOINTS, indexes=index,
                                     columns=rr.Scalars.columns(scalars=np.array(joints, float)))
        self.stream.send_columns(paths.GRIPPER, indexes=index, columns=rr.Scalars.columns(
            scalars=np.array([s[3] for s in samples], float)))

    def close(self) -> None:
        """Everything kept is written; the viewer (a web one) stops with the recording, a window
        stays open for the user to close."""
        self._stop.set()
        self._thread.join(timeout=CLOSE_TIMEOUT_S)
        try:
            self._flush_telemetry()
            # a viewer window the user closed must not hold the program
            self.stream.flush(timeout_sec=CLOSE_TIMEOUT_S)
            self.stream.disconnect()
        except Exception as exc:          # noqa: BLE001 - what was written stays written
            self.say(f"viewer: the recording's end was not written ({type(exc).__name__}: "
                     f"{exc})")
        finally:
            if self.address is not None:
                self._stop_viewer()

    def __enter__(self) -> Recorder:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

