"""From marker sightings in both cameras to the tower as it stands: the tower's pose fitted from many
markers at once, then every block measured against it.

1. Each sighting is matched to the slot face whose marker it must be (nearest projected marker
   centre, given the current tower pose).
2. A marker seen by both cameras is triangulated (its four corners); one seen by one camera is
   placed where its ray meets the vertical plane through its block's axis.
3. The tower pose (position, yaw, layer pitch) is fitted to all face centres at once with a robust
   loss, so the few blocks that stick out do not pull it.
4. Every block is measured in the fitted tower frame: centre, yaw, and how far it sits along its
   own axis (its protrusion), in metres and degrees.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import cv2
import numpy as np

from perception.camera_model import CameraModel
from perception.markers import MarkerSighting
from perception.tower_model import SlotFace, TowerModel
from planning.game.geometry import TowerPose

ASSIGN_GATE_PX = 9.0       # a sighting this near a slot's track is that slot's, nearest first
WIDE_GATE_PX = 20.0        # then leftovers this near a leftover slot's track
SLOT_GATE_M = 0.009        # a triangulated marker this near a slot face's centre (across, up)
TRACK_M = 0.012            # a block may sit this far either way along its axis and still be in its slot
# (further, and in the cameras' diagonal view its marker would fall on the next slot's track)
HUBER_M = 0.0005           # residuals beyond 0.5 mm count linearly: protruding blocks do not pull
FIT_ITERATIONS = 3


@dataclass(frozen=True)
class FaceMeasurement:
    face: SlotFace
    marker: int
    centre: np.ndarray          # world, m
    normal: np.ndarray | None   # world unit vector, when the marker's pose was measurable
    cameras: tuple[str, ...]


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
        self._face_cache: dict[tuple, list[SlotFace]] = {}

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
            matched, unassigned = self._assign(sightings, pose, top)
            measurements = self._measure(matched, pose)
            # Once the pose stops moving (a tenth of a millimetre), the assignment is settled.
            if np.max(moved[[0, 1, 3]]) < 1e-4 and moved[2] < 1e-4:
                break
        residual = self._residual(measurements, pose)
        return TowerFit(pose, pose.tilt_deg, measurements, unassigned, residual * 1000)

    def blocks(self, fit: TowerFit) -> list[BlockObservation]:
        """Every measured block, in the fitted tower frame."""
        out = []
        half = self.model.length / 2
        for m in fit.measurements:
            face = m.face
            local = fit.pose.to_tower(m.centre[None, :])[0]
            normal = face.axis * face.end
            centre = local - normal * half
            along = float(centre @ face.axis)
            yaw = 0.0
            if m.normal is not None:
                n = fit.pose.vector_to_tower(m.normal)
                signed = np.arctan2(normal[0] * n[1] - normal[1] * n[0], normal[:2] @ n[:2])
                yaw = float(np.degrees(signed))
            out.append(BlockObservation(m.marker // 2, face.layer, face.slot, face.end,
                                        tuple(float(v) for v in centre), yaw, along,
                                        m.cameras))
        return out

    # --- steps --------------------------------------------------------------------------------

    def candidate_faces(self, camera: CameraModel, pose: TowerPose, top: int) -> list[SlotFace]:
        """Faces of layers 1..top whose outside this camera can see (remembered for the last
        few poses: a fit asks again and again)."""
        key = (camera.name, tuple(np.round(pose.params, 9)), top)
        faces = self._face_cache.get(key)
        if faces is None:
            eye = pose.to_tower(camera.position[None, :])[0]
            faces = [f for f in self.model.faces(range(1, top + 1), pose.pitch)
                     if (eye - f.centre) @ (f.axis * f.end) > 0]
            if len(self._face_cache) > 16:
                self._face_cache.clear()
            self._face_cache[key] = faces
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
        taken: set[tuple] = set()
        names = sorted(sightings)
        by_marker = [{n: s for n in names for s in sightings[n] if s.marker == m}
                     for m in sorted({s.marker for n in names for s in sightings[n]})]
        pairs = [list(seen.items())[:2] for seen in by_marker if len(seen) >= 2]
        centres = self._triangulate_pairs([(na, sa.centre, nb, sb.centre) for (na, sa), (nb, sb) in pairs])
        for ((na, sa), (nb, sb)), centre in zip(pairs, centres):
            seen = {na: sa, nb: sb}
            face = self._face_at(centre, pose, top)
            if face is None or (face.layer, face.slot, face.end) in taken:
                continue
            taken.add((face.layer, face.slot, face.end))
            key = (face.layer, face.slot, face.end, sa.marker)
            faces_by_key[key] = face
            matched[key] = dict(seen)
        done = {s.marker for v in matched.values() for s in v.values()}
        unassigned = []
        for name in names:
            seen = [s for s in sightings[name] if s.marker not in done]
            camera = self.cameras[name]
            faces = [f for f in self.candidate_faces(camera, pose, top)
                     if (f.layer, f.slot, f.end) not in taken]
            if not faces or not seen:
                unassigned += [(name, s) for s in seen]
                continue
            centres = np.array([f.centre for f in faces])
            reach = np.array([f.axis * f.end for f in faces]) * TRACK_M
            a = camera.project(pose.to_world(centres - reach))
            b = camera.project(pose.to_world(centres + reach))
            ab = b - a
            length2 = np.maximum(np.sum(ab * ab, axis=1), 1e-9)
            # Nearest first, one marker per face and one face per marker; a second, wider round
            # gives leftover sightings to leftover faces (a block tilted on a partial top layer
            # sits further from its track than one in a full layer).
            pairs = []
            for k, s in enumerate(seen):
                t = np.clip(np.sum((s.centre - a) * ab, axis=1) / length2, 0.0, 1.0)
                d = np.linalg.norm(a + t[:, None] * ab - s.centre, axis=1)
                for i in np.flatnonzero(d <= WIDE_GATE_PX):
                    pairs.append((0 if d[i] <= ASSIGN_GATE_PX else 1, float(d[i]), k, int(i)))
            used_faces, used_marks = set(), set()
            for _, _, k, i in sorted(pairs):
                if k in used_marks or i in used_faces:
                    continue
                used_marks.add(k)
                used_faces.add(i)
                face, s = faces[i], seen[k]
                key = (face.layer, face.slot, face.end, s.marker)
                faces_by_key[key] = face
                matched.setdefault(key, {})[name] = s
            unassigned += [(name, s) for k, s in enumerate(seen) if k not in used_marks]
        return self._consistent(matched, faces_by_key, unassigned)

    def _face_at(self, centre: np.ndarray, pose: TowerPose, top: int) -> SlotFace | None:
        """The slot face whose marker sits at `centre` (world), if any is near enough."""
        local = pose.to_tower(centre[None, :])[0]
        geometry = self.model.geometry
        layer = geometry.layer_at(local[2], pose.pitch)
        if not 1 <= layer <= top:
            return None
        axis, across = self.model.axis(layer), self.model.across(layer)
        along = float(local @ axis)
        end = 1 if along > 0 else -1
        slot = geometry.slot_at(local, layer)
        if slot not in (0, 1, 2):
            return None
        face = self.model.face(layer, slot, end, pose.pitch)
        d = local - face.centre
        if abs(d @ across) > SLOT_GATE_M or abs(d[2]) > SLOT_GATE_M or abs(d @ axis) > TRACK_M:
            return None
        return face

    @staticmethod
    def _consistent(matched, faces_by_key, unassigned):
        """One face per marker and one marker per face across cameras: where cameras disagree,
        the pairing more cameras agree on wins; the others' sightings become unassigned."""
        ranked = sorted(matched.items(), key=lambda kv: -len(kv[1]))
        faces_taken, markers_taken, out = set(), set(), []
        for key, by_camera in ranked:
            face_key, marker = key[:3], key[3]
            if face_key in faces_taken or marker in markers_taken:
                unassigned += list(by_camera.items())
                continue
            faces_taken.add(face_key)
            markers_taken.add(marker)
            out.append((faces_by_key[key], marker, by_camera))
        return out, unassigned

    def _measure(self, matched, pose: TowerPose) -> list[FaceMeasurement]:
        both = [(face, marker, by_camera) for face, marker, by_camera in matched if len(by_camera) >= 2]
        requests = []
        for face, marker, by_camera in both:
            na, nb = sorted(by_camera)[:2]
            for k in range(4):
                requests.append((na, by_camera[na].corners[k], nb, by_camera[nb].corners[k]))
        corners = self._triangulate_pairs(requests).reshape(-1, 4, 3) if requests else []
        out = []
        for (face, marker, by_camera), c in zip(both, corners):
            normal = np.cross(c[2] - c[0], c[1] - c[3])
            out.append(FaceMeasurement(face, marker, c.mean(axis=0), normal / np.linalg.norm(normal),
                                       tuple(sorted(by_camera))))
        for face, marker, by_camera in matched:
            if len(by_camera) >= 2:
                continue
            name = next(iter(by_camera))
            camera, sighting = self.cameras[name], by_camera[name]
            centre = self._on_axis_plane(camera, sighting.centre, face, pose)
            if centre is None:
                continue
            out.append(FaceMeasurement(face, marker, centre,
                                       _marker_normal(camera, sighting, self.model.marker_side), (name,)))
        return out

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

    def _on_axis_plane(self, camera: CameraModel, pixel: np.ndarray, face: SlotFace, pose: TowerPose):
        """Where the ray through `pixel` meets the vertical plane through the face's block axis."""
        ray = camera.rays(pixel[None, :])[0]
        origin = camera.position
        plane_point = pose.to_world(face.centre[None, :])[0]
        plane_normal = pose.vector_to_world(face.across)
        denom = ray @ plane_normal
        if abs(denom) < 1e-6:
            return None
        t = ((plane_point - origin) @ plane_normal) / denom
        return origin + t * ray

    def _fit_pose(self, measurements: list[FaceMeasurement], pose: TowerPose) -> TowerPose:
        """Gauss-Newton on (x, y, yaw, pitch, lean) with a Huber loss on every face's offset from
        where the model puts it (across, height, along)."""
        data = self._arrays(measurements)
        params = pose.params
        steps = np.array([1e-5, 1e-5, 1e-5, 1e-6, 1e-5, 1e-5])
        # Lean needs height: with a short stack of measurements it stays where it is.
        free = np.ones(6, bool)
        if np.ptp(data["centres"][:, 2]) < 0.05:
            free[4:] = False
        for _ in range(10):
            r = self._residuals(data, params)
            J = np.zeros((len(r), 6))
            for k in np.flatnonzero(free):
                shifted = params.copy()
                shifted[k] += steps[k]
                J[:, k] = (self._residuals(data, shifted) - r) / steps[k]
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

    def _residual(self, measurements, pose: TowerPose) -> float:
        if not measurements:
            return float("inf")
        return float(np.median(np.abs(self._residuals(self._arrays(measurements), pose.params))))


