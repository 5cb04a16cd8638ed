"""Events from the stream of observations and frames, in world time:

- the tower fell (and which blocks are no longer where they were);
- the tower settled: no block moved more than 0.2 mm for 1 s;
- something entered the workspace around the tower (a hand, an arm): the image changed inside the
  projected workspace volume but outside the tower itself.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass

import cv2
import numpy as np

from perception.camera_model import CameraModel
from perception.observation import TowerObservation
from perception.tower_model import TowerModel
from planning.game.geometry import TowerPose

SETTLE_M = 0.0002
SETTLE_S = 1.0
WORKSPACE_MARGIN = 0.12         # m around the tower's footprint and above its top
CHANGE_LEVEL = 40               # grey levels: a pixel that changed this much changed
INTRUSION_FRACTION = 0.01       # share of the workspace's pixels that changed
# Blocks pushed out of the tower stick out of its faces by up to this (m): the slabs in front of
# the faces count as tower, so a block being pushed through or pulled is not taken for a hand.
PROTRUSION_ALLOWANCE = 0.06


@dataclass(frozen=True)
class TowerFell:
    time: float
    blocks_moved: list[int]      # blocks no longer where they were before the fall


@dataclass(frozen=True)
class TowerSettled:
    time: float


@dataclass(frozen=True)
class WorkspaceEntered:
    time: float
    camera: str
    fraction: float


class SettleWatch:
    """Settled when, over the last SETTLE_S of world time, no block moved more than SETTLE_M."""

    def __init__(self, tolerance_m: float = SETTLE_M, window_s: float = SETTLE_S):
        self.tolerance_m, self.window_s = tolerance_m, window_s
        self._history: deque[tuple[float, dict[int, np.ndarray]]] = deque()

    def update(self, obs: TowerObservation) -> TowerSettled | None:
        positions = {b.block: np.array(b.position) for b in obs.blocks}
        self._history.append((obs.time, positions))
        # Keep the newest sample that is at least a window old, and everything after it.
        while len(self._history) >= 2 and obs.time - self._history[1][0] >= self.window_s:
            self._history.popleft()
        first_time, first = self._history[0]
        if obs.time - first_time < self.window_s:
            return None
        for _, later in self._history:
            for block, p in later.items():
                if block in first and np.linalg.norm(p - first[block]) > self.tolerance_m:
                    return None
        return TowerSettled(obs.time)

    def reset(self) -> None:
        self._history.clear()


class FallWatch:
    """Reports the first observation that says the tower fell, with the blocks that moved."""

    def __init__(self, moved_m: float = 0.02):
        self.moved_m = moved_m
        self._standing: dict[int, np.ndarray] = {}
        self.fallen = False

    def update(self, obs: TowerObservation) -> TowerFell | None:
        if not obs.fell:
            self._standing = {b.block: np.array(b.position) for b in obs.blocks}
            self.fallen = False
            return None
        if self.fallen:
            return None
        self.fallen = True
        now = {b.block: np.array(b.position) for b in obs.blocks}
        moved = sorted(b for b, p in self._standing.items()
                       if b not in now or np.linalg.norm(now[b] - p) > self.moved_m)
        return TowerFell(obs.time, moved)


class WorkspaceWatch:
    """Per camera, compares each frame with a reference taken while the workspace was clear. The
    workspace is the box `margin` around the tower's footprint and above its top, less the tower."""

    def __init__(self, model: TowerModel, cameras: list[CameraModel],
                 margin: float = WORKSPACE_MARGIN):
        self.model = model
        self.margin = margin
        self.cameras = {c.name: c for c in cameras}
        self._reference: dict[str, np.ndarray] = {}
        self._masks: dict[str, np.ndarray] = {}

    def set_clear(self, images: dict[str, np.ndarray], pose: TowerPose, layers: int) -> None:
        """The workspace is clear now: remember what it looks like."""
        for name, image in images.items():
            self._reference[name] = _small_grey(image)
            self._masks[name] = _shrink(self._mask(self.cameras[name], image.shape[:2], pose,
                                                   layers))

    @property
    def ready(self) -> bool:
        return bool(self._reference)

    def update(self, name: str, image: np.ndarray, time: float,
               exclude: np.ndarray | None = None) -> WorkspaceEntered | None:
        """`exclude`: pixels to ignore (where the robot's own arm is, now or in the reference)."""
        if name not in self._reference:
            return None
        mask = self._masks[name] if exclude is None else self._masks[name] & ~_shrink(exclude)
        diff = cv2.absdiff(_small_grey(image), self._reference[name])
        changed = (diff > CHANGE_LEVEL) & mask
        fraction = float(changed.sum()) / max(int(mask.sum()), 1)
        if fraction > INTRUSION_FRACTION:
            return WorkspaceEntered(time, name, fraction)
        return None

    def _mask(self, camera: CameraModel, shape, pose: TowerPose, layers: int) -> np.ndarray:
        """Pixels of the workspace box around the tower, minus the tower's own silhouette."""
        half = self.model.length / 2
        top = layers * self.model.nominal_pitch
        outer = _box_mask(camera, shape, pose, half + self.margin, top + self.margin)
        tower = _box_mask(camera, shape, pose, half + 0.01, top + 0.01)
        for along in ((half + PROTRUSION_ALLOWANCE, half), (half, half + PROTRUSION_ALLOWANCE)):
            tower |= _box_mask(camera, shape, pose, along, top + 0.01)
        return outer & ~tower


