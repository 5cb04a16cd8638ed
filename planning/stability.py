"""Will the tower stand? For every interface between two layers (and between layer 1 and the
table), the centre of mass of everything above must lie inside the support polygon: the convex hull
of the patches where blocks of the two layers touch. The margin of an interface is how far inside
(positive, mm) or outside (negative) the centre of mass is; the tower's margin is the smallest.

A layer left with only a side block supports the layers above on a strip 25 mm off centre, so the
centre of mass of a normal tower falls outside it: unstable, as it must be.

Pure geometry on the nominal block set, with optional per-block offsets along the blocks' axes
(protrusions, as perception measures them). No I/O.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from planning.game.tower import TowerState, layer_axis, slot_offset


@dataclass(frozen=True)
class BlockDims:
    length: float
    width: float
    height: float
    mass: float = 0.0       # kg; needed only for force limits
    side_gap: float = 0.0   # between neighbours in a layer (planning/game/geometry.py)

    @classmethod
    def of(cls, blocks) -> BlockDims:
        """The mean block of a cell's block set (`cell.blocks`)."""
        return cls(blocks.length.mean, blocks.width.mean, blocks.height.mean, blocks.mass.mean,
                   blocks.side_gap)


@dataclass(frozen=True)
class StabilityReport:
    margin_mm: float                 # the smallest margin over all interfaces
    weakest_interface: int           # the layer below the weakest interface (0: the table)
    margins_mm: dict[int, float]     # per interface

    @property
    def stands(self) -> bool:
        return self.margin_mm > 0.0


def block_centre(dims: BlockDims, layer: int, slot: int, offset: float = 0.0) -> np.ndarray:
    """Centre (x, y) in the tower frame of the block at (layer, slot), moved `offset` (m) along
    its axis."""
    across = slot_offset(slot, dims.width, dims.side_gap)
    if layer_axis(layer) == "x":
        return np.array([offset, across])
    return np.array([across, offset])


def _footprint(dims: BlockDims, layer: int, slot: int, offset: float) -> tuple[np.ndarray, np.ndarray]:
    """Axis-aligned (low, high) corners of a block's footprint in the tower frame."""
    c = block_centre(dims, layer, slot, offset)
    half = np.array([dims.length / 2, dims.width / 2]) if layer_axis(layer) == "x" \
        else np.array([dims.width / 2, dims.length / 2])
    return c - half, c + half


def analyse(tower: TowerState, dims: BlockDims,
            offsets: dict[tuple[int, int], float] | None = None) -> StabilityReport:
    """Margins of every interface of `tower` (blocks moved along their axes by `offsets`, m)."""
    layers = _by_layer(tower, offsets or {})
    margins = {interface: _hull_margin(com, hull) * 1000.0 if hull is not None else -np.inf
               for interface, hull, com, _ in _supports(dims, layers, tower.top_layer)}
    # A block of the top layer carries nothing that would hold it down: it must balance on its
    # own, whatever the rest of its layer does (an overhanging top block tips off alone). Across
    # its width the layer below always spans it; along its axis its supports may not.
    top = tower.top_layer
    if top > 1:
        for b in layers.get(top, ()):
            margins[top - 1] = min(margins[top - 1],
                                   _own_margin_mm(dims, layers.get(top - 1, ()), (top, *b)))
    weakest = min(margins, key=margins.get)
    return StabilityReport(float(margins[weakest]), weakest, margins)


def _by_layer(tower: TowerState, offsets: dict) -> dict[int, tuple[tuple[int, float], ...]]:
    """Each layer's blocks as (slot, offset) pairs, in slot order: a layer's key for the caches."""
    layers: dict[int, list[tuple[int, float]]] = {}
    for layer, slot in tower.blocks():
        layers.setdefault(layer, []).append((slot, float(offsets.get((layer, slot), 0.0))))
    return {layer: tuple(sorted(found)) for layer, found in layers.items()}


def _supports(dims: BlockDims, layers: dict, below_layer: int):
    """For each interface under `below_layer` that carries something, bottom up: the interface,
    its support's hull (None when nothing rests on it), and the centre of mass (x, y) and count of
    the blocks above it."""
    for interface, com, count in _coms_above(dims, layers, below_layer):
        hull = _interface_hull(dims, interface, layers.get(interface, ()),
                               layers.get(interface + 1, ()))
        yield interface, hull, com, count


def _coms_above(dims: BlockDims, layers: dict, below_layer: int):
    """For each interface under `below_layer` (0: the table) that carries something, bottom up:
    the interface, the centre of mass (x, y) of every block above it and their count."""
    top = max(layers, default=0)
    sums = np.zeros((max(top, below_layer) + 2, 2))
    counts = np.zeros(len(sums), dtype=int)
    for layer in range(top, 0, -1):       # sums over the layers from `layer` up
        sums[layer] = sums[layer + 1] + sum((block_centre(dims, layer, slot, offset)
                                             for slot, offset in layers.get(layer, ())),
                                            np.zeros(2))
        counts[layer] = counts[layer + 1] + len(layers.get(layer, ()))
    for interface in range(0, below_layer):
        if counts[interface + 1]:
            yield interface, sums[interface + 1] / counts[interface + 1], int(counts[interface + 1])


