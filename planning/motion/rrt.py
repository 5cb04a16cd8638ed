"""Joint-space path search for transits: straight line if free, else RRT-Connect, then shortcuts.

Deterministic: the random stream is seeded from the endpoints, so the same request plans the same
path.
"""

from __future__ import annotations

import zlib
from typing import Callable

import numpy as np

# Which of N configurations (N, J) are free: (N,) booleans. Asked a path segment at a time, so
# the collision checker can work on many configurations in one go.
Free = Callable[[np.ndarray], np.ndarray]
CHUNK = 16      # configurations asked at once: most blocked segments are found in the first chunk


def segment_free(a: np.ndarray, b: np.ndarray, free: Free, resolution: float) -> bool:
    """Every configuration on the straight joint-space segment a-b, sampled so no joint moves more
    than `resolution` rad between checks, is free."""
    n = max(1, int(np.ceil(np.max(np.abs(b - a)) / resolution)))
    qs = a + (b - a) * (np.arange(1, n + 1) / n)[:, None]
    return all(bool(np.all(free(qs[i:i + CHUNK]))) for i in range(0, n, CHUNK))


def plan_path(start: np.ndarray, goal: np.ndarray, free: Free, q_min: np.ndarray,
              q_max: np.ndarray, resolution: float = 0.03, max_nodes: int = 3000,
              step: float = 0.3, salt: int = 0) -> list[np.ndarray] | None:
    """A list of joint waypoints from start to goal with free straight segments, or None.
    `salt` picks another random stream for the same request (a search that failed may succeed
    with another)."""
    if segment_free(start, goal, free, resolution):
        return [start, goal]
    seed = zlib.crc32(np.round(np.concatenate([start, goal]), 4).tobytes()) + salt
    rng = np.random.default_rng(seed)
    trees = ([start], [-1]), ([goal], [-1])
    for i in range(max_nodes):
        grow, other = (trees[0], trees[1]) if i % 2 == 0 else (trees[1], trees[0])
        sample = goal if rng.random() < 0.05 else rng.uniform(q_min, q_max)
        new = _extend(grow, sample, free, resolution, step)
        if new is None:
            continue
        # Greedily connect the other tree to the new node.
        while True:
            reached = _extend(other, grow[0][new], free, resolution, step)
            if reached is None:
                break
            if np.allclose(other[0][reached], grow[0][new]):
                a_path = _trace(grow, new)
                b_path = _trace(other, reached)
                path = (a_path[::-1] + b_path[1:]) if grow is trees[0] else (b_path[::-1] + a_path[1:])
                return shortcut(path, free, resolution, rng)
    return None


def _extend(tree, target, free, resolution, step):
    nodes, parents = tree
    dists = [np.max(np.abs(n - target)) for n in nodes]
    near = int(np.argmin(dists))
    direction = target - nodes[near]
    span = np.max(np.abs(direction))
    if span < 1e-9:
        return near
    new = nodes[near] + direction * min(1.0, step / span)
    if not segment_free(nodes[near], new, free, resolution):
        return None
    nodes.append(new)
    parents.append(near)
    return len(nodes) - 1


def _trace(tree, index):
    nodes, parents = tree
    path = []
    while index != -1:
        path.append(nodes[index])
        index = parents[index]
    return path  # from the node back to the root


def shortcut(path: list[np.ndarray], free: Free, resolution: float,
             rng: np.random.Generator, tries: int = 60) -> list[np.ndarray]:
    """Remove detours: join random pairs of waypoints directly when the segment is free."""
    path = list(path)
    for _ in range(tries):
        if len(path) <= 2:
            break
        i, j = sorted(rng.choice(len(path), size=2, replace=False))
        if j - i > 1 and segment_free(path[i], path[j], free, resolution):
            path = path[:i + 1] + path[j:]
    return path
