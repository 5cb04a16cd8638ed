"""Collision checks between the arm (capsules) and the cell: the tower's keep-out box and the table.

Pure geometry, no physics. Clearances are in metres; negative means penetration.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planning.kinematics import ArmModel, HeldBlock
from planning.workspace import TowerGeometry

# The base link stands on the table; every other part must stay above it by this much. The thin
# parts that work at layer 1 (fingertip rod, fingers, a held block) get a smaller margin.
TABLE_MARGIN = 0.01
TABLE_MARGIN_FINE = 0.002
FINE_PARTS = ("probe", "fingers", "held")


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


@dataclass(frozen=True)
class Contact:
    part: str         # capsule name ("link3", "body", "probe", ...)
    obstacle: str     # "tower" or "table"
    clearance: float  # m, negative = penetration


class CollisionChecker:
    """Checks arm configurations against a tower of a given height and the table."""

    def __init__(self, arm: ArmModel, tower: TowerGeometry):
        self.arm, self.tower = arm, tower

    def contacts(self, q: np.ndarray, tower_layers: float, tower_margin: float,
                 exempt: tuple[str, ...] = (), held: HeldBlock | None = None,
                 fine_margin: float | None = None) -> list[Contact]:
        """Every capsule closer than `tower_margin` to the tower box (`fine_margin` for the thin
        parts, when given), or than its table margin to the table. Parts named in `exempt` may
        touch the tower (the probe while it pushes, a block while it is pulled or set down)."""
        low, high = self.tower.box(tower_layers)
        found = []
        for cap in self.arm.link_capsules(q, held):
            if cap.name not in exempt:
                s, e = self.tower.to_tower(np.vstack([cap.start, cap.end]))
                clearance = segment_box_distance(s, e, low, high) - cap.radius
                margin = fine_margin if fine_margin is not None and cap.name in FINE_PARTS \
                    else tower_margin
                if clearance < margin:
                    found.append(Contact(cap.name, "tower", clearance))
            if cap.name != "base":
                clearance = min(cap.start[2], cap.end[2]) - cap.radius
                if clearance < (TABLE_MARGIN_FINE if cap.name in FINE_PARTS else TABLE_MARGIN):
                    found.append(Contact(cap.name, "table", clearance))
        return found

    def is_clear(self, q: np.ndarray, tower_layers: float, tower_margin: float,
                 exempt: tuple[str, ...] = (), held: HeldBlock | None = None,
                 fine_margin: float | None = None) -> bool:
        return not self.contacts(q, tower_layers, tower_margin, exempt, held, fine_margin)


def describe(contacts: list[Contact]) -> str:
    worst = min(contacts, key=lambda c: c.clearance)
    return (f"{worst.part} within {worst.clearance * 1000:.0f} mm of the {worst.obstacle}"
            if worst.clearance >= 0 else
            f"{worst.part} {-worst.clearance * 1000:.0f} mm into the {worst.obstacle}")


