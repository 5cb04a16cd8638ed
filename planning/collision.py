"""Collision checks between the arm (capsules) and the cell: the tower's keep-out box, the table,
the players' side beyond the light curtain, and the arm itself (the tool and a held block against
the upper arm and forearm).

Pure geometry, no physics. Clearances are in metres; negative means penetration.
"""

from __future__ import annotations

import functools

from dataclasses import dataclass

import numpy as np

from planning.kinematics import ArmModel, HeldBlock
from planning.game.geometry import TowerGeometry

# The base link stands on the table; every other part must stay above it by this much. The thin
# parts that work at layer 1 (fingertip rod, fingers, a held block) get a smaller margin.
TABLE_MARGIN = 0.01
TABLE_MARGIN_FINE = 0.002
FINE_PARTS = ("probe", "fingers", "held")
# The tool and a held block must stay this far from the big links: a held block sticks 60 mm out
# of the fingers, and a transit that folded the wrist swung one into the forearm (simulated cell),
# knocking it out of the grip. The tool's capsules and the links' already stand 5-10 mm proud of
# the parts, and pushes at the back of layer 3 need the tool that close to the forearm; the held
# block's margin covers its corners, which reach 7 mm beyond its capsule (the capsule's radius is
# half the block's thickness).
SELF_MARGIN = 0.0
HELD_SELF_MARGIN = 0.008
TOOL_PARTS = ("body", "fingers", "probe", "held")
# A block sticking out of its slot further than this is an obstacle of its own beyond the tower's
# box: a block let go 30 mm out at the front was not, and the next move's pull met it and stopped
# the arm on a 200 N OVERLOAD fault (make play seed 1). Less than this is within the margins.
STICKING_OUT_M = 0.004
BIG_LINKS = ("base", "link2", "link3")


