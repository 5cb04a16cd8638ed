"""The tower as the cameras see it at one moment: every slot's occupancy, every block's pose and
protrusion, the tower's lean, blocks out of place, and whether it still stands. Merged from both
cameras; turned into the rules' `TowerState` on demand."""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from perception.camera_model import CameraModel
from perception.tower_estimator import BlockObservation, TowerEstimator, TowerFit, marker_in_world
from perception.tower_model import TowerModel
from planning.game.geometry import TowerPose
from planning.game.tower import SLOTS, TowerError, TowerState

# An end face with a marker on it is black and white: the sticker's quiet zone and white cells,
# the marker's black border (over half its square). A hole shows wood and shadow; a light grey
# arm link or a neighbour's sticker edge seen through or beside it is white without the black.
# Shares of near-white and of near-black pixels that together say "a sticker is there".
WHITE_LEVEL = 165     # sticker white, even in the shade of a hole
OCCUPIED_WHITE_FRACTION = 0.15
DARK_LEVEL = 70       # marker black
OCCUPIED_DARK_FRACTION = 0.15
# The tower has fallen when its fit explains few of the markers seen, fits badly, or leans.
FALLEN_ASSIGNED_FRACTION = 0.5
FALLEN_RESIDUAL_MM = 2.0
FALLEN_TILT_DEG = 4.0
# Depths at which a pushed-in block's sticker is looked for (m).
RECESS_DEPTHS_M = (0.0, 0.0025, 0.005)
# Markers of blocks lying on the table: centre at most about half a block width up.
TABLE_MARKER_HEIGHT = 0.010
FALL_ZONE_M = 0.5
# A turn takes one block out of the tower: this many slots emptied between two looks with no hand
# at the tower means blocks fell.
FALLEN_SLOTS_EMPTIED = 3
FALLEN_BLOCKS_ON_TABLE = 3
# A block sticking far out of its slot (a tested block pushed out, one being drawn) is not read as
# in its slot either, and its marker's ray meets the table near the tower too; a marker whose ray
# passes this close to the line a slot's end face moves along as its block slides out, at about
# the distance from the camera the marker's size says, is that block's, not one on the table. In
# the simulated cell, three tested blocks pushed 30 mm out at once were taken for three blocks on
# the table, and the match called a fall of a standing tower; without the distance, blocks knocked
# off the top onto the table behind the tower were taken for blocks sticking out, and a fall was
# not seen.
PROTRUDING_RAY_M = 0.01
# A marker's distance from its size is a few per cent off at 11-34 px: where the table and a slot's
# line lie closer than this (log ratio) along the ray, the size cannot tell them apart, and the
# marker is taken for a block sticking out (a fall is still seen by the slots it emptied).
SIZE_CANNOT_TELL = 0.1


class PerceptionError(RuntimeError):
    """What the cameras see cannot be reconciled with a standing tower."""


@dataclass
class TowerObservation:
    time: float
    pose: TowerPose
    tilt_deg: float
    residual_mm: float
    blocks: list[BlockObservation]
    occupancy: dict[tuple[int, int], bool]
    unread: list[tuple[int, int]] = field(default_factory=list)     # occupied, no marker read
    out_of_place: list[int] = field(default_factory=list)           # blocks read outside any slot
    fell: bool = False
    markers_seen: int = 0
    on_table: list[int] = field(default_factory=list)               # blocks seen lying on the table
    # where (world, m) each block on the table was seen: the centre of a marker it shows
    table_points: dict[int, tuple[float, float, float]] = field(default_factory=dict)
    # slots read empty whose blocks are seen sticking out too far to be read in them: the block,
    # and where its centre stands along its layer's axis (m, as `protrusions` says of blocks in
    # their slots)
    far_out: dict[tuple[int, int], tuple[int, float]] = field(default_factory=dict)

    @property
    def top_layer(self) -> int:
        return max((layer for (layer, _), full in self.occupancy.items() if full), default=0)

    def protrusions(self) -> dict[tuple[int, int], float]:
        """How far each seen block sticks out along its layer (m)."""
        return {(b.layer, b.slot): b.protrusion for b in self.blocks}

    def emptied_since(self, earlier: TowerObservation) -> list[tuple[int, int]]:
        """The slots `earlier` read full that this observation reads empty."""
        return sorted(key for key, full in earlier.occupancy.items()
                      if full and not self.occupancy.get(key, False))

    def fell_since(self, earlier: TowerObservation) -> bool:
        """Whether the tower fell since `earlier` (both looks with no hand at the tower): this look
        says so, or more slots were emptied than a move empties (blocks that fell out of the
        cameras' sight, or one look after another, each look too few to be called)."""
        return self.fell or len(self.emptied_since(earlier)) >= FALLEN_SLOTS_EMPTIED

    def block_at(self, layer: int, slot: int) -> BlockObservation | None:
        for b in self.blocks:
            if (b.layer, b.slot) == (layer, slot):
                return b
        return None

    def tower_state(self, blocks_moved: int = 0) -> TowerState:
        """The occupancy as a rules tower; PerceptionError when it is not one (or the tower fell)."""
        if self.fell:
            raise PerceptionError("the tower has fallen")
        rows = [tuple(self.occupancy.get((layer, s), False) for s in SLOTS)
                for layer in range(1, self.top_layer + 1)]
        try:
            return TowerState(tuple(rows), blocks_moved)
        except TowerError as exc:
            raise PerceptionError(f"what the cameras see is not a tower: {exc}") from None


