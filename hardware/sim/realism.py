"""The simulator's realism figures, each measured, never assumed (`jenga-robot sim check`).

- drift: an untouched 18-layer tower over 120 s, with the product's physics (the resting tower
  sleeps) and, for the record, with every body kept awake;
- looseness: the peak force of a 5 mm push at 2 mm/s on every block of layers 1 to 17 of a fresh
  tower (restored between probes), with the force gauge of `probe_stage.py`;
- forced push: the most load-bearing block of layer 2, pushed 20 mm, must drag another block more
  than 2 mm or topple the tower;
- real-time factor of the whole cell, tower awake and arm moving: reported, not judged.
"""

from __future__ import annotations

import time
from dataclasses import asdict, dataclass, field
from typing import Callable

import mujoco
import numpy as np

from hardware.sim.ground_truth import GroundTruth
from hardware.sim.probe_stage import ProbeStage
from hardware.sim.world import SimWorld
from planning.game.cell.model import Cell
from planning.workers import Workers

TARGETS = {
    "drift_mm_max": "<= 0.2",
    "loose_fraction": "0.2 to 0.7",
    "forced_push_disturbs": "true",
}
# The real-time factor is the machine's figure, not the simulator's: it is reported, not judged
# (a busy machine runs the world slower, and every timing in it runs on world time).
RTF_NOTE = "the machine's speed: reported, not judged"
LOOSE_N = 0.3
TIGHT_N = 1.0
PROBE_DEPTH = 0.005
PROBE_SPEED = 0.002
FORCED_DEPTH = 0.020
FORCED_SPEED = 0.005
DISTURB_M = 0.002


@dataclass
class RealismFigures:
    seed: int
    drift_mm_max: float = float("nan")
    drift_mm_max_awake: float = float("nan")
    drift_s: float = 0.0
    probe_peak_n: list[list[float]] = field(default_factory=list)
    first_layer: int = 1            # probe_peak_n[i] is layer first_layer + i
    loose_fraction: float = float("nan")
    tight_fraction: float = float("nan")
    forced_push_disturbs: bool = False
    forced_push_block: list[int] = field(default_factory=list)   # [layer, slot]
    forced_push_others_mm: float = float("nan")
    forced_push_toppled: bool = False
    rtf: float = float("nan")
    rtf_sleeping: float = float("nan")
    jobs: int = 1                   # processes the figures were measured in

    def to_json(self) -> dict:
        out = asdict(self)
        out["targets"] = TARGETS
        out["rtf_note"] = RTF_NOTE
        out["meets_targets"] = self.meets_targets()
        return out

    def meets_targets(self) -> dict[str, bool]:
        return {"drift_mm_max": bool(self.drift_mm_max <= 0.2),
                "loose_fraction": bool(0.2 <= self.loose_fraction <= 0.7),
                "forced_push_disturbs": bool(self.forced_push_disturbs)}


Progress = Callable[[str, int, int], None]


def measure(cell: Cell, seed: int, *, drift_s: float = 120.0, layers: range = range(1, 18),
            awake_drift: bool = True, rtf_s: float = 5.0, jobs: int = 1,
            progress: Progress | None = None) -> RealismFigures:
    """Every figure for one seed. `layers`, `drift_s` and `rtf_s` may be cut down for quick
    checks. With `jobs` > 1 the drift runs and the probes are shared out among that many
    processes, each with the same world (built from the cell and the seed, so the figures do not
    depend on `jobs`); the real-time factor is measured last, alone."""
    figures = RealismFigures(seed=seed, drift_s=drift_s, jobs=jobs)
    work = [("drift", drift_s, True)] + ([("drift", drift_s, False)] if awake_drift else [])
    work += [("probe", layer) for layer in layers]
    with Workers(_Bench, (cell, seed), jobs) as workers:
        results = workers.map(_do, [(item,) for item in work],
                              lambda done: progress and progress("measuring", done, len(work)))
        figures.drift_mm_max = results[0]
        if awake_drift:
            figures.drift_mm_max_awake = results[1]
        peaks = results[len(work) - len(layers):]
        figures.probe_peak_n, figures.first_layer = peaks, layers.start
        flat = np.array(peaks).ravel()
        figures.loose_fraction = round(float(np.mean(flat < LOOSE_N)), 4)
        figures.tight_fraction = round(float(np.mean(flat > TIGHT_N)), 4)
        # The forced push: the block of layer 2 that resisted most is the one carrying the load.
        layer2 = peaks[list(layers).index(2)] if 2 in layers else None
        slot = int(np.argmax(layer2)) if layer2 else None
        (slot, others_mm, toppled), = workers.map(_do, [(("forced", slot),)])
        (rtf, rtf_sleeping), = workers.map(_do, [(("rtf", rtf_s),)])   # alone: nothing else runs
    figures.forced_push_block = [2, slot]
    figures.forced_push_others_mm = others_mm
    figures.forced_push_toppled = toppled
    figures.forced_push_disturbs = bool(others_mm > DISTURB_M * 1000 or toppled)
    figures.rtf, figures.rtf_sleeping = rtf, rtf_sleeping
    return figures


