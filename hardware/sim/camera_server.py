"""The simulated cameras as IP cameras: one MJPEG stream per camera over HTTP on 127.0.0.1.

Each part of the multipart stream carries the simulation time of its frame in an `X-Timestamp`
header (seconds), the way the firmware stamps telemetry with device time. Frames are rendered in
a thread of their own from snapshots the physics loop hands over, so rendering never stalls the
physics; a camera is rendered only while someone watches it.
"""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import cv2
import mujoco

BOUNDARY = "jengaframe"
JPEG_QUALITY = 92


class FrameSlot:
    """The newest encoded frame of one camera, with its simulation time."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self.jpeg: bytes | None = None
        self.sim_time = -1.0
        self.number = 0
        self.viewers = 0

    def publish(self, jpeg: bytes, sim_time: float) -> None:
        with self._cond:
            self.jpeg, self.sim_time = jpeg, sim_time
            self.number += 1
            self._cond.notify_all()

    def wait_newer(self, number: int, timeout: float) -> tuple[bytes, float, int] | None:
        with self._cond:
            if not self._cond.wait_for(lambda: self.number > number, timeout):
                return None
            return self.jpeg, self.sim_time, self.number


class CameraServer:
    """Serves `/NAME.mjpg` for every camera of the world's cell and `/NAME.jpg` (one frame)."""

    def __init__(self, model: mujoco.MjModel, cameras, host: str = "127.0.0.1", port: int = 0):
        self.model = model
        self.cameras = {c.name: c for c in cameras}
        self.slots = {name: FrameSlot() for name in self.cameras}
        self._snapshot: mujoco.MjData | None = None
        self._snapshot_lock = threading.Lock()
        self._snapshot_time = -1.0
        self._stop = threading.Event()
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):   # quiet: the CLI prints what matters
                pass

            def do_GET(self):
                name, _, kind = self.path.lstrip("/").partition(".")
                if name not in server.slots or kind not in ("mjpg", "jpg"):
                    self.send_error(404, f"no camera at {self.path}; cameras: "
                                         f"{', '.join('/' + n + '.mjpg' for n in server.slots)}")
                    return
                server._serve(self, server.slots[name], stream=(kind == "mjpg"))

        self.httpd = ThreadingHTTPServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._http_thread = threading.Thread(target=self.httpd.serve_forever, name="camera-http",
                                             daemon=True)
        self._render_thread = threading.Thread(target=self._render_loop, name="camera-render",
                                               daemon=True)

    def url(self, camera: str) -> str:
        return f"http://127.0.0.1:{self.port}/{camera}.mjpg"

    def start(self) -> CameraServer:
        self._http_thread.start()
        self._render_thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        self._render_thread.join(timeout=2.0)

    @property
    def watched(self) -> bool:
        return any(slot.viewers for slot in self.slots.values())

    def offer(self, data: mujoco.MjData) -> None:
        """Called by the physics loop: keep a copy of this state for the renderer."""
        with self._snapshot_lock:
            if self._snapshot is None:
                self._snapshot = mujoco.MjData(self.model)
            mujoco.mj_copyData(self._snapshot, self.model, data)
            self._snapshot_time = float(data.time)

    # --- rendering ----------------------------------------------------------------------------

    def _render_loop(self) -> None:
        renderers = {}
        scratch = mujoco.MjData(self.model)
        last_time = -1.0
        while not self._stop.is_set():
            if not self.watched or self._snapshot is None:
                time.sleep(0.01)
                continue
            with self._snapshot_lock:
                fresh = self._snapshot_time != last_time
                if fresh:
                    mujoco.mj_copyData(scratch, self.model, self._snapshot)
                    last_time = self._snapshot_time
            if not fresh:
                time.sleep(0.002)
                continue
            for name, cam in self.cameras.items():
                if not self.slots[name].viewers:
                    continue
                key = (cam.height, cam.width)
                if key not in renderers:
                    renderers[key] = mujoco.Renderer(self.model, cam.height, cam.width)
                renderer = renderers[key]
                renderer.update_scene(scratch, camera=name)
                rgb = renderer.render()
                ok, jpeg = cv2.imencode(".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR),
                                        [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
                if ok:
                    self.slots[name].publish(jpeg.tobytes(), float(scratch.time))
        for renderer in renderers.values():
            renderer.close()

    # --- HTTP ---------------------------------------------------------------------------------

    def _serve(self, handler: BaseHTTPRequestHandler, slot: FrameSlot, stream: bool) -> None:
        slot.viewers += 1
        try:
            seen = 0
            if not stream:
                frame = slot.wait_newer(0 if slot.jpeg is None else slot.number - 1, 5.0)
                if frame is None:
                    handler.send_error(503, "no frame rendered yet")
                    return
                jpeg, sim_time, _ = frame
                handler.send_response(200)
                handler.send_header("Content-Type", "image/jpeg")
                handler.send_header("Content-Length", str(len(jpeg)))
                handler.send_header("X-Timestamp", f"{sim_time:.6f}")
                handler.end_headers()
                handler.wfile.write(jpeg)
                return
            handler.send_response(200)
            handler.send_header("Content-Type", f"multipart/x-mixed-replace; boundary={BOUNDARY}")
            handler.send_header("Cache-Control", "no-cache")
            handler.end_headers()
            while not self._stop.is_set():
                frame = slot.wait_newer(seen, 1.0)
                if frame is None:
                    continue
                jpeg, sim_time, seen = frame
                handler.wfile.write(
                    (f"--{BOUNDARY}\r\nContent-Type: image/jpeg\r\nContent-Length: {len(jpeg)}\r\n"
                     f"X-Timestamp: {sim_time:.6f}\r\n\r\n").encode() + jpeg + b"\r\n")
                handler.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            slot.viewers -= 1


def frame_period(cameras) -> float:
    """Simulated seconds between camera frames (the fastest camera's rate)."""
    return 1.0 / max(c.fps for c in cameras)

