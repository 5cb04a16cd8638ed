"""A motorised force gauge for measuring the simulated tower, as a lab would measure a real one:
a carriage driven straight along a block's axis at constant speed, with a sprung tip of the cell's
fingertip stiffness. It reads the tip's force. It is an instrument of the simulator's checks, not
part of the robot; it exists only in worlds built with `probe_stage=True`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from hardware.sim.ground_truth import GroundTruth
from hardware.sim.world import SimWorld

APPROACH_GAP = 0.002   # the tip starts this far from the end face (m)
PARK = np.array([0.0, -1.0, 0.5])


@dataclass(frozen=True)
class ProbeResult:
    block: int
    peak_force_n: float
    block_travel: float      # how far the block's centre moved (m)
    others_moved: float      # largest displacement of any other block (m)
    forces_n: np.ndarray     # force trace at every step
    times: np.ndarray
    tripped: bool = False    # the push stopped at its guard force


class ProbeStage:
    def __init__(self, world: SimWorld, truth: GroundTruth | None = None):
        if "probe_stage" not in [world.model.body(i).name for i in range(world.model.nbody)]:
            raise ValueError("this world has no probe stage: build it with probe_stage=True")
        self.world = world
        self.truth = truth or GroundTruth(world)
        model = world.model
        self._mocap = model.body_mocapid[model.body("probe_stage").id]
        self._spring = model.jnt_qposadr[model.joint("probe_spring").id]
        self._spring_dof = model.jnt_dofadr[model.joint("probe_spring").id]
        self._tip_length = 0.03
        self.park()

    def park(self) -> None:
        """Away from the tower, the tip at rest: a tip left pressed in by the last push would
        otherwise read that force at the start of the next."""
        data = self.world.data
        data.mocap_pos[self._mocap] = PARK
        data.qpos[self._spring] = 0.0
        data.qvel[self._spring_dof] = 0.0

    def push(self, block: int, depth: float, speed: float, end: int = 1,
             guard_n: float = np.inf) -> ProbeResult:
        """Drive the tip onto the block's `end` face and on by `depth` (m) at `speed` (m/s),
        pushing the block toward its other end, stopping early when the tip feels `guard_n`;
        then park. Returns the force record."""
        world = self.world
        data = world.data
        self.truth.reference()
        body = world.block_body[block]
        rot = data.xmat[body].reshape(3, 3)
        axis = rot[:, 0] * end
        half = world.blocks[[b.index for b in world.blocks].index(block)].length / 2
        face = data.xpos[body] + axis * half
        direction = -axis
        yaw = np.arctan2(direction[1], direction[0])
        data.mocap_quat[self._mocap] = [np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)]
        # The tip is a capsule: its end is a radius beyond the rod's end point.
        reach = self._tip_length + world.cell.tool.fingertip_radius
        start = face - direction * (APPROACH_GAP + reach)
        data.mocap_pos[self._mocap] = start
        world.step(1)
        travel = APPROACH_GAP + depth
        n = int(np.ceil(travel / speed / world.timestep))
        stiffness = world.cell.tool.fingertip_stiffness
        forces, times = np.empty(n), np.empty(n)
        tripped = False
        for i in range(n):
            data.mocap_pos[self._mocap] = start + direction * speed * world.timestep * (i + 1)
            world.step(1)
            forces[i] = -stiffness * data.qpos[self._spring]
            times[i] = world.time
            if forces[i] > guard_n:
                tripped = True
                forces, times = forces[:i + 1], times[:i + 1]
                break
        moved = self.truth.displacements()
        travelled = moved.pop(block)
        self.park()
        world.step(1)
        return ProbeResult(block, float(max(forces.max(), 0.0)), travelled,
                           max(moved.values(), default=0.0), forces, times, tripped)