class _Bench:
    """A world built from the cell and the seed, its fresh state and the force gauge. Every
    measurement starts from the world exactly as built (`SimWorld.restore` is exact), so a figure
    does not depend on what was measured before it."""

    def __init__(self, cell: Cell, seed: int):
        self.seed = seed
        self.world = SimWorld(cell, seed, markers=False, probe_stage=True)
        self.truth = GroundTruth(self.world)
        self.fresh = self.world.save()
        self.stage = ProbeStage(self.world, self.truth)

    def reset(self) -> None:
        self.world.restore(self.fresh)
        self.truth.reference()

    def close(self) -> None:
        self.world.close()


def _do(bench: _Bench, item: tuple):
    world, truth, fresh, stage = bench.world, bench.truth, bench.fresh, bench.stage
    kind = item[0]
    bench.reset()
    if kind == "drift":
        _, seconds, sleeping = item
        flag = int(mujoco.mjtEnableBit.mjENBL_SLEEP)
        if not sleeping:
            world.model.opt.enableflags &= ~flag
        try:
            return drift_mm(world, truth, seconds)
        finally:
            world.model.opt.enableflags |= flag
    if kind == "probe":
        layer = item[1]
        row = []
        for slot in range(3):
            bench.reset()
            block = truth.block_at(layer, slot)
            if block is None:
                raise RuntimeError(f"seed {bench.seed}: no block in layer {layer} slot {slot} of "
                                   f"a fresh tower")
            row.append(round(stage.push(block, PROBE_DEPTH, PROBE_SPEED).peak_force_n, 4))
        return row
    if kind == "forced":
        slot = item[1] if item[1] is not None else _heaviest_slot(truth, 2)
        block = truth.block_at(2, slot)
        stage.push(block, FORCED_DEPTH, FORCED_SPEED)
        world.step_for(1.0)   # let anything that was knocked loose land
        moved = truth.displacements()
        moved.pop(block)
        return slot, round(max(moved.values()) * 1000, 3), truth.tower_fell()
    if kind == "rtf":
        return real_time_factor(world, fresh, item[1])
    raise ValueError(f"no such measurement: {kind}")


def drift_mm(world: SimWorld, truth: GroundTruth, seconds: float) -> float:
    """Largest displacement of any block (mm) over `seconds` of simulated time, untouched."""
    truth.reference()
    world.step_for(seconds)
    return round(max(truth.displacements().values()) * 1000, 4)


def real_time_factor(world: SimWorld, fresh, seconds: float = 5.0) -> tuple[float, float]:
    """Simulated seconds per wall second while the arm moves through a slow sweep; first with
    every body awake (the worst case: the whole tower integrated every step), then with the
    product's sleeping on."""
    results = []
    for sleep in (False, True):
        world.restore(fresh)
        flag = int(mujoco.mjtEnableBit.mjENBL_SLEEP)
        if sleep:
            world.model.opt.enableflags |= flag
        else:
            world.model.opt.enableflags &= ~flag
        home = np.array(world.cell.arm.home)
        steps = int(seconds / world.timestep)
        start = time.perf_counter()
        for i in range(steps):
            phase = 2 * np.pi * i * world.timestep / seconds
            world.set_joint_targets(home + 0.3 * np.sin(phase) * np.array([1, 0.3, -0.3, 0.5, 0.5, 1]))
            world.step(1)
        results.append(round(seconds / (time.perf_counter() - start), 3))
    world.model.opt.enableflags |= int(mujoco.mjtEnableBit.mjENBL_SLEEP)
    return results[0], results[1]


def _heaviest_slot(truth: GroundTruth, layer: int) -> int:
    forces = [truth.contact_force(truth.block_at(layer, s)) for s in range(3)]
    return int(np.argmax(forces))
