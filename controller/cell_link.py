"""The robot's hold on a cell, real or simulated: the arm's serial link, the cameras, perception.
The controller goes through this and nothing else; it cannot tell a simulated cell from a real one.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from firmware_bridge.client import ArmClient
from perception.pipeline import Perception, PerceptionResult
from perception.sources import CameraError, CameraSource, Frame, open_source
from planning.game.cell.model import Cell
from planning.processes import stop_process

log = logging.getLogger(__name__)


class CellLinkError(RuntimeError):
    """The cell could not be reached or stopped answering."""


@dataclass
class ForceRecorder:
    """Keeps (device time, wrench) from telemetry while recording."""

    samples: list[tuple[float, np.ndarray]] = field(default_factory=list)
    recording: bool = False
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, telemetry) -> None:
        if self.recording:
            with self._lock:
                self.samples.append((telemetry.device_time, np.array(telemetry.wrench)))

    def start(self) -> None:
        with self._lock:
            self.samples = []
        self.recording = True

    def stop(self) -> list[tuple[float, np.ndarray]]:
        self.recording = False
        with self._lock:
            return list(self.samples)


class CellLink:
    """An open connection to a cell. `open()` connects the arm (handshake), enables and homes it,
    tares the wrist and connects every camera; `close()` leaves the arm stopped."""

    def __init__(self, cell: Cell, serial: str, camera_urls: dict[str, str],
                 perception: Perception | None = None, stall_s: float | None = None):
        """`stall_s`: how long the arm's link may stay silent before it counts as stalled (the
        firmware's default, 80 ms, unless the cell runs on a machine that can pause it, such as a
        simulator sharing a busy computer)."""
        self.cell = cell
        self.stall_s = stall_s
        self.serial = serial
        self.camera_urls = camera_urls
        self.perception = perception or Perception(cell)
        self.arm: ArmClient | None = None
        self.cameras: dict[str, CameraSource] = {}
        self.forces = ForceRecorder()
        # told of every look: the frames and what perception made of them (the viewer)
        self.on_observed: list[Callable[[dict[str, Frame], PerceptionResult], None]] = []

    def open(self) -> CellLink:
        try:
            kwargs = {"stall_s": self.stall_s} if self.stall_s else {}
            self.arm = ArmClient.open(self.serial, **kwargs)
            self.arm.on_telemetry(self.forces)
            self.arm.enable()
            self.arm.home(timeout_s=60)
            self.arm.tare()
            for cam in self.cell.cameras:
                url = self.camera_urls.get(cam.name)
                if url is None:
                    raise CellLinkError(f"no address for camera {cam.name}")
                # A simulated camera renders far slower than 30 frames/s: accept what comes.
                source = open_source(cam.name, url, cam.width, cam.height, cam.fps, timeout_s=10.0,
                                     min_fps=0.5)
                self.cameras[cam.name] = source.connect(check_s=30.0)
        except CameraError as exc:
            self.close()
            raise CellLinkError(str(exc)) from None
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        for source in self.cameras.values():
            source.close()
        self.cameras.clear()
        if self.arm is not None:
            self.arm.close()
            self.arm = None

    def __enter__(self) -> CellLink:
        return self.open()

    def __exit__(self, *exc) -> None:
        self.close()

    # --- seeing -------------------------------------------------------------------------------

    def frames(self, after: float) -> dict[str, Frame]:
        """One frame per camera, each taken at or after world time `after`."""
        out = {}
        for name, source in self.cameras.items():
            frame = source.latest()
            try:
                for _ in range(200):
                    if frame is not None and frame.time >= after:
                        break
                    frame = source.read(timeout_s=10.0)
                else:
                    raise CellLinkError(f"camera {name}: no frame newer than {after:.2f} s")
            except CameraError as exc:
                # a camera that went away mid-game: the cell is no longer seen, so nothing more
                # can be played; the caller stops safely and says so
                raise CellLinkError(f"{exc}; check the camera and its stream, then start again") \
                    from None
            out[name] = frame
        return out

    def observe(self, after: float | None = None) -> PerceptionResult:
        """What the cameras see now (frames no older than `after`, default the arm's clock)."""
        if after is None:
            after = self.arm.device_time()
        frames = self.frames(after)
        result = self.perception.observe(frames)
        for listener in self.on_observed:
            listener(frames, result)
        return result


class SimulatedCell:
    """`jenga-robot sim serve` in a child process, for when no hardware is named; `firmware`: the
    arm's, python (the reference engine) or c (hardware/firmware, built by `make firmware`)."""

    def __init__(self, seed: int, cell_path: str | None = None, person_skill: float | None = None,
                 firmware: str = "python"):
        # The cell stops when its stdin closes: a controller that is killed takes it along
        # instead of leaving a simulator running with nobody to play.
        command = [sys.executable, "-u", "-m", "controller.cli", "sim", "serve", "--seed", str(seed),
                   "--exit-with-stdin"]
        if cell_path:
            command += ["--cell", cell_path]
        if person_skill is not None:
            command += ["--person-skill", str(person_skill)]
        if firmware != "python":
            command += ["--firmware", firmware]
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        self.serial = ""
        self.camera_urls: dict[str, str] = {}
        self.truth_url = ""
        self.base_url = ""
        while True:
            line = self.process.stdout.readline()
            if not line:
                raise CellLinkError(f"the simulated cell did not start: {self.process.stderr.read()}")
            line = line.strip()
            if line.startswith("serial: "):
                self.serial = line.split(": ", 1)[1]
            elif line.startswith("camera "):
                name, url = line[len("camera "):].split(": ", 1)
                self.camera_urls[name] = url
            elif line.startswith("simulated cell"):
                break
        if self.camera_urls:
            self.base_url = next(iter(self.camera_urls.values())).rsplit("/", 1)[0]
            self.truth_url = self.base_url + "/truth.json"
        # Keep reading the child's output: a full pipe would block the simulator mid-match.
        self.log: list[str] = []
        self._drains = [threading.Thread(target=self._drain, args=(stream,), daemon=True)
                        for stream in (self.process.stdout, self.process.stderr)]
        for drain in self._drains:
            drain.start()

    def _drain(self, stream) -> None:
        for line in stream:
            self.log = (self.log + [line.rstrip()])[-50:]
            if stream is self.process.stderr:
                # What the cell warns of (what an overload met, a failure) is the user's to read.
                log.warning("simulated cell: %s", line.rstrip())

    def close(self) -> None:
        stop_process(self.process, timeout_s=10)
        for drain in self._drains:     # the child's last words, read before this program ends
            drain.join(timeout=2.0)

    def __enter__(self) -> SimulatedCell:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
