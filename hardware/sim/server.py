"""`jenga-robot sim serve`: the simulated cell as hardware. The device engine (the arm's firmware)
runs against the physics at 1 kHz of simulated time and talks over a pty; the cameras stream MJPEG
over HTTP.

World time never runs faster than the wall clock: the loop keeps it in step when the machine is fast
enough, and when it is not, the whole world runs slower rather than catching up in bursts. That
includes the cameras: a watched camera gets a frame at least every MAX_FRAME_GAP_S of world time,
and when the renderer (a process of its own) is behind, the world waits for it. The world also
waits for a host that a busy machine kept from sending its heartbeats, as long as it has the
serial port open. While
the world waits the device keeps answering on the serial link (engine.serve_link), so a busy
machine plays slower but never looks like a dead device, nor a host like a dead one. `pace()`
reports the world-to-wall ratio.
"""

from __future__ import annotations

import threading
import time
import traceback
from collections import deque
from pathlib import Path

from firmware_bridge.device.engine import DeviceEngine
from firmware_bridge.device.pty_port import PtyPort
from hardware.sim.arrange import arrange_tower
from hardware.sim.camera_server import CameraServer, frame_period
from hardware.sim.ground_truth import GroundTruth
from hardware.sim.person import SimPerson
from hardware.sim.skill import Skill
from hardware.sim.surprises import Surprises
from hardware.sim.virtual_firmware import SimHardware, device_config
from hardware.sim.world import SimWorld
from planning.game.cell.model import Cell
from planning.game.tower import TowerState


# A watched camera goes no longer than this (world time) without a frame: the renderer gives about
# 10 frames a second of an idle machine's wall time, so this holds the world only when it is busy.
MAX_FRAME_GAP_S = 0.2
HOLD_SLICE_S = 0.002        # wall seconds between answers on the link while the world waits
# A renderer that takes longer than this (wall time) for one moment is stuck, not slow: the world
# goes on without waiting for it, as a real cell goes on when a camera drops frames.
MAX_HOLD_S = 5.0
# A host that has said nothing for this much world time (it sends a heartbeat every 50 ms) was kept
# from running by a busy machine: the world waits for it while it has the serial port open. The
# wall clock only tells a host that is gone: its port closed (its process ended), or, port open,
# silent for HOST_GONE_S of wall time (hung). Then the world goes on and the firmware's watchdog
# stops the arm. (A 1 s wait let a machine loaded 3-11 on 2 cores trip the watchdog mid-turn.)
HOST_QUIET_S = 0.1
HOST_GONE_S = 30.0


