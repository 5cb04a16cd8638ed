"""From marker sightings in both cameras to the tower as it stands: the tower's pose fitted from many
markers at once, then every block measured against it.

1. Each sighting is matched to the slot face whose marker it must be (nearest projected marker
   centre, given the current tower pose).
2. A marker seen by both cameras is triangulated (its four corners); one seen by one camera is
   placed where its ray meets the vertical plane through its block's axis.
3. The tower pose (position, yaw, layer pitch) is fitted to all face centres at once with a robust
   loss, so the few blocks that stick out do not pull it. Steps 1-3 repeat from the new pose;
   once the pose moves less than 0.1 mm the matches stand and only the measurements are taken
   again (a sighting within that of a gate keeps the face it had).
4. Every block is measured in the fitted tower frame: centre, yaw, and how far it sits along its
   own axis (its protrusion), in metres and degrees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from perception.camera_model import CameraModel
from perception.markers import MarkerSighting
from perception.tower_model import FaceTable, SlotFace, TowerModel, face_key, table_row
from planning.game.geometry import TowerPose

ASSIGN_GATE_PX = 9.0       # a sighting this near a slot's track is that slot's, nearest first
WIDE_GATE_PX = 20.0        # then leftovers this near a leftover slot's track
SLOT_GATE_M = 0.009        # a triangulated marker this near a slot face's centre (across, up)
TRACK_M = 0.012            # a block may sit this far either way along its axis and still be in its slot
# (further, and in the cameras' diagonal view its marker would fall on the next slot's track)
# A marker both cameras read (triangulated: no such ambiguity) may stand this far out of its face
# and still be its slot's: a block pushed from the front stands 20-30 mm out at the back, which
# the cameras see, and read as empty it was left out of the tower the arm keeps clear of.
OUT_M = 0.040
HUBER_M = 0.0005           # residuals beyond 0.5 mm count linearly: protruding blocks do not pull
FIT_ITERATIONS = 3


@dataclass(frozen=True)
class FaceMeasurement:
    face: SlotFace
    marker: int
    centre: np.ndarray          # world, m
    normal: np.ndarray | None   # world unit vector, when the marker's pose was measurable
    cameras: tuple[str, ...]
    sighting: MarkerSighting | None = None   # the one camera's sighting, for a one-camera face


@dataclass(frozen=True)
class BlockObservation:
    block: int                  # identity (from its marker)
    layer: int
    slot: int
    end: int                    # the end whose marker was read
    position: tuple[float, float, float]   # centre in the tower frame (m)
    yaw_deg: float              # turn about z away from the layer's axis
    protrusion: float           # centre along the layer's axis (m; +x for odd layers, +y for even)
    cameras: tuple[str, ...]


@dataclass
class TowerFit:
    pose: TowerPose
    tilt_deg: float
    measurements: list[FaceMeasurement] = field(default_factory=list)
    unassigned: list[tuple[str, MarkerSighting]] = field(default_factory=list)
    residual_mm: float = 0.0


class TowerEstimator:
    def __init__(self, model: TowerModel, cameras: list[CameraModel], max_layers: int = 60):
        self.model = model
        self.cameras = {c.name: c for c in cameras}
        self.max_layers = max_layers
        self._face_cache: dict[tuple, FaceTable] = {}
        # Where each marker lay across its slot's axis (m) in the last fit in which both cameras
        # read it: marker -> (layer, slot, offset). A marker one camera reads in that slot is
        # placed on the axis plane moved that far (see `_on_axis_planes`); read in another slot,
        # the block has moved and the entry goes.
        self.across_m: dict[int, tuple[int, int, float]] = {}

    def forget(self) -> None:
        """A new tower stands there: what was known of the old one's blocks no longer holds."""
        self.across_m.clear()

    # --- the whole fit ------------------------------------------------------------------------

    def fit(self, sightings: dict[str, list[MarkerSighting]], prior: TowerPose,
            layers: int | None = None) -> TowerFit:
        """Fit the tower to the sightings of every camera, starting from `prior`."""
        pose = prior
        top = layers or self.max_layers
        matched, unassigned = self._assign(sightings, pose, top)
        measurements = self._measure(matched, pose)
        for _ in range(FIT_ITERATIONS):
            if len(measurements) < 4:
                break
            fitted = self._fit_pose(measurements, pose)
            moved = np.abs(fitted.params - pose.params)
            pose = fitted
            # Once the pose stops moving (a tenth of a millimetre), the assignment is settled:
            # only the measurements, which depend on the pose, are taken again.
            if np.max(moved[[0, 1, 3]]) < 1e-4 and moved[2] < 1e-4:
                measurements = self._measure(matched, pose)
                break
            matched, unassigned = self._assign(sightings, pose, top)
            measurements = self._measure(matched, pose)
        residual = self._residual(measurements, pose)
        measurements = [self._with_normal(m) for m in measurements]
        if len(measurements) >= 4:         # a pose fitted to them, not the prior
            self._remember_across(measurements, pose)
        return TowerFit(pose, pose.tilt_deg, measurements, unassigned, residual * 1000)

    def _remember_across(self, measurements: list[FaceMeasurement], pose: TowerPose) -> None:
        for m, offset in zip(measurements, _offsets_across(measurements, pose)):
            slot = (m.face.layer, m.face.slot)
            if len(m.cameras) >= 2:
                self.across_m[m.marker] = (*slot, offset)
            elif m.marker in self.across_m and self.across_m[m.marker][:2] != slot:
                del self.across_m[m.marker]

    def _across(self, marker: int, face: SlotFace, layer_across: dict[int, float]) -> float:
        """Where a marker one camera reads lies across its slot's axis (m): where it lay when
        both cameras last read it in that slot, else where this layer's markers both cameras
        read lie on average (blocks of a layer lie off their slots' lines together, the top
        layers most: they were placed, not stacked at the start), else on the line."""
        layer, slot, offset = self.across_m.get(marker, (-1, -1, 0.0))
        if (layer, slot) == (face.layer, face.slot):
            return offset
        return layer_across.get(face.layer, 0.0)

    @staticmethod
    def _layer_across(measured: list[FaceMeasurement], pose: TowerPose) -> dict[int, float]:
        """Per layer, the mean offset across their slots' axes of the faces measured (m)."""
        by_layer: dict[int, list[float]] = {}
        for m, offset in zip(measured, _offsets_across(measured, pose)):
            by_layer.setdefault(m.face.layer, []).append(offset)
        return {layer: float(np.mean(v)) for layer, v in by_layer.items()}

    def blocks(self, fit: TowerFit) -> list[BlockObservation]:
        """Every measured block, in the fitted tower frame."""
        ms = fit.measurements
        if not ms:
            return []
        outward = np.array([m.face.axis * m.face.end for m in ms])
        axis = np.array([m.face.axis for m in ms])
        centres = fit.pose.to_tower(np.array([m.centre for m in ms])) - outward * (self.model.length / 2)
        along = np.einsum("ij,ij->i", centres, axis)
        # Yaw: the marker's normal turned about z away from the face's outward normal.
        normals = np.array([m.normal if m.normal is not None else np.zeros(3) for m in ms])
        n = fit.pose.vector_to_tower(normals)
        yaw = np.degrees(np.arctan2(outward[:, 0] * n[:, 1] - outward[:, 1] * n[:, 0],
                                    np.einsum("ij,ij->i", outward[:, :2], n[:, :2])))
        return [BlockObservation(m.marker // 2, m.face.layer, m.face.slot, m.face.end,
                                 tuple(float(v) for v in c), float(w) if m.normal is not None else 0.0,
                                 float(a), m.cameras)
                for m, c, w, a in zip(ms, centres, yaw, along)]

    # --- steps --------------------------------------------------------------------------------

    def candidate_faces(self, camera: CameraModel, pose: TowerPose, top: int) -> FaceTable:
        """Faces of layers 1..top whose outside this camera can see (remembered for the last
        few poses: a fit asks again and again)."""
        key = (camera.name, tuple(np.round(pose.params, 9)), top)
        faces = self._face_cache.get(key)
        if faces is None:
            eye = pose.to_tower(camera.position[None, :])[0]
            faces = self._all_faces(pose.pitch, top).visible_from(eye)
            if len(self._face_cache) > 16:
                self._face_cache.clear()
            self._face_cache[key] = faces
        return faces

    def _all_faces(self, pitch: float, top: int) -> FaceTable:
        key = ("all", round(pitch, 12), top)
        faces = self._face_cache.get(key)
        if faces is None:
            faces = self._face_cache[key] = self.model.face_table(range(1, top + 1), pitch)
        return faces

    def _assign(self, sightings, pose: TowerPose, top: int):
        """Match each sighting to the slot face whose marker it is.

        A marker both cameras read is triangulated and its slot read off its position in the
        tower frame (the cameras' diagonal view makes a block's slide along its axis look like a
        step to the next slot, so image positions alone are ambiguous). A marker one camera reads
        goes to the free face whose projected marker-centre track (the centre at every
        protrusion a block can have in its slot) passes nearest."""
        matched: dict[tuple, dict[str, MarkerSighting]] = {}
        faces_by_key: dict[tuple, SlotFace] = {}
        taken: set[tuple[int, int, int]] = set()
        names = sorted(sightings)
        by_marker: dict[int, dict[str, MarkerSighting]] = {}
        for name in names:
            for s in sightings[name]:
                by_marker.setdefault(s.marker, {})[name] = s
        pairs = [list(by_marker[m].items())[:2] for m in sorted(by_marker) if len(by_marker[m]) >= 2]
        centres = self._triangulate_pairs([(na, sa.centre, nb, sb.centre) for (na, sa), (nb, sb) in pairs])
        # A marker both cameras place far out along a slot's line is a block sticking out of it,
        # in no slot: one camera alone could give it to a face it hides (seen: a block 60 mm out
        # of layer 12 taken for layer 10's, whose marker it hid from the right camera).
        at, too_far = self._faces_and_too_far(centres, pose, top)
        far = {sa.marker for ((_, sa), _), is_far in zip(pairs, too_far) if is_far}
        for ((na, sa), (nb, sb)), face in zip(pairs, at):
            if face is None or (face.layer, face.slot, face.end) in taken:
                continue
            taken.add((face.layer, face.slot, face.end))
            key = (face.layer, face.slot, face.end, sa.marker)
            faces_by_key[key] = face
            matched[key] = {na: sa, nb: sb}
        done = {s.marker for v in matched.values() for s in v.values()} | far
        taken_keys = [face_key(*k) for k in taken]
        unassigned = [(name, s) for name in names for s in sightings[name] if s.marker in far]
        for name in names:
            seen = [s for s in sightings[name] if s.marker not in done]
            camera = self.cameras[name]
            faces = self.candidate_faces(camera, pose, top)
            faces = faces.take(~np.isin(faces.keys, taken_keys))
            if not len(faces) or not seen:
                unassigned += [(name, s) for s in seen]
                continue
            reach = faces.outward * TRACK_M
            a = camera.project(pose.to_world(faces.centre - reach))
            b = camera.project(pose.to_world(faces.centre + reach))
            ab = b - a
            length2 = np.maximum(np.sum(ab * ab, axis=1), 1e-9)
            # Distance of every sighting (rows) to every face's track (columns).
            points = np.array([s.centre for s in seen])
            t = np.clip(np.einsum("skj,kj->sk", points[:, None, :] - a, ab) / length2, 0.0, 1.0)
            d = np.linalg.norm(a + t[..., None] * ab - points[:, None, :], axis=2)
            # Nearest first, one marker per face and one face per marker; a second, wider round
            # gives leftover sightings to leftover faces (a block tilted on a partial top layer
            # sits further from its track than one in a full layer).
            ks, fs = np.nonzero(d <= WIDE_GATE_PX)
            near = d[ks, fs]
            order = np.lexsort((fs, ks, near, near > ASSIGN_GATE_PX))
            used_faces, used_marks = set(), set()
            for k, i in zip(ks[order].tolist(), fs[order].tolist()):
                if k in used_marks or i in used_faces:
                    continue
                used_marks.add(k)
                used_faces.add(i)
                face, s = faces.face(i), seen[k]
                key = (face.layer, face.slot, face.end, s.marker)
                faces_by_key[key] = face
                matched.setdefault(key, {})[name] = s
            unassigned += [(name, s) for k, s in enumerate(seen) if k not in used_marks]
        return self._consistent(matched, faces_by_key, unassigned)

    def _faces_at(self, centres: np.ndarray, pose: TowerPose, top: int) -> list[SlotFace | None]:
        """For each world point, the slot face whose marker sits there, if any is near enough."""
        return self._faces_and_too_far(centres, pose, top)[0]

    def _faces_and_too_far(self, centres: np.ndarray, pose: TowerPose, top: int
                           ) -> tuple[list[SlotFace | None], np.ndarray]:
        """For each world point, the slot face whose marker sits there, if any is near enough,
        and whether it lies on a slot face's line further out than OUT_M, within a block's
        length: a block sticking out too far to be read in its slot."""
        row, on_line, out = self._face_lines(centres, pose, top)
        ok = on_line & (out >= -TRACK_M) & (out <= OUT_M)
        table = self._all_faces(pose.pitch, top)
        faces = [table.face(int(r)) if good else None for r, good in zip(row, ok)]
        return faces, on_line & (out > OUT_M) & (out <= self.model.length)

    def _face_lines(self, centres: np.ndarray, pose: TowerPose, top: int):
        """For each world point: the row of the face table (layers 1..top) whose slot line it
        is nearest, whether it lies on that line (across and up), and how far out along it (m)."""
        if not len(centres):
            return np.zeros(0, int), np.zeros(0, bool), np.zeros(0)
        local = pose.to_tower(centres)
        geometry = self.model.geometry
        layer = np.rint((local[:, 2] - geometry.block_height / 2) / pose.pitch).astype(int) + 1
        odd = np.clip(layer, 1, None) % 2
        along = np.where(odd == 1, local[:, 0], local[:, 1])
        across = np.where(odd == 1, local[:, 1], local[:, 0])
        end = np.where(along > 0, 1, -1)
        slot = np.rint(across / geometry.slot_pitch).astype(int) + 1
        ok = (layer >= 1) & (layer <= top) & (slot >= 0) & (slot <= 2)
        table = self._all_faces(pose.pitch, top)
        row = np.where(ok, table_row(layer, slot, end), 0)
        d = local - table.centre[row]
        out = np.einsum("ij,ij->i", d, table.axis[row]) * end
        ok &= (np.abs(np.einsum("ij,ij->i", d, table.across[row])) <= SLOT_GATE_M) \
            & (np.abs(d[:, 2]) <= SLOT_GATE_M)
        return row, ok, out

    @staticmethod
    def _consistent(matched, faces_by_key, unassigned):
        """One face per marker and one marker per face across cameras: where cameras disagree,
        the pairing more cameras agree on wins; the others' sightings become unassigned."""
        ranked = sorted(matched.items(), key=lambda kv: -len(kv[1]))
        faces_taken, markers_taken, out = set(), set(), []
        for key, by_camera in ranked:
            face, marker = key[:3], key[3]
            if face in faces_taken or marker in markers_taken:
                unassigned += list(by_camera.items())
                continue
            faces_taken.add(face)
            markers_taken.add(marker)
            out.append((faces_by_key[key], marker, by_camera))
        return out, unassigned

    def _measure(self, matched, pose: TowerPose) -> list[FaceMeasurement]:
        both = [(face, marker, by_camera) for face, marker, by_camera in matched if len(by_camera) >= 2]
        corners = np.zeros((len(both), 4, 3))
        pairs: dict[tuple[str, str], list[int]] = {}
        for k, (_, _, by_camera) in enumerate(both):
            pairs.setdefault(tuple(sorted(by_camera)[:2]), []).append(k)
        for (na, nb), rows in pairs.items():
            pa = np.array([both[k][2][na].corners for k in rows]).reshape(-1, 2)
            pb = np.array([both[k][2][nb].corners for k in rows]).reshape(-1, 2)
            corners[rows] = _triangulate(self.cameras[na], self.cameras[nb], pa, pb).reshape(-1, 4, 3)
        normals = np.cross(corners[:, 2] - corners[:, 0], corners[:, 1] - corners[:, 3])
        normals /= np.linalg.norm(normals, axis=1, keepdims=True)
        centres = corners.mean(axis=1)
        out = [FaceMeasurement(face, marker, centre, normal, tuple(sorted(by_camera)))
               for (face, marker, by_camera), centre, normal in zip(both, centres, normals)]
        single = [(face, marker, *next(iter(by_camera.items())))
                  for face, marker, by_camera in matched if len(by_camera) == 1]
        on_planes: list = [None] * len(single)
        layer_across = self._layer_across(out, pose)
        for name in {row[2] for row in single}:
            rows = [k for k, row in enumerate(single) if row[2] == name]
            across = np.array([self._across(single[k][1], single[k][0], layer_across)
                               for k in rows])
            found = self._on_axis_planes(self.cameras[name], [single[k][0] for k in rows],
                                         [single[k][3] for k in rows], pose, across)
            for k, c in zip(rows, found):
                on_planes[k] = c
        out += [FaceMeasurement(face, marker, c, None, (name,), sighting)
                for (face, marker, name, sighting), c in zip(single, on_planes) if c is not None]
        return out

    def _with_normal(self, m: FaceMeasurement) -> FaceMeasurement:
        """A one-camera measurement with its marker's normal (from the marker's four corners: a
        solve per marker, so only once the fit is done)."""
        if m.normal is not None or m.sighting is None:
            return m
        found = marker_in_world(self.cameras[m.cameras[0]], m.sighting, self.model.marker_side)
        normal = None if found is None else found[1]
        return FaceMeasurement(m.face, m.marker, m.centre, normal, m.cameras, m.sighting)

    def _triangulate_pairs(self, requests) -> np.ndarray:
        """World points for (camera a, pixel in a, camera b, pixel in b) requests, batched by
        camera pair."""
        out = np.zeros((len(requests), 3))
        groups: dict[tuple[str, str], list[int]] = {}
        for i, (na, _, nb, _) in enumerate(requests):
            groups.setdefault((na, nb), []).append(i)
        for (na, nb), rows in groups.items():
            pa = np.array([requests[i][1] for i in rows], float)
            pb = np.array([requests[i][3] for i in rows], float)
            out[rows] = _triangulate(self.cameras[na], self.cameras[nb], pa, pb)
        return out

    @staticmethod
    def _on_axis_planes(camera: CameraModel, faces: list[SlotFace], sightings: list[MarkerSighting],
                        pose: TowerPose, across: np.ndarray | None = None) -> list:
        """Where the ray through each sighting's centre meets the vertical plane through its
        face's block axis, moved `across` (m) across it: where the marker lay when both cameras
        last read it (None where the ray runs along the plane). The cameras see the end faces
        obliquely, so a block lying beside its slot's line (shoved sideways, or turned) would
        otherwise read that far times 0.65-1.5 along its axis."""
        rays = camera.rays(np.array([s.centre for s in sightings]))
        origin = camera.position
        across = np.zeros(len(faces)) if across is None else across
        plane_point = pose.to_world(np.array([f.centre + f.across * a for f, a in zip(faces, across)]))
        plane_normal = pose.vector_to_world(np.array([f.across for f in faces]))
        denom = np.einsum("ij,ij->i", rays, plane_normal)
        t = np.einsum("ij,ij->i", plane_point - origin, plane_normal) / np.where(np.abs(denom) < 1e-6, 1.0, denom)
        return [None if abs(dn) < 1e-6 else origin + tk * ray for dn, tk, ray in zip(denom, t, rays)]

    def _fit_pose(self, measurements: list[FaceMeasurement], pose: TowerPose) -> TowerPose:
        """Gauss-Newton on (x, y, yaw, pitch, lean) with a Huber loss on every face's offset from
        where the model puts it (across, height, along)."""
        data = self._arrays(measurements)
        params = pose.params
        # Lean needs height: with a short stack of measurements it stays where it is.
        free = np.ones(6, bool)
        if np.ptp(data["centres"][:, 2]) < 0.05:
            free[4:] = False
        for _ in range(10):
            r = self._residuals(data, params)
            J = self._jacobian(data, params)
            w = np.where(np.abs(r) <= HUBER_M, 1.0, HUBER_M / np.maximum(np.abs(r), 1e-12))
            A = J[:, free].T @ (w[:, None] * J[:, free])
            delta = np.zeros(6)
            delta[free] = np.linalg.lstsq(A, -J[:, free].T @ (w * r), rcond=None)[0]
            params = params + delta
            if np.max(np.abs(delta)) < 1e-8:
                break
        return TowerPose(*params)

    def _arrays(self, measurements: list[FaceMeasurement]) -> dict:
        """The measurements as arrays: each face's nominal centre without its height (which
        depends on the fitted pitch) and its layer."""
        faces = [m.face for m in measurements]
        return {
            "centres": np.array([m.centre for m in measurements]),
            "across": np.array([f.across for f in faces]),
            "axis": np.array([f.axis for f in faces]),
            "layer": np.array([f.layer for f in faces], float),
            "flat": np.array([f.centre * np.array([1.0, 1.0, 0.0]) for f in faces]),
        }

    def _residuals(self, data: dict, params: np.ndarray) -> np.ndarray:
        pose = TowerPose(*params)
        local = pose.to_tower(data["centres"])
        nominal = data["flat"].copy()
        nominal[:, 2] = (data["layer"] - 1) * pose.pitch + self.model.height / 2
        d = local - nominal
        return np.concatenate([np.sum(d * data["across"], axis=1), d[:, 2],
                               np.sum(d * data["axis"], axis=1)])

    @staticmethod
    def _jacobian(data: dict, params: np.ndarray) -> np.ndarray:
        """d residuals / d (x, y, yaw, pitch, lean_x, lean_y), rows as `_residuals` orders them."""
        x, y, yaw, _, _, _ = params
        c, s = np.cos(yaw), np.sin(yaw)
        dx, dy, z = data["centres"][:, 0] - x, data["centres"][:, 1] - y, data["centres"][:, 2]
        n = len(z)
        # d(offset from the model) / d(each parameter), (6, n, 3), in the tower frame.
        d = np.zeros((6, n, 3))
        d[0, :, 0], d[0, :, 1] = -c, s
        d[1, :, 0], d[1, :, 1] = -s, -c
        d[2, :, 0], d[2, :, 1] = -dx * s + dy * c, -dx * c - dy * s
        d[3, :, 2] = -(data["layer"] - 1)
        d[4, :, 0] = -z
        d[5, :, 1] = -z
        return np.concatenate([np.einsum("knj,nj->nk", d, data["across"]), d[:, :, 2].T,
                               np.einsum("knj,nj->nk", d, data["axis"])])

    def _residual(self, measurements, pose: TowerPose) -> float:
        if not measurements:
            return float("inf")
        return float(np.median(np.abs(self._residuals(self._arrays(measurements), pose.params))))