def point_box_distance(points: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Euclidean distance from each point (N, 3) to an axis-aligned box (0 inside)."""
    outside = np.maximum(low - points, 0.0) + np.maximum(points - high, 0.0)
    return np.linalg.norm(outside, axis=1)


def segment_box_distance(start: np.ndarray, end: np.ndarray, low: np.ndarray,
                         high: np.ndarray, step: float = 0.005) -> float:
    """Lower bound of the distance from a segment to a box: sampled every `step`, and since the
    distance changes at most as fast as the sample moves, `step / 2` below the sampled minimum."""
    length = float(np.linalg.norm(end - start))
    n = max(2, int(np.ceil(length / step)) + 1)
    ts = np.linspace(0.0, 1.0, n)[:, None]
    d = point_box_distance(start + ts * (end - start), low, high)
    return float(d.min()) - length / (n - 1) / 2.0


def segments_box_distance(starts: np.ndarray, ends: np.ndarray, low: np.ndarray,
                          high: np.ndarray, step: float = 0.005,
                          at_least: np.ndarray | None = None) -> np.ndarray:
    """`segment_box_distance` for K segments (K, 3), or for N sets of K (N, K, 3): each set is
    sampled as finely as its own longest segment asks, so a set's figures do not depend on the
    sets asked about with it. Segments whose figure could not be below `at_least` (same shape
    as the answer) get a lower bound instead (from the segment's bounding box), without
    sampling: far from the box, only "far enough" matters."""
    if starts.ndim == 2:
        return segments_box_distance(starts[None], ends[None], low, high, step,
                                     None if at_least is None else at_least[None])[0]
    lengths = np.linalg.norm(ends - starts, axis=2)                       # (N, K)
    samples = np.maximum(2, np.ceil(lengths.max(axis=1) / step).astype(int) + 1)
    half_step = lengths / (samples[:, None] - 1) / 2.0
    # every sample lies in the segment's bounding box, so none is nearer the box than it is
    lows = np.minimum(starts, ends)
    out = point_box_distance(lows.reshape(-1, 3), (low - (np.maximum(starts, ends) - lows))
                             .reshape(-1, 3), high).reshape(lengths.shape) - half_step
    near = np.ones(lengths.shape, bool) if at_least is None else out < at_least
    for n in np.unique(samples[near.any(axis=1)]):
        rows = near & (samples == n)[:, None]
        s, e = starts[rows], ends[rows]
        ts = np.linspace(0.0, 1.0, n)
        points = s[:, None, :] + ts[None, :, None] * (e - s)[:, None, :]
        d = point_box_distance(points.reshape(-1, 3), low, high).reshape(len(s), n)
        out[rows] = d.min(axis=1) - half_step[rows]
    return out


def segments_distance(p0: np.ndarray, p1: np.ndarray, q0: np.ndarray, q1: np.ndarray) -> np.ndarray:
    """Closest distance between segments p0-p1 and q0-q1, row by row ((K, 3) each)."""
    d1, d2, r = p1 - p0, q1 - q0, p0 - q0
    a = np.maximum(np.einsum("ij,ij->i", d1, d1), 1e-12)
    e = np.maximum(np.einsum("ij,ij->i", d2, d2), 1e-12)
    b = np.einsum("ij,ij->i", d1, d2)
    c = np.einsum("ij,ij->i", d1, r)
    f = np.einsum("ij,ij->i", d2, r)
    denom = a * e - b * b
    # closest point of the infinite lines, clamped to the first segment (any point if parallel)
    s = np.where(denom > 1e-12, np.clip((b * f - c * e) / np.where(denom > 1e-12, denom, 1.0), 0, 1),
                 0.0)
    t = (b * s + f) / e
    # clamped on the second segment, the first point is recomputed for the clamped end
    low, high = t < 0.0, t > 1.0
    s = np.where(low, np.clip(-c / a, 0, 1), np.where(high, np.clip((b - c) / a, 0, 1), s))
    t = np.clip(t, 0.0, 1.0)
    # a segment that is a point: the other's closest point to it
    point_q = e <= 1e-12
    s = np.where(point_q, np.clip(-c / a, 0, 1), s)
    t = np.where(point_q, 0.0, t)
    point_p = a <= 1e-12
    s = np.where(point_p, 0.0, s)
    t = np.where(point_p, np.clip(f / e, 0, 1), t)
    gap = (p0 + d1 * s[:, None]) - (q0 + d2 * t[:, None])
    distance = np.linalg.norm(gap, axis=1)
    # (Nearly) parallel segments come closest at an end of one of them: the line solution above
    # took the first one's start, which is off by up to the length times the angle.
    parallel = (denom <= 1e-12) & ~point_p & ~point_q
    if parallel.any():
        i = parallel
        ends = [_to_segment(p0[i], q0[i], d2[i], e[i]), _to_segment(p1[i], q0[i], d2[i], e[i]),
                _to_segment(q0[i], p0[i], d1[i], a[i]), _to_segment(q1[i], p0[i], d1[i], a[i])]
        distance[i] = np.minimum(distance[i], np.min(ends, axis=0))
    return distance


def _to_segment(point: np.ndarray, start: np.ndarray, direction: np.ndarray, length_sq: np.ndarray
                ) -> np.ndarray:
    """Distance from each point to its segment start + [0, 1] direction, row by row."""
    u = np.clip(np.einsum("ij,ij->i", point - start, direction) / length_sq, 0.0, 1.0)
    return np.linalg.norm(point - (start + direction * u[:, None]), axis=1)


@dataclass(frozen=True)
class Contact:
    part: str         # capsule name ("link3", "body", "probe", ...)
    obstacle: str     # "tower", "table", "curtain" or a big link of the arm ("link3", ...)
    clearance: float  # m, negative = penetration


class CollisionChecker:
    """Checks arm configurations against a tower of a given height and the table."""

    def __init__(self, arm: ArmModel, tower: TowerGeometry,
                 sticking_out: dict[tuple[int, int], float] | None = None):
        """`sticking_out`: how far blocks stand out of their slots along their layer's axis (m,
        toward the +1 end), as last seen; those out by STICKING_OUT_M or more are obstacles too."""
        self.arm, self.tower = arm, tower
        self.sticking_out = {k: v for k, v in (sticking_out or {}).items()
                             if abs(v) >= STICKING_OUT_M}
        self._out_boxes = [tower.sticking_out_box(*k, v)
                           for k, v in sorted(self.sticking_out.items())]

    def contacts(self, q: np.ndarray, tower_layers: float, tower_margin: float,
                 exempt: tuple[str, ...] = (), held: HeldBlock | None = None,
                 fine_margin: float | None = None, table_margin: float | None = None
                 ) -> list[Contact]:
        """Every capsule closer than `tower_margin` to the tower box (`fine_margin` for the thin
        parts, when given), or than its table margin to the table, or than the curtain's keep-out
        to its plane, and every tool part too close to a big link of the arm. Parts named in
        `exempt` may touch the tower (the probe while it pushes, a block while it is pulled or
        set down). `table_margin`: every part but the base at least this far from the table."""
        caps = self.arm.link_capsules_many(np.asarray(q, float)[None, :], held)
        clearance, required, labels = self._clearances(caps, tower_layers, tower_margin, exempt,
                                                       fine_margin, table_margin)
        return [Contact(*labels[i], float(clearance[0, i]))
                for i in np.flatnonzero(clearance[0] < required)]

    def is_clear(self, q: np.ndarray, tower_layers: float, tower_margin: float,
                 exempt: tuple[str, ...] = (), held: HeldBlock | None = None,
                 fine_margin: float | None = None, table_margin: float | None = None) -> bool:
        return bool(self.clear_many(np.asarray(q, float)[None, :], tower_layers, tower_margin,
                                    exempt, held, fine_margin, table_margin)[0])

    def clear_many(self, qs: np.ndarray, tower_layers: float, tower_margin: float,
                   exempt: tuple[str, ...] = (), held: HeldBlock | None = None,
                   fine_margin: float | None = None, table_margin: float | None = None
                   ) -> np.ndarray:
        """`is_clear` for N configurations (N, J) at once: (N,) booleans."""
        caps = self.arm.link_capsules_many(qs, held)
        clearance, required, _ = self._clearances(caps, tower_layers, tower_margin, exempt,
                                                  fine_margin, table_margin)
        return np.all(clearance >= required, axis=1)

    def _clearances(self, caps, tower_layers, tower_margin, exempt, fine_margin,
                    table_margin=None):
        """Every check of N configurations: clearances (N, C), what each must keep (C,) and
        what each is between ((part, obstacle), C of them). Checks: capsules against the tower,
        the table and the curtain's plane; tool parts against the big links."""
        names, radii = caps.names, caps.radii
        n = caps.starts.shape[0]
        fine = np.array([name in FINE_PARTS for name in names])
        checked = np.array([name not in exempt for name in names])
        low, high = self.tower.box(tower_layers)
        starts = self.tower.to_tower(caps.starts[:, checked].reshape(-1, 3)).reshape(n, -1, 3)
        ends = self.tower.to_tower(caps.ends[:, checked].reshape(-1, 3)).reshape(n, -1, 3)
        tower_required = np.where(fine[checked] & (fine_margin is not None),
                                  fine_margin if fine_margin is not None else 0.0, tower_margin)
        at_least = np.broadcast_to(tower_required + radii[checked], starts.shape[:2])
        tower = segments_box_distance(starts, ends, low, high, at_least=at_least)
        for out_low, out_high in self._out_boxes:     # blocks sticking out are the tower too
            tower = np.minimum(tower, segments_box_distance(starts, ends, out_low, out_high,
                                                            at_least=np.minimum(at_least, tower)))
        tower = tower - radii[checked]
        labels = [(name, "tower") for name, c in zip(names, checked) if c]
        table = np.minimum(caps.starts[..., 2], caps.ends[..., 2]) - radii
        table_required = np.where(fine, TABLE_MARGIN_FINE, TABLE_MARGIN)
        if table_margin is not None:
            table_required = np.maximum(table_required, table_margin)
        table_required = np.where(np.array(names) == "base", -np.inf, table_required)
        labels += [(name, "table") for name in names]
        columns, required = [tower, table], [tower_required, table_required]
        curtain = self.arm.cell.curtain
        if curtain is not None:
            normal, offset = curtain.plane()
            near = np.minimum(caps.starts[..., :2] @ normal, caps.ends[..., :2] @ normal)
            columns.append(near - offset - radii)
            required.append(np.full(len(names), curtain.keep_out))
            labels += [(name, "curtain") for name in names]
        a, b, margin = _self_pairs(tuple(names))
        pair = (segments_distance(caps.starts[:, a].reshape(-1, 3), caps.ends[:, a].reshape(-1, 3),
                                  caps.starts[:, b].reshape(-1, 3), caps.ends[:, b].reshape(-1, 3))
                .reshape(n, -1) - radii[a] - radii[b])
        columns.append(pair)
        required.append(margin)
        labels += [(names[i], names[j]) for i, j in zip(a, b)]
        return np.concatenate(columns, axis=1), np.concatenate(required), labels


@functools.lru_cache(maxsize=8)
def _self_pairs(names: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Index pairs (tool part, big link) of a capsule list, and each pair's margin: the same few
    name lists come back at every configuration checked."""
    tool = [i for i, n in enumerate(names) if n in TOOL_PARTS]
    links = [i for i, n in enumerate(names) if n in BIG_LINKS]
    a, b = np.repeat(tool, len(links)), np.tile(links, len(tool))
    margin = np.where(np.array(names)[a] == "held", HELD_SELF_MARGIN, SELF_MARGIN)
    return a, b, margin


def describe(contacts: list[Contact]) -> str:
    worst = min(contacts, key=lambda c: c.clearance)
    return (f"{worst.part} within {worst.clearance * 1000:.0f} mm of the {worst.obstacle}"
            if worst.clearance >= 0 else
            f"{worst.part} {-worst.clearance * 1000:.0f} mm into the {worst.obstacle}")


