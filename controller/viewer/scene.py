"""What the robot knows, as shapes for the viewer: the tower as boxes where perception measured
the blocks, coloured by how loose the robot believes each is, and the slot a block goes to. Pure:
no I/O, no viewer."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from perception.observation import TowerObservation
from planning.game.geometry import TowerGeometry, TowerPose
from planning.game.tower import TowerState, layer_axis
from planning.stability import BlockDims

Slot = tuple[int, int]

UNKNOWN = (150, 150, 150, 255)      # no belief yet: grey
TIGHT = (200, 40, 40, 255)          # believed tight: red
LOOSE = (40, 180, 60, 255)          # believed loose: green
CHOSEN = (255, 200, 0, 255)
TARGET = (60, 120, 255, 160)


@dataclass
class Boxes:
    """Oriented boxes in the world (m): centres, half sizes, turns about the vertical (rad),
    RGBA colours and labels, one row each."""
    centres: np.ndarray
    half_sizes: np.ndarray
    yaws: np.ndarray
    colours: np.ndarray
    labels: list[str]
    slots: list[Slot]

    def __len__(self) -> int:
        return len(self.labels)

    def quaternions(self) -> np.ndarray:
        """Each box's turn about z as a quaternion (x, y, z, w)."""
        half = self.yaws / 2
        return np.stack([np.zeros_like(half), np.zeros_like(half), np.sin(half), np.cos(half)],
                        axis=1)


def half_sizes(dims: BlockDims, n: int) -> np.ndarray:
    """`n` blocks' half extents: along, across, up."""
    return np.tile([dims.length / 2, dims.width / 2, dims.height / 2], (n, 1))


def belief_colour(p_loose: float | None) -> tuple[int, int, int, int]:
    """Grey without a belief; from red (surely tight) to green (surely loose)."""
    if p_loose is None:
        return UNKNOWN
    p = min(1.0, max(0.0, float(p_loose)))
    return tuple(int(round(t + (l - t) * p)) for t, l in zip(TIGHT, LOOSE))


def _along(layer: int, pose: TowerPose) -> float:
    """The world yaw of a layer's blocks' long axis."""
    return pose.yaw + (0.0 if layer_axis(layer) == "x" else np.pi / 2)


def tower_boxes(observation: TowerObservation, dims: BlockDims,
                p_loose: dict[Slot, float] | None = None,
                chosen: Slot | None = None) -> Boxes:
    """Every block perception measured, where it measured it; `p_loose` colours them (a block
    with no belief is grey), `chosen` is marked."""
    blocks = sorted(observation.blocks, key=lambda b: (b.layer, b.slot))
    pose = observation.pose
    n = len(blocks)
    centres = pose.to_world(np.array([b.position for b in blocks], float).reshape(n, 3))
    half = half_sizes(dims, n)
    yaws = np.array([_along(b.layer, pose) + np.radians(b.yaw_deg) for b in blocks], float)
    colours, labels = [], []
    for b in blocks:
        slot = (b.layer, b.slot)
        p = None if p_loose is None else p_loose.get(slot)
        colours.append(CHOSEN if slot == chosen else belief_colour(p))
        belief = "" if p is None else f", p_loose {p:.2f}"
        labels.append(f"{b.layer}.{b.slot} block {b.block}{belief}")
    return Boxes(centres, half, yaws, np.array(colours, np.uint8).reshape(n, 4), labels,
                 [(b.layer, b.slot) for b in blocks])


def slot_box(geometry: TowerGeometry, pose: TowerPose, dims: BlockDims, slot: Slot,
             label: str) -> Boxes:
    """The nominal place of `slot` on the measured tower (the slot a block is put in)."""
    measured = geometry.measured(pose)
    centre = pose.to_world(measured.slot_centre(*slot, pitch=pose.pitch))
    return Boxes(centre.reshape(1, 3),
                 half_sizes(dims, 1),
                 np.array([_along(slot[0], pose)]), np.array([TARGET], np.uint8), [label], [slot])


def nominal_boxes(state: TowerState, geometry: TowerGeometry, dims: BlockDims) -> Boxes:
    """Every block of `state` at its slot's nominal place in the cell (for a tower known only by
    which slots are full, as a match log keeps it)."""
    slots = sorted(state.blocks())
    centres, yaws = [], []
    for layer, slot in slots:
        pose = geometry.block_pose(layer, slot)
        centres.append(pose.t)
        yaws.append(float(np.arctan2(pose.R[1, 0], pose.R[0, 0])))
    n = len(slots)
    return Boxes(np.array(centres, float).reshape(n, 3),
                 half_sizes(dims, n),
                 np.array(yaws, float), np.array([UNKNOWN] * n, np.uint8).reshape(n, 4),
                 [f"{layer}.{slot}" for layer, slot in slots], slots)


TRUTH = (200, 170, 120, 255)        # wood: the simulator's truth, not a belief


def truth_boxes(document: dict, geometry: TowerGeometry, dims: BlockDims) -> Boxes:
    """Every block where the simulator has it (its `/truth.json` document: tower-frame centres
    and long axes), for the simulated cell's own viewer."""
    rotation, origin = np.array(geometry.pose.R), np.array(geometry.pose.t)
    numbers = sorted(document["blocks"], key=int)
    n = len(numbers)
    centres = np.array([document["blocks"][k]["position"] for k in numbers], float).reshape(n, 3)
    axes = np.array([document["blocks"][k]["axis"] for k in numbers], float).reshape(n, 3)
    world_axes = axes @ rotation.T
    slots = [tuple(document["blocks"][k]["slot"]) if document["blocks"][k]["slot"] else (0, 0)
             for k in numbers]
    return Boxes(centres @ rotation.T + origin,
                 half_sizes(dims, n),
                 np.arctan2(world_axes[:, 1], world_axes[:, 0]),
                 np.array([TRUTH] * n, np.uint8).reshape(n, 4),
                 [f"block {k}" + (f" in {s[0]}.{s[1]}" if s != (0, 0) else " out of the tower")
                  for k, s in zip(numbers, slots)], slots)