def _own_margin_mm(dims: BlockDims, below: tuple, block) -> float:
    """A top block's own balance (mm) on the layer `below` it ((slot, offset) pairs): how far
    outside its supports its centre lies (negative), or else how far inside their extent along
    its axis. (Across its width the margin is at most half a block for every top block, and
    would hide the tower's margin that ranking needs.)"""
    layer, slot, offset = block
    hull = _interface_hull(dims, layer - 1, below, ((slot, offset),))
    if hull is None:
        return -np.inf
    centre = block_centre(dims, *block)
    outside = _hull_margin(centre, hull)
    if outside <= 0:
        return outside * 1000.0
    k = 0 if layer_axis(layer) == "x" else 1
    return float(min(centre[k] - hull[:, k].min(), hull[:, k].max() - centre[k])) * 1000.0


@functools.lru_cache(maxsize=4096)
def _interface_hull(dims: BlockDims, interface: int, lower: tuple, upper: tuple
                    ) -> np.ndarray | None:
    """The convex hull (counter-clockwise corners) of the patches where the blocks `lower` of
    layer `interface` meet the blocks `upper` of the layer above ((slot, offset) pairs; the table
    under layer 1), or None where they do not touch. Cached: a tower's interfaces repeat from one
    candidate move to the next."""
    blocks = [(interface, *b) for b in lower] + [(interface + 1, *b) for b in upper]
    patches = _contact_patches(dims, blocks, interface)
    if not patches:
        return None
    hull = _convex_hull(np.concatenate(patches))
    hull.flags.writeable = False        # shared by every caller of the cache
    return hull


def _contact_patches(dims: BlockDims, blocks, interface: int) -> list[np.ndarray]:
    """Corner points of every patch where layer `interface` meets layer `interface + 1`
    (the table counts as one big support under layer 1)."""
    upper = [b for b in blocks if b[0] == interface + 1]
    if interface == 0:
        return [_corners(*_footprint(dims, *b)) for b in upper]
    lower = [b for b in blocks if b[0] == interface]
    patches = []
    for u in upper:
        lo_u, hi_u = _footprint(dims, *u)
        for low in lower:
            lo_l, hi_l = _footprint(dims, *low)
            lo, hi = np.maximum(lo_u, lo_l), np.minimum(hi_u, hi_l)
            if np.all(hi > lo):
                patches.append(_corners(lo, hi))
    return patches


