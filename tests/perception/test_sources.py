"""Camera sources: frames stamped with their world's time, a stream that dies mid-match (a clear
error, then recovery when it comes back), and a source that is not what the cell says."""

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import cv2
import numpy as np
import pytest

from perception.sources import CameraError, MjpegSource, VideoCaptureSource, open_source


class FakeIpCamera:
    """An MJPEG camera on 127.0.0.1 that can be unplugged and plugged back on the same port."""

    def __init__(self, width=64, height=48, fps=30.0):
        self.width, self.height, self.fps = width, height, fps
        self.port = None
        self.frames = 0
        self._server = None

    def start(self):
        camera = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self.send_response(200)
                self.send_header("Content-Type", "multipart/x-mixed-replace; boundary=f")
                self.end_headers()
                try:
                    while camera._server is not None:
                        camera.frames += 1
                        image = np.full((camera.height, camera.width, 3), camera.frames % 255, np.uint8)
                        jpeg = cv2.imencode(".jpg", image)[1].tobytes()
                        stamp = 100.0 + camera.frames / camera.fps
                        self.wfile.write(f"--f\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}"
                                         f"\r\nX-Timestamp: {stamp:.6f}\r\n\r\n".encode() + jpeg + b"\r\n")
                        time.sleep(1.0 / camera.fps)
                except (BrokenPipeError, ConnectionResetError):
                    pass

        server = ThreadingHTTPServer(("127.0.0.1", self.port or 0), Handler)
        server.daemon_threads = True
        self.port = server.server_address[1]
        self._server = server
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return self

    def stop(self):
        server, self._server = self._server, None
        server.shutdown()
        server.server_close()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/cam.mjpg"


def test_mjpeg_frames_carry_the_cameras_own_time():
    cam = FakeIpCamera().start()
    try:
        with MjpegSource("test", cam.url, 64, 48, 30.0) as source:
            a = source.read()
            b = source.read()
            assert b.number > a.number and b.time > a.time > 100.0
            assert a.image.shape == (48, 64, 3)
    finally:
        cam.stop()


def test_a_camera_that_dies_mid_match_errors_then_recovers():
    cam = FakeIpCamera().start()
    try:
        source = MjpegSource("test", cam.url, 64, 48, 30.0, timeout_s=0.5).connect()
        source.read()
        cam.stop()
        with pytest.raises(CameraError, match="no new frame"):
            for _ in range(5):
                source.read()
        cam.start()   # plugged back in, same address
        frame = source.read(timeout_s=5.0)
        assert frame.image.shape == (48, 64, 3) and source.reconnects >= 1
        source.close()
    finally:
        if cam._server is not None:
            cam.stop()


def test_a_camera_of_the_wrong_size_is_refused_at_connect():
    cam = FakeIpCamera().start()
    try:
        with pytest.raises(CameraError, match="64x48, expected 1280x720"):
            MjpegSource("test", cam.url, 1280, 720, 30.0).connect()
    finally:
        cam.stop()


def test_nothing_at_the_address_is_a_clear_error():
    with pytest.raises(CameraError, match="cannot open"):
        open_source("test", "http://127.0.0.1:9/none.mjpg", 64, 48, 30.0).connect()


def test_a_video_file_opens_through_opencv(tmp_path):
    path = str(tmp_path / "clip.avi")
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (64, 48))
    for i in range(60):
        writer.write(np.full((48, 64, 3), i * 4, np.uint8))
    writer.release()
    source = open_source("file", path, 64, 48, 30.0)
    assert isinstance(source, VideoCaptureSource)
    with source:
        frame = source.read()
        assert frame.image.shape == (48, 64, 3)



def test_a_video_files_frames_carry_the_files_own_time_however_fast_it_is_read(tmp_path):
    """A file is decoded as fast as the machine goes (a busy one read a clip at 6 frames/s and the
    rate check refused it): its frames are stamped where they lie in it, and on from its end when
    it plays again."""
    path = str(tmp_path / "clip.avi")
    writer = cv2.VideoWriter(path, cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (64, 48))
    for i in range(20):
        writer.write(np.full((48, 64, 3), i * 4, np.uint8))
    writer.release()
    with open_source("file", path, 64, 48, 30.0) as source:
        first = source.read()
        later = first
        while later.number < first.number + 50:              # past the end at least twice
            later = source.read(after=later.number)
    per_frame = (later.time - first.time) / (later.number - first.number)
    assert per_frame == pytest.approx(1 / 30, rel=0.05)
