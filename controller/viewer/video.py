"""Each camera's stream written to an MP4 while a match runs, in a thread per camera, so that the
match never waits for it. Frames come at the camera's pace (a simulated camera renders fewer
than its nominal rate, and unevenly); the file runs at a fixed rate and each frame is held for
as long as it was the newest, by its world time, so the video plays at the world's pace."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import cv2

from perception.sources import CameraError, CameraSource

VIDEO_FPS = 10.0
MAX_HOLD_FRAMES = 50          # a camera silent longer than 5 s shows its last frame 5 s, no more


def free_name(folder: Path, stem: str, suffix: str) -> Path:
    """`folder/stem.suffix`, or `stem-2.suffix` and on if taken (a resumed match keeps the
    video of the run before)."""
    path, n = folder / f"{stem}{suffix}", 1
    while path.exists():
        n += 1
        path = folder / f"{stem}-{n}{suffix}"
    return path


class CameraVideo:
    def __init__(self, source: CameraSource, path: Path, fps: float = VIDEO_FPS):
        self.source, self.path, self.fps = source, path, fps
        self.frames_written = 0
        self.error: str | None = None
        self.cpu_s = 0.0                  # the thread's own CPU time: what filming costs
        # the file is made now, at the camera's size, so that every camera's name is taken at once
        self._writer: cv2.VideoWriter | None = None
        self._open(source.width, source.height)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"video {source.name}",
                                        daemon=True)
        self._thread.start()

    def _open(self, width: int, height: int) -> None:
        self._writer = cv2.VideoWriter(str(self.path), cv2.VideoWriter_fourcc(*"mp4v"), self.fps,
                                       (width, height))
        if not self._writer.isOpened():
            raise OSError(f"OpenCV cannot write {self.path}")

    def _run(self) -> None:
        """Each frame is held until the next one's world time: when a frame comes, the one
        before is written for as long as it was the newest."""
        last_number, held, held_since = 0, None, 0.0
        try:
            while not self._stop.is_set():
                try:
                    frame = self.source.read(after=last_number, timeout_s=1.0)
                except CameraError:                # the match says when a camera is gone
                    self._stop.wait(0.1)
                    continue
                last_number = frame.number
                if held is None:
                    held, held_since = frame.image, frame.time
                    continue
                repeats = round((frame.time - held_since) * self.fps)
                if repeats < 1:
                    held = frame.image             # faster than the file's rate: the newest
                    continue
                self._write(held, min(repeats, MAX_HOLD_FRAMES))
                # after a silence longer than a hold, the video goes on from this frame
                held_since = frame.time if repeats > MAX_HOLD_FRAMES else \
                    held_since + repeats / self.fps
                held = frame.image
            if held is not None:
                self._write(held, 1)
        except Exception as exc:                   # noqa: BLE001 - the video stops, the match not
            self.error = f"{type(exc).__name__}: {exc}"
        finally:
            if self._writer is not None:
                self._writer.release()
            self.cpu_s = time.thread_time()

    def _write(self, image, times: int) -> None:
        if image.shape[:2] != (self.source.height, self.source.width):
            image = cv2.resize(image, (self.source.width, self.source.height))
        bgr = cv2.cvtColor(image, cv2.COLOR_RGB2BGR)
        for _ in range(times):
            self._writer.write(bgr)
        self.frames_written += times

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10.0)


class CameraVideos:
    """An MP4 per camera of a cell link, `camera-NAME.mp4` in `folder`; what filming costs is
    added to `recorder`'s cost, if there is one."""

    def __init__(self, cameras: dict[str, CameraSource], folder: Path, recorder=None):
        folder.mkdir(parents=True, exist_ok=True)
        self.recorder = recorder
        self.videos = [CameraVideo(source, free_name(folder, f"camera-{name}", ".mp4"))
                       for name, source in cameras.items()]

    def close(self) -> list[str]:
        """Finish the files; what each holds, in words."""
        lines = []
        for video in self.videos:
            video.close()
            if self.recorder is not None:
                self.recorder.add_cost(video.cpu_s)
            seconds = video.frames_written / video.fps
            lines.append(f"video: {video.path} ({seconds:.0f} s)"
                         + (f"; stopped early: {video.error}" if video.error else ""))
        return lines
