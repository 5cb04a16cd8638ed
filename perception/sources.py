"""Camera sources: anything `cv2.VideoCapture` opens (a device index, a file, a stream URL), and
MJPEG over HTTP read directly so each frame keeps the timestamp its camera put on it.

Lifecycle like any hardware here: `connect()` opens the source and checks it delivers frames of the
expected size at roughly the expected rate; a reader thread keeps the newest frame; `read()` waits
for a frame newer than the last one with a timeout; a source that stops delivering is reopened in
the background and `read()` raises CameraError meanwhile; `close()` releases it.

Frame times: the simulator's MJPEG stream stamps each frame with simulation time (`X-Timestamp`);
other sources are stamped with the host's monotonic clock when the frame arrived (their world is the
real one, where that is the time).
"""

from __future__ import annotations

import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import cv2
import numpy as np

RECONNECT_S = 0.5


class CameraError(RuntimeError):
    """A camera that cannot be opened, delivers the wrong frames, or has gone away."""


@dataclass(frozen=True)
class Frame:
    camera: str
    image: np.ndarray     # RGB, (H, W, 3)
    time: float           # world time of the frame, s
    number: int           # frames delivered by this source so far


class CameraSource:
    """Base: a reader thread filling the newest-frame slot from `_grab()`."""

    def __init__(self, name: str, width: int, height: int, fps: float, timeout_s: float = 1.0,
                 min_fps: float | None = None):
        self.name, self.width, self.height, self.fps = name, width, height, fps
        self.timeout_s = timeout_s
        # A simulated camera renders slower than a real one runs: by default a quarter of the
        # configured rate passes the connect check.
        self.min_fps = fps / 4 if min_fps is None else min_fps
        self._cond = threading.Condition()
        self._frame: Frame | None = None
        self._count = 0
        self._error: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.reconnects = 0

    # --- lifecycle ----------------------------------------------------------------------------

    def connect(self, check_s: float = 3.0) -> CameraSource:
        """Open the source and check its frames: size exactly as configured, rate at least
        `min_fps`. Raises CameraError saying what is wrong."""
        self._open()
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name=f"camera {self.name}", daemon=True)
        self._thread.start()
        first = self.read(timeout_s=check_s)
        h, w = first.image.shape[:2]
        if (w, h) != (self.width, self.height):
            self.close()
            raise CameraError(f"camera {self.name}: frames are {w}x{h}, expected "
                              f"{self.width}x{self.height}; check the camera mode or the cell file")
        start, n = first.time, first.number
        last = first
        deadline = time.monotonic() + max(1.0, 6.0 / self.fps)
        while last.number - n < 3 and time.monotonic() < deadline:
            last = self.read(timeout_s=check_s)
        if last.number - n >= 3 and last.time > start:
            rate = (last.number - n) / (last.time - start)
            if rate < self.min_fps:
                self.close()
                raise CameraError(f"camera {self.name}: {rate:.1f} frames/s, expected "
                                  f"{self.fps:g}; check the camera's mode and the link")
        return self

    def close(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2.0)
            self._thread = None
        self._close()

    def __enter__(self) -> CameraSource:
        return self.connect()

    def __exit__(self, *exc) -> None:
        self.close()

    # --- frames -------------------------------------------------------------------------------

    def read(self, after: int | None = None, timeout_s: float | None = None) -> Frame:
        """A frame newer than frame number `after` (default: the last one read)."""
        timeout = self.timeout_s if timeout_s is None else timeout_s
        with self._cond:
            number = self._frame.number if (after is None and self._frame) else (after or 0)
            ok = self._cond.wait_for(lambda: (self._frame is not None and self._frame.number > number)
                                     or self._stop.is_set(), timeout)
            if not ok or self._frame is None or self._frame.number <= number:
                why = f": {self._error}" if self._error else ""
                raise CameraError(f"camera {self.name}: no new frame for {timeout:g} s{why}")
            return self._frame

    def latest(self) -> Frame | None:
        with self._cond:
            return self._frame

    # --- the reader thread --------------------------------------------------------------------

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                got = self._grab()
            except Exception as exc:   # a dying stream: note it, reopen, carry on
                got = None
                self._error = str(exc) or type(exc).__name__
            if got is None:
                if self._stop.is_set():
                    return
                self._reopen()
                continue
            image, stamp = got
            with self._cond:
                self._count += 1
                self._frame = Frame(self.name, image, stamp, self._count)
                self._error = None
                self._cond.notify_all()

    def _reopen(self) -> None:
        self._close()
        while not self._stop.wait(RECONNECT_S):
            try:
                self._open()
                self.reconnects += 1
                return
            except CameraError as exc:
                self._error = str(exc)

    # --- per kind -----------------------------------------------------------------------------

    def _open(self) -> None:
        raise NotImplementedError

    def _grab(self) -> tuple[np.ndarray, float] | None:
        raise NotImplementedError

    def _close(self) -> None:
        raise NotImplementedError


