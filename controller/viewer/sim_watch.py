"""The simulated cell's own view (`jenga-robot sim serve --viewer/--rrd`): what really is, read
from the simulator a few times a second: every block where it is, the arm's joints and the true
wrench on its wrist, and the frames the cameras serve. For whoever runs the simulator; the
robot's controller sees none of it (its recording is `play --viewer/--rrd`)."""

from __future__ import annotations

import numpy as np
import rerun as rr

from controller.viewer.recorder import Recorder, paths
from controller.viewer.scene import truth_boxes
from planning.game.geometry import TowerGeometry
from planning.stability import BlockDims

TRUTH_BLOCKS = "truth/blocks"


class SimWatch:
    def __init__(self, recorder: Recorder, server):
        self.recorder, self.server = recorder, server
        self.geometry = TowerGeometry.from_cell(server.cell)
        self.dims = BlockDims.of(server.cell.blocks)
        self._frames_seen: dict[str, int] = {}
        self.failed: str | None = None

    def sample_safely(self) -> None:
        """`sample`, but a failure ends the recording with a word, never the cell."""
        try:
            self.sample()
        except Exception as exc:          # noqa: BLE001 - the cell serves on
            self.failed = f"{type(exc).__name__}: {exc}"
            self.recorder.say(f"viewer: recording stopped ({self.failed}); the cell serves on")

    def sample(self) -> None:
        """One look at the simulator: call it a few times a second."""
        truth = self.server.truth_document()
        self.recorder.boxes(TRUTH_BLOCKS, truth["time"],
                            truth_boxes(truth, self.geometry, self.dims))
        arm = self.server.arm_document()
        stream, t = self.recorder.stream, arm["time"]
        stream.set_time(self.recorder.timeline, duration=t)
        force = np.array(arm["wrench"][:3], float)
        stream.log(paths.WRIST_FORCE, rr.Scalars([*force, float(np.linalg.norm(force))]))
        stream.log(paths.JOINTS, rr.Scalars(np.array(arm["q"], float)))
        stream.log(paths.GRIPPER, rr.Scalars(arm["gripper_width_m"]))
        cameras = getattr(self.server, "cameras", None)
        for name, slot in (cameras.slots.items() if cameras is not None else ()):
            newer = slot.wait_newer(self._frames_seen.get(name, 0), 0.0)   # read under its lock
            if newer is not None:
                jpeg, sim_time, self._frames_seen[name] = newer
                stream.set_time(self.recorder.timeline, duration=sim_time)
                stream.log(f"{paths.CAMERAS}/{name}",
                           rr.EncodedImage(contents=jpeg, media_type="image/jpeg"))