class TowerObserver:
    """Turns a pair of frames into a TowerObservation."""

    def __init__(self, model: TowerModel, cameras: list[CameraModel], estimator: TowerEstimator):
        self.model = model
        self.cameras = {c.name: c for c in cameras}
        self.estimator = estimator

    def observe(self, images: dict[str, np.ndarray], sightings: dict, prior: TowerPose,
                time: float, layers: int | None = None) -> TowerObservation:
        fit = self.estimator.fit(sightings, prior, layers)
        blocks = self.estimator.blocks(fit)
        total = sum(len(v) for v in sightings.values())
        assigned = total - len(fit.unassigned)
        occupancy, unread = self._occupancy(images, fit, blocks)
        in_slot = {b.block for b in blocks}
        out_of_place = sorted({s.block for _, s in fit.unassigned} - in_slot)
        top = max((b.layer for b in blocks), default=0) + 1
        full = {key for key, is_full in occupancy.items() if is_full}
        table_points, far_out = self._off_the_slots(fit, top, full)
        on_table = sorted(table_points)
        fell = (total >= 6 and assigned < FALLEN_ASSIGNED_FRACTION * total) \
            or fit.residual_mm > FALLEN_RESIDUAL_MM or fit.tilt_deg > FALLEN_TILT_DEG \
            or len(blocks) < 3 or len(on_table) >= FALLEN_BLOCKS_ON_TABLE
        return TowerObservation(time, fit.pose, fit.tilt_deg, fit.residual_mm, blocks, occupancy,
                                unread, out_of_place, fell, total, on_table, table_points, far_out)

    def _off_the_slots(self, fit: TowerFit, layers: int, full: set[tuple[int, int]]
                       ) -> tuple[dict[int, tuple[float, float, float]],
                                  dict[tuple[int, int], tuple[int, float]]]:
        """The markers read in no slot, of `layers`: the blocks lying on the table near the tower
        (fallen off it) and where (a marker's centre, where its camera's ray meets the table),
        and the slots whose blocks stick out too far to be read in them, and how far (a block's
        centre along its layer's axis, m). A marker that could be a block of one of `layers`
        sticking out of its slot (seen so by either camera) is not on the table; one sticking out
        of a slot read `full` is not far out of it."""
        table, sticking_out, far_out = {}, set(), {}
        centre = fit.pose.to_world(np.zeros((1, 3)))[0]
        for name, sighting in fit.unassigned:
            camera = self.cameras[name]
            ray = camera.rays(sighting.centre[None, :])[0]
            origin = camera.position
            if ray[2] >= -1e-6:
                continue
            table_m = (TABLE_MARKER_HEIGHT - origin[2]) / ray[2]
            slid = self._slid_out(camera, sighting, ray, fit.pose, layers, table_m, full)
            if slid is not None:
                sticking_out.add(sighting.block)
                if slid[0] is not None:
                    far_out.setdefault(slid[0], (sighting.block, slid[1]))
                continue
            hit = origin + table_m * ray
            if np.linalg.norm(hit[:2] - centre[:2]) < FALL_ZONE_M:
                table.setdefault(sighting.block, tuple(float(v) for v in hit))
        return {b: p for b, p in table.items() if b not in sticking_out}, far_out

    def _slid_out(self, camera: CameraModel, sighting, ray: np.ndarray, pose: TowerPose,
                  layers: int, table_m: float, full: set[tuple[int, int]]
                  ) -> tuple[tuple[int, int] | None, float] | None:
        """None unless the marker may be that of a block sticking out of one of `layers` rather
        than one on the table `table_m` along its ray: its ray passes near where a slid-out end
        face would be, and its size puts it nearer that distance than the table's, or cannot
        tell the two apart (low layers, whose lines lie just above the table). Then the slot it
        sticks out of, when its size says so (None if it cannot tell, or that slot is read
        `full`: a block on the table is no obstacle in the tower), and its centre along
        the layer's axis (m). `ray`: the camera's ray through the marker's centre (world)."""
        origin = camera.position
        faces = self.estimator.candidate_faces(camera, pose, layers)
        gaps, along_m, slid = self._ray_to_slid_faces(pose, faces, origin, ray)
        near = np.flatnonzero(gaps < PROTRUDING_RAY_M)
        if not len(near):
            return None
        found = marker_in_world(camera, sighting, self.model.marker_side)
        if found is None:
            return None, 0.0
        seen_m = float(np.linalg.norm(found[0] - origin))
        off = np.abs(np.log(seen_m / along_m[near]))
        if not np.any(off < abs(np.log(seen_m / table_m))):     # the size does not say the slot
            cannot_tell = np.any(np.abs(np.log(table_m / along_m[near])) < SIZE_CANNOT_TELL)
            return (None, 0.0) if cannot_tell else None
        best = near[int(np.argmin(off))]
        key = (int(faces.layer[best]), int(faces.slot[best]))
        return (None if key in full else key), float(faces.end[best] * slid[best])

    def _ray_to_slid_faces(self, pose: TowerPose, faces, origin: np.ndarray, ray: np.ndarray
                           ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """For each of `faces`, how close the ray from `origin` along `ray` (world) comes to its
        centre slid out by up to a block's length, how far along the ray that is, and how far
        the face is slid out there (m): the closest points of the ray and of the face's segment.
        A sticking-out block shows the camera the end face it shows flush."""
        o = pose.to_tower(origin[None, :])[0]
        r = pose.vector_to_tower(ray)
        r = r / np.linalg.norm(r)
        u = faces.outward
        w = o - faces.centre
        b = u @ r
        d, e = w @ r, np.einsum("ij,ij->i", u, w)
        denom = np.maximum(1.0 - b * b, 1e-9)
        s = np.clip((e - b * d) / denom, 0.0, self.model.length)
        t = np.maximum(s * b - d, 0.0)
        gaps = np.linalg.norm(w + t[:, None] * r - s[:, None] * u, axis=1)
        return gaps, t, s

    def _occupancy(self, images, fit: TowerFit, blocks: list[BlockObservation]):
        read = {(b.layer, b.slot) for b in blocks}
        top = max((layer for layer, _ in read), default=0)
        unread_slots = [(layer, slot) for layer in range(1, top + 1) for slot in SLOTS
                        if (layer, slot) not in read]
        full = {key: False for key in unread_slots}
        for name, image in images.items():
            looked = [key for key in unread_slots if not full[key]]
            for key in self._stickers_seen(image, self.cameras[name], fit.pose, top, looked):
                full[key] = True
        occupancy = {(layer, slot): (layer, slot) in read or full[layer, slot]
                     for layer in range(1, top + 1) for slot in SLOTS}
        return occupancy, [key for key in unread_slots if full[key]]

    def _stickers_seen(self, image, camera: CameraModel, pose: TowerPose, top: int,
                       slots: list[tuple[int, int]]) -> list[tuple[int, int]]:
        """Of `slots`, those where this camera sees a white sticker face at the slot's visible
        end, flush or pushed in (a tested block whose marker is too deep in its hole to be read)."""
        faces = self.estimator.candidate_faces(camera, pose, top)
        row_of = {(int(layer), int(slot)): i for i, (layer, slot) in enumerate(zip(faces.layer, faces.slot))}
        rows = [(key, row_of[key]) for key in slots if key in row_of]
        if not rows:
            return []
        index = np.array([i for _, i in rows])
        depths = np.array(RECESS_DEPTHS_M)
        # (slot, depth, corner, xyz): every quad this camera looks at, projected in one call.
        corners = faces.corners[index][:, None] - (faces.outward[index][:, None, None, :]
                                                   * depths[None, :, None, None])
        quads = np.round(camera.project(pose.to_world(corners.reshape(-1, 3)))).astype(np.int32)
        quads = quads.reshape(len(rows), len(depths), 4, 2)
        return [key for (key, _), at_depths in zip(rows, quads)
                if any(self._white(image, quad) for quad in at_depths)]

    @staticmethod
    def _white(image, quad: np.ndarray) -> bool:
        """Whether the image region of a marker's square (pixel quad) looks like a sticker
        (white and black)."""
        x0, y0 = np.maximum(quad.min(axis=0), 0)
        x1, y1 = np.minimum(quad.max(axis=0) + 1, [image.shape[1], image.shape[0]])
        if x1 <= x0 or y1 <= y0:
            return False
        mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(mask, quad - [x0, y0], 255)
        pixels = cv2.countNonZero(mask)
        if pixels < 20:
            return False
        window = image[y0:y1, x0:x1]
        white = cv2.countNonZero(cv2.inRange(window, (WHITE_LEVEL,) * 3, (255,) * 3) & mask)
        dark = cv2.countNonZero(cv2.inRange(window, (0,) * 3, (DARK_LEVEL,) * 3) & mask)
        return white >= OCCUPIED_WHITE_FRACTION * pixels and dark >= OCCUPIED_DARK_FRACTION * pixels