class VideoCaptureSource(CameraSource):
    """A device index, a video file or any stream OpenCV opens. A camera or a stream is stamped
    with host time; a file with its own time, where each frame lies in it (played again from the
    start, on from where it ended), since a file is read as fast as the machine decodes it, not at
    the pace it was filmed (a busy machine once read one at 6 frames/s)."""

    def __init__(self, name: str, target: int | str, width: int, height: int, fps: float,
                 clock: Callable[[], float] = time.monotonic, **kwargs):
        super().__init__(name, width, height, fps, **kwargs)
        self.target = target
        self._clock = clock
        self._cap: cv2.VideoCapture | None = None
        self._file = isinstance(target, str) and Path(target).is_file()
        self._played = 0.0           # a file's time at the start of this play of it (s)
        self._last = None            # the last stamp given (s)

    def _open(self) -> None:
        cap = cv2.VideoCapture(self.target)
        if not cap.isOpened():
            raise CameraError(f"camera {self.name}: cannot open {self.target!r}: is it plugged in, "
                              f"and is the index, path or URL right?")
        if isinstance(self.target, int):
            cap.set(cv2.CAP_PROP_FRAME_WIDTH, self.width)
            cap.set(cv2.CAP_PROP_FRAME_HEIGHT, self.height)
            cap.set(cv2.CAP_PROP_FPS, self.fps)
        self._cap = cap

    def _grab(self):
        cap = self._cap
        if cap is None:
            return None
        ok, bgr = cap.read()
        if not ok:
            return None
        return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), self._stamp(cap)

    def _stamp(self, cap: cv2.VideoCapture) -> float:
        if not self._file:
            return self._clock()
        stamp = self._played + cap.get(cv2.CAP_PROP_POS_MSEC) / 1000.0
        if self._last is not None and stamp <= self._last:      # played again from the start
            self._played = self._last + 1.0 / self.fps
            stamp = self._played + cap.get(cv2.CAP_PROP_POS_MSEC) / 1000.0
        self._last = stamp
        return stamp

    def _close(self) -> None:
        if self._cap is not None:
            self._cap.release()
            self._cap = None


class MjpegSource(CameraSource):
    """MJPEG over HTTP (multipart/x-mixed-replace), as IP cameras and `jenga-robot sim serve`
    serve it. Frames carry the camera's own `X-Timestamp` when it sends one."""

    def __init__(self, name: str, url: str, width: int, height: int, fps: float,
                 clock: Callable[[], float] = time.monotonic, **kwargs):
        super().__init__(name, width, height, fps, **kwargs)
        self.url = url
        self._clock = clock
        self._stream = None

    def _open(self) -> None:
        try:
            self._stream = urllib.request.urlopen(self.url, timeout=max(self.timeout_s, 2.0))
        except (urllib.error.URLError, OSError, ValueError) as exc:
            raise CameraError(f"camera {self.name}: cannot open {self.url}: {exc}. Is the camera "
                              f"(or `jenga-robot sim serve`) running?") from None
        kind = self._stream.headers.get("Content-Type", "")
        if not kind.startswith("multipart/x-mixed-replace"):
            self._close()
            raise CameraError(f"camera {self.name}: {self.url} is not an MJPEG stream ({kind})")

    def _grab(self):
        stream = self._stream
        if stream is None:
            return None
        headers = {}
        while True:
            line = stream.readline()
            if not line:
                return None   # the server closed the stream
            text = line.decode("latin-1").strip()
            if not text:
                if headers:
                    break
                continue
            if ":" in text:
                key, _, value = text.partition(":")
                headers[key.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        if length <= 0:
            return None
        data = stream.read(length)
        if len(data) < length:
            return None
        bgr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        if bgr is None:
            raise CameraError("a frame that is not a JPEG")
        stamp = float(headers["x-timestamp"]) if "x-timestamp" in headers else self._clock()
        return cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), stamp

    def _close(self) -> None:
        if self._stream is not None:
            try:
                self._stream.close()
            except OSError:
                pass
            self._stream = None


def open_source(name: str, target: str | int, width: int, height: int, fps: float,
                **kwargs) -> CameraSource:
    """The right source for a target: http(s) URLs are read as MJPEG, anything else by OpenCV."""
    if isinstance(target, str) and target.isdigit():
        target = int(target)
    if isinstance(target, str) and target.startswith(("http://", "https://")):
        return MjpegSource(name, target, width, height, fps, **kwargs)
    return VideoCaptureSource(name, target, width, height, fps, **kwargs)