class SimServer:
    def __init__(self, cell: Cell, seed: int = 1, *, cameras: bool = True, realtime: bool = True,
                 world: SimWorld | None = None, person_skill: float = Skill().level,
                 engine=DeviceEngine):
        """`engine`: the firmware the arm runs, the reference engine or the C firmware's
        (hardware/firmware/c_engine.py `CEngine`), ticked against the simulated arm."""
        self.cell = cell
        self.world = world or SimWorld(cell, seed, markers=cameras)
        self.person = SimPerson(self.world, Skill(person_skill), seed)
        self._fresh = self.world.save()
        self.port = PtyPort()
        self.engine = engine(device_config(cell), SimHardware(self.world),
                             boot_time=self.world.time)
        self.truth = GroundTruth(self.world)
        self.surprises = Surprises(self.world, self.truth, self.person,
                                   [c.name for c in cell.cameras], seed)
        self.cameras = CameraServer(self.world.model, cell.cameras,
                                    documents={"/truth.json": lambda: self.truth_document(loads=True),
                                               "/person.json": self.person_document,
                                               "/surprises.json": self.surprises_document},
                                    actions={"/person/turn": self.person_turn,
                                             "/tower/rebuild": self.rebuild_tower,
                                             "/tower/arrange": self.arrange_tower,
                                             "/surprise": self.surprise},
                                    xml=self.world.built.xml, assets=self.world.built.assets) \
            if cameras else None
        if self.cameras is not None:
            self.cameras.glitch = self.surprises.glitch
        self.realtime = realtime
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._loop, name="sim-server", daemon=True)
        self._frame_period = frame_period(cell.cameras)
        self.steps = 0
        self._failure: str | None = None
        self.held_s = 0.0            # wall seconds the world waited for the renderer
        self._pace: deque[tuple[float, float]] = deque(maxlen=64)   # (wall, world) samples

    @property
    def serial_path(self) -> str:
        return self.port.path

    def camera_urls(self) -> dict[str, str]:
        if self.cameras is None:
            return {}
        return {c.name: self.cameras.url(c.name) for c in self.cell.cameras}

    def start(self) -> SimServer:
        if self.cameras is not None:
            self.cameras.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)
        if self.cameras is not None:
            self.cameras.stop()
        self.port.close()
        self.world.close()

    def __enter__(self) -> SimServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def locked(self, fn):
        """Run fn(world, engine) between physics steps (tests, fault injection)."""
        with self._lock:
            return fn(self.world, self.engine)

    def truth_document(self, loads: bool = False) -> dict:
        """What really is, for tests and benchmarks (never for the controller): every block's
        pose in the tower frame, the tower's occupancy, what fell and (`loads`) the true loads."""
        with self._lock:
            return self.truth.document(loads)

    def arm_document(self) -> dict:
        """The arm as it really is, for the simulated cell's own viewer (never for the
        controller): joints (rad), the gripper's width (m), the true wrench on the wrist."""
        with self._lock:
            return {"time": self.world.time, "q": self.world.joint_positions().tolist(),
                    "gripper_width_m": float(self.world.gripper_width()),
                    "wrench": self.world.true_wrench().tolist()}

    def person_document(self) -> dict:
        """The simulated person as a player sees them: playing or done (the "done" a real player
        says by pressing Enter), and for tests what they tried."""
        with self._lock:
            return {**self.person.status(), "last_turn": self.person.last_turn}

    def person_turn(self, request: dict) -> dict:
        """The robot tells the person it is their turn (`{"mistake": name}` makes them break a
        rule on purpose, for the referee's tests)."""
        with self._lock:
            self.person.start_turn(request.get("mistake"))
            return self.person.status()

    def rebuild_tower(self, request: dict) -> dict:
        """A new round: the person builds the tower again (the drawn tower, as it first stood),
        leaving a turn the fall cut short."""
        with self._lock:
            self.person.stop_turn()
            self.world.rebuild_tower(self._fresh)
            self.truth.reference()
            return {"rebuilt": True, "time": self.world.time}

    def arrange_tower(self, request: dict) -> dict:
        """The tower set up as a game left it (`{"layers": [[1, 1, 1], ...]}`, bottom first), for
        a match resumed from its log on a restarted simulator (hardware/sim/arrange.py)."""
        tower = TowerState.from_json(request)
        with self._lock:
            if self.person.state == "playing":
                raise RuntimeError("the person is playing a turn")
            moved = arrange_tower(self.world, self._fresh, tower)
            self.truth.reference()
            return {"arranged": [list(m) for m in moved], "time": self.world.time}

    def surprise(self, request: dict) -> dict:
        """A surprise for a test or a benchmark (`{"kind": ...}`, hardware/sim/surprises.py
        Kind): now, or when its moment comes."""
        with self._lock:
            return self.surprises.ask(request.get("kind", ""))

    def surprises_document(self) -> dict:
        """The surprises asked for, and when each happened."""
        with self._lock:
            return self.surprises.to_json()

    def pace(self) -> float:
        """World seconds per wall second over the last few seconds (1.0: real time)."""
        samples = list(self._pace)
        if len(samples) < 2 or samples[-1][0] <= samples[0][0]:
            return 1.0
        return (samples[-1][1] - samples[0][1]) / (samples[-1][0] - samples[0][0])

    def reset_device(self) -> None:
        """Power-cycle the arm's controller (fault injection): the physics goes on."""
        with self._lock:
            self.engine.boot(self.world.time)

    @property
    def failure(self) -> str | None:
        """Why the physics loop stopped on an error of its own, with where (None unless it did;
        a loop stopped by `stop` did not fail)."""
        return self._failure

    def _loop(self) -> None:
        try:
            self._run()
        except Exception as exc:  # noqa: BLE001 - said by `failure`; the serial port goes quiet
            where = traceback.extract_tb(exc.__traceback__)[-1]
            self._failure = f"{type(exc).__name__}: {exc} (at {Path(where.filename).name}:" \
                            f"{where.lineno})"

    def _run(self) -> None:
        world, engine = self.world, self.engine
        start_wall = time.monotonic()
        start_sim = world.time
        next_frame = world.time
        waits = _Waits(self.cameras, world.time)
        while not self._stop.is_set():
            with self._lock:
                now = time.monotonic()
                data = self.port.read()
                engine.receive(data)
                held = waits.hold(now, world.time, heard=bool(data),
                                  host_open=self.port.host_open)
                if held:
                    engine.serve_link(world.time)
                else:
                    engine.tick(world.time)
                self.port.write(engine.take_output())
                if not held:
                    self.person.step()
                    self.surprises.step()
                    world.step(1)
                    self.steps += 1
                    if self.cameras is not None and world.time >= next_frame \
                            and self.cameras.offer(world.data):
                        next_frame = world.time + self._frame_period
                        waits.last_frame = world.time
                    if self.steps % 100 == 0:
                        self._pace.append((now, world.time))
            if held:
                time.sleep(HOLD_SLICE_S)
                start_sim, start_wall = world.time, time.monotonic()
                self.held_s += start_wall - now
            elif self.realtime:
                ahead = (world.time - start_sim) - (time.monotonic() - start_wall)
                if ahead > 0.002:
                    time.sleep(ahead)
                elif ahead < -0.02:
                    # Behind the wall clock: carry on from here rather than catch up in a burst.
                    # A burst would run simulated time faster than real time, and the firmware's
                    # watchdog (in simulated time) would miss heartbeats sent in real time.
                    start_sim, start_wall = world.time, time.monotonic()