def _corners(lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    return np.array([[lo[0], lo[1]], [hi[0], lo[1]], [hi[0], hi[1]], [lo[0], hi[1]]])


def _hull_margin(point: np.ndarray, hull: np.ndarray) -> float:
    """Signed distance (m) from `point` to the boundary of the convex `hull` (counter-clockwise):
    positive inside."""
    if len(hull) < 3:
        # A degenerate support (a line): the point can at best sit on it.
        return -float(_distance_to_segment(point, hull[0], hull[-1]))
    a = hull
    edge = np.concatenate([hull[1:], hull[:1]]) - a
    rel = point - a
    cross = edge[:, 0] * rel[:, 1] - edge[:, 1] * rel[:, 0]
    # hull is counter-clockwise: negative means outside that edge
    t = np.clip(np.einsum("ij,ij->i", rel, edge) / np.einsum("ij,ij->i", edge, edge), 0.0, 1.0)
    nearest = float(np.min(np.linalg.norm(rel - t[:, None] * edge, axis=1)))
    return nearest if np.all(cross >= 0) else -nearest


def _distance_to_segment(p: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
    ab = b - a
    t = 0.0 if not np.any(ab) else float(np.clip((p - a) @ ab / (ab @ ab), 0.0, 1.0))
    return float(np.linalg.norm(p - (a + t * ab)))


def _convex_hull(points: np.ndarray) -> np.ndarray:
    """Andrew's monotone chain; counter-clockwise, no repeated end point."""
    pts = sorted({(round(float(x), 9), round(float(y), 9)) for x, y in points})
    if len(pts) <= 2:
        return np.array(pts)

    def half(seq):
        out = []
        for p in seq:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (p[1] - out[-2][1])
                                     - (out[-1][1] - out[-2][1]) * (p[0] - out[-2][0])) <= 0:
                out.pop()
            out.append(p)
        return out
    lower, upper = half(pts), half(reversed(pts))
    return np.array(lower[:-1] + upper[:-1])


def removal_margin(tower: TowerState, dims: BlockDims, source: tuple[int, int],
                   target: tuple[int, int] | None = None,
                   offsets: dict[tuple[int, int], float] | None = None) -> float:
    """The smallest margin (mm) of the tower with `source` taken out, and also with it placed at
    `target` when given (the move is as safe as its weaker moment)."""
    offsets = {k: v for k, v in (offsets or {}).items() if k != source}
    try:
        without = tower.without(*source)
    except ValueError:
        return -np.inf
    margin = analyse(without, dims, offsets).margin_mm
    if target is not None:
        margin = min(margin, analyse(without.with_block(*target), dims, offsets).margin_mm)
    return margin


def push_limit_n(tower: TowerState, dims: BlockDims, source: tuple[int, int],
                 offsets: dict[tuple[int, int], float] | None = None, g: float = 9.81) -> float:
    """The largest force (N) a push along the block at `source` may take, either way along its
    axis, before the part of the tower above some interface below the block would tip over that
    interface's support edge. Worst case: the block holds fast and carries the push into the
    tower (a block that jams), so moments about the edge: force x its height above the interface
    against the weight above x the distance from its centre of mass to the edge along the push."""
    if dims.mass <= 0:
        raise ValueError("push limits need the blocks' mass")
    layer = source[0]
    along = np.array([1.0, 0.0]) if layer_axis(layer) == "x" else np.array([0.0, 1.0])
    push_z = (layer - 0.5) * dims.height
    limit = np.inf
    for interface, hull, com, weight in _loads_below(tower, dims, layer, offsets or {}, g):
        if hull is None:
            return 0.0
        lever = push_z - interface * dims.height
        for sign in (1.0, -1.0):
            limit = min(limit, weight * _reach(com, sign * along, hull) / lever)
    return float(limit)


def press_limit_n(tower: TowerState, dims: BlockDims, at: tuple[int, int], offset: float = 0.0,
                  offsets: dict[tuple[int, int], float] | None = None, g: float = 9.81) -> float:
    """The largest downward force (N) on the block at `at` (moved `offset` along its axis) before
    the part of the tower above some interface below it would tip over that interface's support
    edge: the weight above and the press act together at their weighted centre, which must stay
    inside the support. Infinite when the pressed point itself lies over every support. The block
    at `at` is added to `tower` if it is not there (a block being set down)."""
    if dims.mass <= 0:
        raise ValueError("press limits need the blocks' mass")
    if not tower.has_block(*at):
        tower = tower.with_block(*at)
    offsets = dict(offsets or {})
    offsets[at] = offset
    point = block_centre(dims, *at, offset)
    limit = np.inf
    for _, hull, com, weight in _loads_below(tower, dims, at[0], offsets, g):
        if hull is None:
            return 0.0
        if _hull_margin(point, hull) > 0:
            continue
        span = float(np.linalg.norm(point - com))
        reach = _reach(com, (point - com) / max(span, 1e-12), hull)
        # weighted centre c + F / (W + F) (p - c) reaches the edge when that share is reach / span
        share = min(reach / max(span, 1e-12), 1.0)
        limit = min(limit, weight * share / (1.0 - share) if share < 1.0 else np.inf)
    return float(limit)


def _loads_below(tower: TowerState, dims: BlockDims, layer: int, offsets: dict, g: float):
    """For each interface under `layer`, bottom up: the interface, the convex hull of its support
    (None when nothing of the tower above rests on it), and the centre of mass (x, y) and weight
    (N) of everything above it."""
    for interface, hull, com, count in _supports(dims, _by_layer(tower, offsets), layer):
        yield interface, hull, com, count * dims.mass * g


def _reach(point: np.ndarray, direction: np.ndarray, hull: np.ndarray) -> float:
    """How far (m) from `point` along `direction` the edge of the convex `hull` lies (0 when the
    point is outside or the hull is degenerate)."""
    if len(hull) < 3 or _hull_margin(point, hull) <= 0:
        return 0.0
    best = np.inf
    for a, b in zip(hull, np.roll(hull, -1, axis=0)):
        edge = b - a
        det = direction[0] * -edge[1] - direction[1] * -edge[0]
        if abs(det) < 1e-12:
            continue
        rhs = a - point
        t = (rhs[0] * -edge[1] - rhs[1] * -edge[0]) / det
        u = (direction[0] * rhs[1] - direction[1] * rhs[0]) / det
        if t >= 0 and -1e-9 <= u <= 1 + 1e-9:
            best = min(best, t)
    return float(best) if np.isfinite(best) else 0.0


def best_slot(tower: TowerState, dims: BlockDims, layer: int, slots: tuple[int, ...]) -> int:
    """Of the free `slots` of `layer`, the one that leaves the tower most stable."""
    if len(slots) == 1:
        return slots[0]
    scored = [(analyse(tower.with_block(layer, s), dims).margin_mm, -abs(s - 1), s) for s in slots]
    return max(scored)[2]