def capsule_mask(camera: CameraModel, shape, starts: np.ndarray, ends: np.ndarray,
                 radii: np.ndarray) -> np.ndarray:
    """Pixels covered by world capsules (segment ends (N, 3), radii (N,)) in one camera's image."""
    mask = np.zeros(shape[:2], np.uint8)
    f = float(camera.K[0, 0])
    for start, end, radius in zip(starts, ends, radii):
        points = start + np.outer(np.linspace(0.0, 1.0, 6), end - start)
        ahead = camera.in_front(points)
        if not ahead.any():
            continue
        points = points[ahead]
        depth = np.linalg.norm(points - camera.position, axis=1)
        uv = np.round(camera.project(points)).astype(int)
        for (u, v), d in zip(uv, depth):
            cv2.circle(mask, (int(u), int(v)), max(1, int(np.ceil(f * radius / d))), 1, -1)
        for a, b in zip(uv[:-1], uv[1:]):
            cv2.line(mask, tuple(int(x) for x in a), tuple(int(x) for x in b), 1,
                     max(1, int(np.ceil(2 * f * radius / depth.max()))))
    return mask.astype(bool)


def _grey(image: np.ndarray) -> np.ndarray:
    return image if image.ndim == 2 else cv2.cvtColor(image, cv2.COLOR_RGB2GRAY)


# Frames are compared at 1/COMPARE_SCALE of their size: a hand is tens of pixels across even so,
# and the comparison, in the path from a frame to a paused arm, costs a quarter as much.
COMPARE_SCALE = 2


def _small_grey(image: np.ndarray) -> np.ndarray:
    grey = _grey(image)
    size = (grey.shape[1] // COMPARE_SCALE, grey.shape[0] // COMPARE_SCALE)
    return cv2.resize(grey, size, interpolation=cv2.INTER_AREA)


def _shrink(mask: np.ndarray) -> np.ndarray:
    """A full-size pixel mask at the comparison's size."""
    h, w = mask.shape[0] // COMPARE_SCALE, mask.shape[1] // COMPARE_SCALE
    return mask[:h * COMPARE_SCALE:COMPARE_SCALE, :w * COMPARE_SCALE:COMPARE_SCALE]


def _box_mask(camera: CameraModel, shape, pose: TowerPose, half, height: float) -> np.ndarray:
    """Pixels of a box on the table centred on the tower; `half` is its half-size, or (along the
    tower's x, along its y)."""
    hx, hy = (half, half) if np.isscalar(half) else half
    corners = np.array([[x, y, z] for x in (-hx, hx) for y in (-hy, hy) for z in (0.0, height)])
    uv = camera.project(pose.to_world(corners))
    hull = cv2.convexHull(np.round(uv).astype(np.int32))
    mask = np.zeros(shape, np.uint8)
    cv2.fillConvexPoly(mask, hull, 1)
    return mask.astype(bool)