class _Waits:
    """When the world waits: for a renderer that is behind (a watched camera owed a frame for
    MAX_FRAME_GAP_S of world time; not past MAX_HOLD_S of wall time for one moment, after which
    the renderer counts as stuck until it is free), and for a host gone quiet for HOST_QUIET_S of
    world time (while it has the port open, up to HOST_GONE_S of wall time)."""

    def __init__(self, cameras: CameraServer | None, world_t: float):
        self.cameras = cameras
        self.last_frame = world_t          # world time of the last moment handed to the renderer
        self._hold_since: float | None = None
        self._stuck = False
        self._heard: tuple[float, float] | None = None   # (wall, world) the host last spoke

    def hold(self, wall_t: float, world_t: float, heard: bool, host_open: bool = True) -> bool:
        if heard:
            self._heard = (wall_t, world_t)
        elif not host_open:
            self._heard = None          # gone: the next host is waited for once it has spoken
        return self._for_renderer(wall_t, world_t) or self._for_host(wall_t, world_t)

    def _for_renderer(self, wall_t: float, world_t: float) -> bool:
        cameras = self.cameras
        rendering = cameras is not None and cameras.rendering
        self._stuck = self._stuck and rendering
        owed = (rendering and not self._stuck and cameras.watched
                and world_t - self.last_frame >= MAX_FRAME_GAP_S)
        if not owed:
            self._hold_since = None
            return False
        self._hold_since = self._hold_since or wall_t
        if wall_t - self._hold_since > MAX_HOLD_S:
            self._stuck = True
            return False
        return True

    def _for_host(self, wall_t: float, world_t: float) -> bool:
        return (self._heard is not None and world_t - self._heard[1] >= HOST_QUIET_S
                and wall_t - self._heard[0] < HOST_GONE_S)
