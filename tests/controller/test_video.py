"""A camera's stream to an MP4 at the world's pace, from a stand-in camera."""

import threading
import time

import cv2
import numpy as np

from controller.viewer.video import CameraVideos, free_name
from perception.sources import CameraError, Frame


class StandInCamera:
    """Frames at given world times, handed out as a camera source hands them."""

    width, height = 64, 48

    def __init__(self, name, times):
        self.name, self._frames, self._lock = name, [], threading.Lock()
        self._times = list(times)
        threading.Thread(target=self._feed, daemon=True).start()

    def _feed(self):
        for k, t in enumerate(self._times, start=1):
            image = np.full((48, 64, 3), k * 20, np.uint8)       # frame k is grey level 20 k
            with self._lock:
                self._frames.append(Frame(self.name, image, t, k))
            time.sleep(0.005)

    def read(self, after=0, timeout_s=1.0):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                newer = [f for f in self._frames if f.number > after]
            if newer:
                return newer[0]
            time.sleep(0.002)
        raise CameraError(f"camera {self.name}: no new frame")


def test_each_camera_gets_an_mp4_that_runs_at_the_worlds_pace(tmp_path):
    # 3 s of world time in uneven steps, some faster than the file's 10 frames a second
    times = [0.0, 0.5, 0.52, 0.54, 1.0, 2.0, 2.05, 3.0]
    videos = CameraVideos({"left": StandInCamera("left", times),
                           "right": StandInCamera("right", times)}, tmp_path)
    time.sleep(0.5)
    lines = videos.close()
    for name in ("left", "right"):
        path = tmp_path / f"camera-{name}.mp4"
        capture = cv2.VideoCapture(str(path))
        frames = int(capture.get(cv2.CAP_PROP_FRAME_COUNT))
        assert capture.get(cv2.CAP_PROP_FPS) == 10
        assert frames == 31                  # 3 s at 10 a second, and the last frame once
        capture.release()
    assert lines == [f"video: {tmp_path / 'camera-left.mp4'} (3 s)",
                     f"video: {tmp_path / 'camera-right.mp4'} (3 s)"]
    # each frame held until the next one's world time, the newest of a burst shown
    greys = grey_levels(tmp_path / "camera-left.mp4")
    expected = [20] * 5 + [80] * 5 + [100] * 10 + [140] * 10 + [160]
    assert np.allclose(greys, expected, atol=6)


def grey_levels(path):
    capture = cv2.VideoCapture(str(path))
    levels = []
    while True:
        ok, image = capture.read()
        if not ok:
            break
        levels.append(float(image.mean()))
    capture.release()
    return levels


def test_a_long_silence_is_held_five_seconds_and_the_video_goes_on_from_the_next_frame(tmp_path):
    videos = CameraVideos({"left": StandInCamera("left", [0.0, 8.0, 8.5])}, tmp_path)
    time.sleep(0.3)
    videos.close()
    greys = grey_levels(tmp_path / "camera-left.mp4")
    assert np.allclose(greys, [20] * 50 + [40] * 5 + [60], atol=6)


def test_a_resumed_match_keeps_the_video_of_the_run_before(tmp_path):
    (tmp_path / "camera-left.mp4").write_bytes(b"earlier")
    assert free_name(tmp_path, "camera-left", ".mp4") == tmp_path / "camera-left-2.mp4"