def _offsets_across(measurements: list[FaceMeasurement], pose: TowerPose) -> list[float]:
    """How far each measured face centre lies across its slot's axis from the slot's line (m),
    in the tower frame of `pose`."""
    if not measurements:
        return []
    centres = pose.to_tower(np.array([m.centre for m in measurements]))
    return [float((c - m.face.centre) @ m.face.across) for m, c in zip(measurements, centres)]


def _triangulate(a: CameraModel, b: CameraModel, pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """World points (N, 3) seen at pixels pa in camera a and pb in camera b."""
    Pa = a.K @ a.camera_from_world[:3]
    Pb = b.K @ b.camera_from_world[:3]
    ua = cv2.undistortPoints(pa.reshape(-1, 1, 2), a.K, a.dist, P=a.K).reshape(-1, 2)
    ub = cv2.undistortPoints(pb.reshape(-1, 1, 2), b.K, b.dist, P=b.K).reshape(-1, 2)
    X = cv2.triangulatePoints(Pa, Pb, ua.T, ub.T)
    return (X[:3] / X[3]).T


def marker_in_world(camera: CameraModel, sighting: MarkerSighting,
                    side: float) -> tuple[np.ndarray, np.ndarray] | None:
    """The marker's centre and outward normal in the world, from its four corners in one image
    (its distance from the camera comes from its known side: a few per cent off at 11-34 px)."""
    h = side / 2
    obj = np.array([[-h, h, 0], [h, h, 0], [h, -h, 0], [-h, -h, 0]], float)
    ok, rvec, tvec = cv2.solvePnP(obj, sighting.corners.reshape(-1, 1, 2), camera.K, camera.dist,
                                  flags=cv2.SOLVEPNP_IPPE_SQUARE)
    if not ok:
        return None
    R, _ = cv2.Rodrigues(rvec)
    to_world = camera.world_from_camera
    centre = to_world[:3, :3] @ tvec.ravel() + to_world[:3, 3]
    n = to_world[:3, :3] @ R[:, 2]      # marker z points out of the marker, toward the viewer
    return centre, n / np.linalg.norm(n)