def _triangulate(a: CameraModel, b: CameraModel, pa: np.ndarray, pb: np.ndarray) -> np.ndarray:
    """World points (N, 3) seen at pixels pa in camera a and pb in camera b."""
    Pa = a.K @ a.camera_from_world[:3]
    Pb = b.K @ b.camera_from_world[:3]
    ua = cv2.undistortPoints(pa.reshape(-1, 1, 2), a.K, a.dist, P=a.K).reshape(-1, 2)
    ub = cv2.undistortPoints(pb.reshape(-1, 1, 2), b.K, b.dist, P=b.K).reshape(-1, 2)
    X = cv2.triangulatePoints(Pa, Pb, ua.T, ub.T)
    return (X[:3] / X[3]).T


def _marker_normal(camera: CameraModel, sighting: MarkerSighting, side: float) -> np.ndarray | None:
    """The marker's outward normal in the world, from its four corners in one image."""
    h = side / 2
    obj = np.array([[-h, h, 0], [h, h, 0], [h, -h, 0], [-h, -h, 0]], float)
    ok, rvec, _ = cv2.solvePnP(obj, sighting.corners.reshape(-1, 1, 2), camera.K, camera.dist,
                               flags=cv2.SOLVEPNP_IPPE_SQUARE)
    if not ok:
        return None
    R, _ = cv2.Rodrigues(rvec)
    n_cam = R[:, 2]                     # marker z points out of the marker, toward the viewer
    n = camera.world_from_camera[:3, :3] @ n_cam
    return n / np.linalg.norm(n)

