"""What a plan is: timed joint moves, gripper actions and force guards, ready for the arm's link.

A plan is computed in full, and checked against joint limits, speed limits and collisions, before
anything moves; executing it is the controller's job.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from planning.kinematics import HeldBlock
from planning.motion.trajectory import JointTrajectory


class PlanError(RuntimeError):
    """No safe motion: an unreachable pose, an IK failure, a collision or a limit. Nothing moved."""


@dataclass(frozen=True)
class ForceGuard:
    """Stop the motion when the wrist force along `direction` (a unit vector in the tool/sensor
    frame) exceeds `threshold_n`."""

    direction: tuple[float, float, float]
    threshold_n: float

    def __post_init__(self):
        # the firmware refuses a guard that never lets a move start: say so where it is made
        if not self.threshold_n > 0:
            raise ValueError(f"a force guard needs a threshold above 0 N, not {self.threshold_n}")


@dataclass(frozen=True)
class MoveStep:
    label: str
    trajectory: JointTrajectory
    guard: ForceGuard | None = None


@dataclass(frozen=True)
class GripStep:
    label: str
    width_m: float      # target opening; closing on a block stops at the block
    force_n: float


Step = MoveStep | GripStep


@dataclass(frozen=True)
class MotionPlan:
    kind: str                 # "push", "pull", "place", "transit"
    steps: tuple[Step, ...]
    held: HeldBlock | None = None   # the block in the gripper when the plan ends
    frame: str | None = None        # the tool frame the contact moves are planned for

    @property
    def moves(self) -> list[MoveStep]:
        return [s for s in self.steps if isinstance(s, MoveStep)]

    @property
    def q_start(self) -> np.ndarray:
        return self.moves[0].trajectory.start

    @property
    def q_end(self) -> np.ndarray:
        return self.moves[-1].trajectory.end

    @property
    def duration(self) -> float:
        """Time of the moves (gripper actions not counted)."""
        return sum(m.trajectory.duration for m in self.moves)

    def step(self, label: str) -> Step:
        for s in self.steps:
            if s.label == label:
                return s
        raise KeyError(f"plan {self.kind} has no step {label!r}: {[s.label for s in self.steps]}")
