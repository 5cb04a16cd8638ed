"""Perception benchmark: rendered frames of random mid-game towers and of fallen ones, scored
against the simulator's ground truth.

Per standing scene: every slot of layers 1 to the true top (and one above) is judged occupied or
empty (occupancy_accuracy is the share of slots right; a scene counts as right only if all are);
every block read is compared with the truth: centre position (mm, in the world), yaw (deg) and
protrusion (mm). Protrusion is a block's offset along its own axis from the tower's axis at its
height; the truth's tower axis is fitted to the true block centres with the same robust model
perception uses, so both sides measure against the same kind of reference. Fallen scenes score
whether the fall was seen. Latency is the time to turn one camera frame into its share of an
observation (detection on that frame plus half of the two-camera fit), on one core, the best of
TIMING_REPEATS runs on the same frames.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

import cv2
import numpy as np

from hardware.sim.ground_truth import GroundTruth
from hardware.sim.scenes import midgame, topple
from hardware.sim.world import SimWorld
from perception.pipeline import Perception
from perception.sources import Frame
from perception.tower_estimator import FaceMeasurement
from planning.game.geometry import TowerPose
from planning.game.cell.model import Cell
from planning.game.tower import SLOTS

# Issue 22's targets: the accuracy of 2026-11-30 (when a frame took 25 ms) in 15 ms
# (docs/benchmarks.md has the runs against them).
LIMITS = {"protrusion_err_mm_median": 0.15, "protrusion_err_mm_p95": 0.55, "latency_ms_median": 15.0}
TIMING_REPEATS = 3
TARGETS = {"occupancy_accuracy": "1.0", **{key: f"<= {limit}" for key, limit in LIMITS.items()}}


@dataclass
class PerceptionFigures:
    scenes: int = 0
    fallen_scenes: int = 0
    occupancy_accuracy: float = float("nan")
    scenes_all_slots_right: float = float("nan")
    position_err_mm_median: float = float("nan")
    yaw_err_deg_median: float = float("nan")
    protrusion_err_mm_median: float = float("nan")
    protrusion_err_mm_p95: float = float("nan")
    fall_detected_rate: float = float("nan")
    false_fall_rate: float = float("nan")
    latency_ms_median: float = float("nan")
    blocks_measured: int = 0
    failures: list = field(default_factory=list)

    def meets_targets(self) -> dict[str, bool]:
        return {"occupancy_accuracy": self.occupancy_accuracy == 1.0,
                **{key: getattr(self, key) <= limit for key, limit in LIMITS.items()}}


def measure(cell: Cell, scenes: int = 50, first_seed: int = 1, fallen_every: int = 5,
            progress=None) -> PerceptionFigures:
    cv2.setNumThreads(1)
    figures = PerceptionFigures()
    slots_right = slots_total = scenes_right = 0
    pos_err, yaw_err, prot_err, latency = [], [], [], []
    falls_seen = fallen = standing_called_fallen = 0
    for i in range(scenes):
        seed = first_seed + i
        rng = np.random.default_rng(10_000 + seed)
        world = SimWorld(cell, seed)
        truth = GroundTruth(world)
        toppled = fallen_every > 0 and (i + 1) % fallen_every == 0
        staged = midgame(world, rng, moves=int(rng.integers(1, 16)), protrusions=int(rng.integers(0, 6)))
        perception = Perception(cell)
        # Perception runs continuously in use: it knows the tower from the frame before. Warm it
        # up on this scene first (untimed) so the timing is the steady state's.
        perception.observe(_frames(world, cell))
        if toppled and not staged.fell:
            topple(world, rng)   # a fall is a change: perception saw the tower standing first
        toppled = toppled or staged.fell or truth.tower_fell()
        frames = _frames(world, cell)
        obs, frame_ms = _timed_observation(perception, frames)
        latency += frame_ms
        if toppled:
            fallen += 1
            falls_seen += int(obs.fell)
        else:
            standing_called_fallen += int(obs.fell)
            right, total, failures = _occupancy(obs, truth)
            slots_right += right
            slots_total += total
            scenes_right += int(right == total)
            figures.failures += [f"seed {seed}: {f}" for f in failures]
            p, y, q = _blocks(obs, truth, perception)
            pos_err += p
            yaw_err += y
            prot_err += q
        world.close()
        if progress:
            progress(i + 1, scenes)
    standing = scenes - fallen
    figures.scenes, figures.fallen_scenes = scenes, fallen
    figures.occupancy_accuracy = round(slots_right / max(slots_total, 1), 4)
    figures.scenes_all_slots_right = round(scenes_right / max(standing, 1), 4)
    figures.blocks_measured = len(prot_err)
    if prot_err:
        figures.position_err_mm_median = round(statistics.median(pos_err), 3)
        figures.yaw_err_deg_median = round(statistics.median(yaw_err), 3)
        figures.protrusion_err_mm_median = round(statistics.median(prot_err), 3)
        figures.protrusion_err_mm_p95 = round(float(np.percentile(prot_err, 95)), 3)
    figures.fall_detected_rate = round(falls_seen / fallen, 4) if fallen else float("nan")
    figures.false_fall_rate = round(standing_called_fallen / max(standing, 1), 4)
    figures.latency_ms_median = round(statistics.median(latency), 2)
    return figures


def _timed_observation(perception: Perception, frames: dict[str, Frame]):
    """The observation of `frames` (the first, the one scored) and each frame's latency: its
    detection plus half of the observation's rest, the best of TIMING_REPEATS runs (a shared
    machine only ever adds time to a computation)."""
    best: list[float] = []
    obs = None
    for _ in range(TIMING_REPEATS):
        detect_ms = []
        for name, frame in frames.items():
            start = time.perf_counter()
            perception.detect(name, frame.image)
            detect_ms.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        observed = perception.observe(frames).observation
        fit_ms = max((time.perf_counter() - start) * 1000 - sum(detect_ms), 0.0)
        if obs is None:
            obs = observed
        frame_ms = [d + fit_ms / 2 for d in detect_ms]
        best = [min(a, b) for a, b in zip(best, frame_ms)] if best else frame_ms
    return obs, best


def _frames(world: SimWorld, cell: Cell) -> dict[str, Frame]:
    return {c.name: Frame(c.name, world.render(c.name), world.time, 1) for c in cell.cameras}


def _occupancy(obs, truth: GroundTruth) -> tuple[int, int, list[str]]:
    state = truth.tower_state()
    right = total = 0
    failures = []
    for layer in range(1, state.top_layer + 2):
        for slot in SLOTS:
            expected = state.has_block(layer, slot)
            seen = obs.occupancy.get((layer, slot), False) and not obs.fell
            total += 1
            if seen == expected:
                right += 1
            else:
                failures.append(f"layer {layer} slot {slot}: seen {'full' if seen else 'empty'}, "
                                f"is {'full' if expected else 'empty'}")
    return right, total, failures


def _blocks(obs, truth: GroundTruth, perception: Perception):
    """Errors of every block read, against the truth in a tower frame fitted to the true blocks."""
    frame = _true_frame(truth, perception)
    world = truth.world
    pos_err, yaw_err, prot_err = [], [], []
    for b in obs.blocks:
        if truth.slot_of(b.block) != (b.layer, b.slot):
            continue
        body = world.block_body[b.block]
        true_world = world.data.xpos[body]
        seen_world = obs.pose.to_world(np.array(b.position)[None, :])[0]
        pos_err.append(float(np.linalg.norm(seen_world - true_world)) * 1000)
        axis = perception.model.axis(b.layer)
        local = frame.to_tower(true_world[None, :])[0]
        prot_err.append(abs(b.protrusion - float(local @ axis)) * 1000)
        block_axis = frame.vector_to_tower(world.data.xmat[body].reshape(3, 3)[:, 0])
        if block_axis @ axis < 0:
            block_axis = -block_axis
        true_yaw = np.degrees(np.arctan2(axis[0] * block_axis[1] - axis[1] * block_axis[0],
                                         axis[:2] @ block_axis[:2]))
        yaw_err.append(abs(b.yaw_deg - float(true_yaw)))
    return pos_err, yaw_err, prot_err


def _true_frame(truth: GroundTruth, perception: Perception) -> TowerPose:
    """The tower axis fitted to the true centres of the blocks' back faces."""
    model, estimator = perception.model, perception.estimator
    world = truth.world
    measurements = []
    prior = perception.pose
    for b in world.blocks:
        where = truth.slot_of(b.index)
        if where is None:
            continue
        layer, slot = where
        body = world.block_body[b.index]
        axis_world = world.data.xmat[body].reshape(3, 3)[:, 0]
        for end in (1, -1):
            face = model.face(layer, slot, end, prior.pitch)
            centre = world.data.xpos[body] + axis_world * np.sign(
                axis_world @ prior.vector_to_world(face.axis)) * end * model.length / 2
            measurements.append(FaceMeasurement(face, 0, centre, None, ("truth",)))
    return estimator._fit_pose(measurements, prior)
