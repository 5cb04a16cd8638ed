"""Perception as the controller uses it: frames from every camera in, the tower observation and the
events out. It knows the cell (block set, nominal cameras and tower placement) and the calibration;
it does not know whether the cameras are real or simulated.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from perception.camera_model import CameraModel
from perception.events import FallWatch, SettleWatch, WorkspaceWatch
from perception.markers import MarkerDetector, MarkerSighting
from perception.observation import PerceptionError, TowerObservation, TowerObserver
from perception.sources import Frame
from perception.tower_estimator import TowerEstimator
from perception.tower_model import TowerModel
from planning.game.geometry import TowerPose
from planning.game.cell.model import Cell

ROI_MARGIN_PX = 25


@dataclass
class PerceptionResult:
    observation: TowerObservation
    events: list = field(default_factory=list)
    sightings: dict = field(default_factory=dict)    # camera name: the markers found in its frame


class Perception:
    def __init__(self, cell: Cell, cameras: list[CameraModel] | None = None,
                 tower_pose: TowerPose | None = None):
        self.cell = cell
        self.model = TowerModel(cell.blocks)
        self.cameras = cameras or [CameraModel.from_cell(c) for c in cell.cameras]
        self.detector = MarkerDetector(cell.blocks.count)
        self.estimator = TowerEstimator(self.model, self.cameras)
        self.observer = TowerObserver(self.model, self.cameras, self.estimator)
        x, y = cell.tower.position
        self.pose = tower_pose or TowerPose(x, y, cell.tower.yaw, self.model.nominal_pitch)
        # Until the first observation the height is unknown: search every layer that can be.
        self.layers: int | None = None
        self.max_layers = 3 * cell.blocks.layers
        self._standing: TowerObservation | None = None
        self.settle = SettleWatch()
        self.falls = FallWatch()
        self.workspace = WorkspaceWatch(self.model, self.cameras)

    @classmethod
    def for_cell_file(cls, cell: Cell, cell_path) -> Perception:
        """Perception with the cell's cameras as calibrated (calibration files next to the cell
        file), nominal where a camera has no calibration."""
        from perception.calibration.store import camera_models
        return cls(cell, camera_models(cell, cell_path))

    def detect(self, name: str, image: np.ndarray) -> list[MarkerSighting]:
        """Markers in one camera's image, searched only around where the tower can be."""
        camera = next(c for c in self.cameras if c.name == name)
        x0, y0, x1, y1 = self._roi(camera, image.shape)
        return self.detector.detect(image[y0:y1, x0:x1], offset_px=(x0, y0))

    def observe(self, frames: dict[str, Frame]) -> PerceptionResult:
        """One observation from one frame per camera (their world times should be close; the
        observation takes the latest)."""
        images = {name: f.image for name, f in frames.items()}
        sightings = {name: self.detect(name, image) for name, image in images.items()}
        time = max(f.time for f in frames.values())
        search = self.max_layers if self.layers is None else self.layers + 3
        obs = self.observer.observe(images, sightings, self.pose, time, search)
        if self._standing is not None and obs.fell_since(self._standing):
            obs.fell = True   # blocks that stood a moment ago are nowhere in the tower
        if not obs.fell and _reads_as_tower(obs):
            self._standing = obs
        events = []
        fell = self.falls.update(obs)
        if fell is not None:
            events.append(fell)
        if not obs.fell:
            self.pose = obs.pose
            self.layers = max(obs.top_layer, 1)
            settled = self.settle.update(obs)
            if settled is not None:
                events.append(settled)
        for name, image in images.items():
            entered = self.workspace.update(name, image, time)
            if entered is not None:
                events.append(entered)
        return PerceptionResult(obs, events, sightings)

    def new_tower(self, pose: TowerPose | None = None, layers: int | None = None) -> None:
        """A tower was built anew (a new round), or one this perception did not watch stands
        there now: forget the one that stood. Without this, the layers the old tower had above
        the new one's top read as blocks that fell. The search starts from `pose` and `layers`
        when they are known, from the cell's nominal tower (every height) when not."""
        self._standing = None
        self.layers = layers
        self.estimator.forget()
        x, y = self.cell.tower.position
        self.pose = pose or TowerPose(x, y, self.cell.tower.yaw, self.model.nominal_pitch)
        self.settle = SettleWatch()
        self.falls = FallWatch()

    def workspace_clear(self, frames: dict[str, Frame]) -> None:
        """Tell the intrusion watch what the clear workspace looks like (the arm out of view)."""
        self.workspace.set_clear({n: f.image for n, f in frames.items()}, self.pose,
                                 self.layers or self.cell.blocks.layers)

    def _roi(self, camera: CameraModel, shape) -> tuple[int, int, int, int]:
        half = self.model.length / 2 + 0.02   # blocks sticking out by up to 2 cm
        top = ((self.layers or self.max_layers) + 3) * self.model.nominal_pitch
        corners = np.array([[x, y, z] for x in (-half, half) for y in (-half, half) for z in (0.0, top)])
        uv = camera.project(self.pose.to_world(corners))
        h, w = shape[:2]
        x0 = int(max(0, np.floor(uv[:, 0].min()) - ROI_MARGIN_PX))
        y0 = int(max(0, np.floor(uv[:, 1].min()) - ROI_MARGIN_PX))
        x1 = int(min(w, np.ceil(uv[:, 0].max()) + ROI_MARGIN_PX))
        y1 = int(min(h, np.ceil(uv[:, 1].max()) + ROI_MARGIN_PX))
        if x1 - x0 < 32 or y1 - y0 < 32:
            return 0, 0, w, h
        return x0, y0, x1, y1


def _reads_as_tower(obs: TowerObservation) -> bool:
    """Whether a look reads as a tower, and so may be the one later looks are compared with. A
    block in a person's hand above the top was read as a layer of its own, over empty ones; that
    look, taken as the tower, made every later look three slots short of it (a block in a hand is
    not in the next look), and perception called a fall of a standing tower until the round
    ended (a seed-1 match)."""
    try:
        obs.tower_state()
    except PerceptionError:
        return False
    return True
