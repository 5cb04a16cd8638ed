"""The simulated cameras as IP cameras: one MJPEG stream per camera over HTTP on 127.0.0.1.

Each part of the multipart stream carries the simulation time of its frame in an `X-Timestamp`
header (seconds), the way the firmware stamps telemetry with device time. Frames are rendered in
a thread of their own from snapshots the physics loop hands over, so rendering never stalls the
physics; a camera is rendered only while someone watches it.
"""

from __future__ import annotations

import json
import multiprocessing
import threading
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
    """Serves `/NAME.mjpg` for every camera of the world's cell and `/NAME.jpg` (one frame).

    Rendering runs in a child process of its own (on the other core, and out of the physics
    process, whose serial link must answer within milliseconds): the physics loop hands it the
    positions of a moment (`offer`), it renders every watched camera and sends each JPEG back as
    soon as it is encoded."""

    def __init__(self, model: mujoco.MjModel, cameras, host: str = "127.0.0.1", port: int = 0,
                 documents: dict | None = None, xml: str | None = None,
                 assets: dict[str, bytes] | None = None, actions: dict | None = None):
        """`documents`: extra JSON documents to serve, path -> function returning the object
        (the simulator's ground truth for tests and benchmarks). `actions`: path -> function
        taking the POSTed JSON object and returning a JSON reply (raising ValueError or
        RuntimeError for a refusal). `xml` and `assets` rebuild the model in the rendering
        process."""
        self.model = model
        self.documents = documents or {}
        self.actions = actions or {}
        self.cameras = {c.name: c for c in cameras}
        self.slots = {name: FrameSlot() for name in self.cameras}
        self._xml, self._assets = xml, assets or {}
        self._stop = threading.Event()
        self._busy = threading.Event()
        self._conn = None
        self._process = None
        # what the cameras suffer now, when tests and benchmarks ask for surprises
        # (hardware/sim/surprises.py Glitch); None: nothing
        self.glitch = None
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):   # quiet: the CLI prints what matters
                pass

            def _reply_json(self, code: int, obj) -> None:
                body = json.dumps(obj).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                action = server.actions.get(self.path)
                if action is None:
                    self.send_error(404, f"nothing to do at {self.path}")
                    return
                length = _content_length(self.headers)
                # the body is read even when the request is refused: a socket closed on unread
                # bytes is reset, and the client would miss the reply that says why
                body = self.rfile.read(length) if length is not None and length <= MAX_POST_BYTES \
                    else b""
                refusal = _refuse_post(self.headers, server.port, length)
                if refusal is not None:
                    if refusal[0] in (400, 413):
                        self.close_connection = True
                    self._reply_json(refusal[0], {"error": refusal[1]})
                    return
                try:
                    request = json.loads(body or b"{}")
                    if not isinstance(request, dict):
                        raise ValueError("send a JSON object")
                except ValueError as exc:      # also JSON that does not parse, or is not UTF-8
                    self._reply_json(400, {"error": f"the body is not a JSON object: {exc}"})
                    return
                try:
                    self._reply_json(200, action(request))
                except (ValueError, RuntimeError) as exc:
                    self._reply_json(409, {"error": str(exc)})
                except Exception as exc:        # not foreseen: say so, and keep serving
                    self._reply_json(500, {"error": f"the simulated cell failed: {exc!r}"})

            def do_GET(self):
                if self.path in server.documents:
                    self._reply_json(200, server.documents[self.path]())
                    return
                name, _, kind = self.path.lstrip("/").partition(".")
                if name not in server.slots or kind not in ("mjpg", "jpg"):
                    self.send_error(404, f"no camera at {self.path}; cameras: "
                                         f"{', '.join('/' + n + '.mjpg' for n in server.slots)}")
                    return
                server._serve(self, server.slots[name], stream=(kind == "mjpg"))

        self.httpd = _QuietServer((host, port), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self._http_thread = threading.Thread(target=self.httpd.serve_forever, name="camera-http",
                                             daemon=True)
        self._receiver = threading.Thread(target=self._receive, name="camera-frames", daemon=True)

    def url(self, camera: str) -> str:
        return f"http://127.0.0.1:{self.port}/{camera}.mjpg"

    def start(self) -> CameraServer:
        context = multiprocessing.get_context("spawn")
        self._conn, child = context.Pipe()
        specs = [(c.name, c.width, c.height) for c in self.cameras.values()]
        self._process = context.Process(target=_render_worker, args=(self._xml, self._assets, specs, child),
                                        name="camera-renderer", daemon=True)
        self._process.start()
        self._http_thread.start()
        self._receiver.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        if self._conn is not None:
            try:
                self._conn.send(None)
            except (OSError, BrokenPipeError):
                pass
        if self._process is not None:
            self._process.join(timeout=3.0)
            if self._process.is_alive():
                self._process.terminate()

    @property
    def watched(self) -> bool:
        return any(slot.viewers for slot in self.slots.values())

    @property
    def rendering(self) -> bool:
        """The renderer is at work on a moment it was handed."""
        return self._busy.is_set()

    def offer(self, data: mujoco.MjData) -> bool:
        """Called by the physics loop: if the renderer is free and someone watches, hand it this
        moment to render; says whether it did."""
        if self._busy.is_set() or self._conn is None:
            return False
        t = float(data.time)
        glitch = self.glitch
        names = [n for n, slot in self.slots.items() if slot.viewers
                 and not (glitch is not None and t < glitch.dropped.get(n, -1.0))]
        if not names:
            return False
        self._busy.set()
        try:
            self._conn.send((t, glitch.light(t) if glitch is not None else 1.0,
                             data.qpos.copy(), data.mocap_pos.copy(),
                             data.mocap_quat.copy(), names))
        except (OSError, BrokenPipeError):
            self._conn = None        # the renderer is gone: the world goes on without pictures
            self._busy.clear()
            return False
        return True

    def _receive(self) -> None:
        while not self._stop.is_set():
            try:
                if not self._conn.poll(0.2):
                    continue
                sim_time, name, jpeg = self._conn.recv()
            except (EOFError, OSError, AttributeError):
                self._busy.clear()           # the renderer has gone: nobody waits for it
                return
            if name is None:              # every camera of that moment is rendered
                self._busy.clear()
                continue
            slot = self.slots[name]
            glitch = self.glitch
            if glitch is not None and sim_time < glitch.frozen.get(name, -1.0) \
                    and slot.jpeg is not None:
                jpeg = slot.jpeg              # a frozen camera: the last picture, stamped anew
            slot.publish(jpeg, sim_time)

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


MAX_POST_BYTES = 64 * 1024


class _QuietServer(ThreadingHTTPServer):
    """One line on stderr for a request that failed in a way nobody foresaw, not a traceback
    in the middle of the simulator's output; the server goes on."""

    def handle_error(self, request, client_address) -> None:
        import sys
        error = sys.exc_info()[1]
        if isinstance(error, (BrokenPipeError, ConnectionResetError)):
            return
        print(f"sim serve: a request from {client_address[0]} failed: {error!r}", file=sys.stderr)


def _content_length(headers) -> int | None:
    try:
        length = int(headers.get("Content-Length", ""))
    except ValueError:
        return None
    return length if length >= 0 else None


def _refuse_post(headers, port: int, length: int | None) -> tuple[int, str] | None:
    """Why a POST is refused, or None. The actions change the world (rebuild the tower, start the
    person's turn): they take JSON only, from this machine's own programs, never from a web page
    that a browser on this machine happens to show (a browser sends its page's Origin, and cannot
    send JSON across origins without asking first)."""
    origin = headers.get("Origin")
    if origin is not None and origin not in (f"http://127.0.0.1:{port}", f"http://localhost:{port}"):
        return 403, f"cross-origin requests are refused (Origin {origin})"
    if headers.get("Sec-Fetch-Site") not in (None, "same-origin", "none"):
        return 403, "cross-site requests are refused"
    content_type = (headers.get("Content-Type") or "").split(";")[0].strip().lower()
    if content_type != "application/json":
        return 415, f"send the body as application/json, not {content_type or 'no content type'}"
    if length is None:
        return 400, f"Content-Length must be a number of bytes, not {headers.get('Content-Length')!r}"
    if length > MAX_POST_BYTES:
        return 413, f"the body is {length} bytes; at most {MAX_POST_BYTES} are accepted"
    return None


def frame_period(cameras) -> float:
    """Simulated seconds between camera frames (the fastest camera's rate)."""
    return 1.0 / max(c.fps for c in cameras)



def _render_worker(xml: str, assets: dict[str, bytes], cameras, conn) -> None:
    """The rendering process: rebuild the model, then render each moment it is sent."""
    import os
    if not os.environ.get("DISPLAY"):
        os.environ.setdefault("MUJOCO_GL", "egl")
    model = mujoco.MjModel.from_xml_string(xml, assets)
    data = mujoco.MjData(model)
    lights = (model.light_diffuse.copy(), model.vis.headlight.diffuse.copy(),
              model.vis.headlight.ambient.copy())
    renderers = {}
    sizes = {name: (w, h) for name, w, h in cameras}
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            break
        if message is None:
            break
        sim_time, light, qpos, mocap_pos, mocap_quat, names = message
        model.light_diffuse[:] = lights[0] * light
        model.vis.headlight.diffuse[:] = lights[1] * light
        model.vis.headlight.ambient[:] = lights[2] * light
        data.qpos[:] = qpos
        data.mocap_pos[:] = mocap_pos
        data.mocap_quat[:] = mocap_quat
        mujoco.mj_forward(model, data)
        try:
            for name in names:
                w, h = sizes[name]
                if (h, w) not in renderers:
                    renderers[(h, w)] = mujoco.Renderer(model, h, w)
                renderer = renderers[(h, w)]
                renderer.update_scene(data, camera=name)
                rgb = renderer.render()
                ok, jpeg = cv2.imencode(".jpg", cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR),
                                        [cv2.IMWRITE_JPEG_QUALITY, JPEG_QUALITY])
                if ok:
                    # each camera's frame goes out as soon as it is ready: the safety monitor
                    # acts on whichever shows a hand first
                    conn.send((sim_time, name, jpeg.tobytes()))
            conn.send((sim_time, None, None))
        except (BrokenPipeError, OSError):
            break
    for renderer in renderers.values():
        renderer.close()
