"""The arm as a roboticstoolbox model built from the cell: forward and inverse kinematics of the
flange and the tool frames, and the arm's collision capsules in the world."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import roboticstoolbox as rtb
from spatialmath import SE3

from planning.cell.model import Capsule, Cell

TOOL_FRAMES = ("flange", "grasp", "sensor", "fingertip0", "fingertip1")


class IKError(RuntimeError):
    """No joint configuration reaches the pose (within limits, and acceptable to the caller)."""


@dataclass(frozen=True)
class HeldBlock:
    """A block in the gripper, as a capsule through the grasp centre along `direction` (a unit
    vector in the grasp frame, pointing from the held end to the far end): `behind` and `ahead`
    of the grasp centre (m), with the block's half thickness as radius."""

    direction: tuple[float, float, float]
    behind: float
    ahead: float
    radius: float


@dataclass(frozen=True)
class WorldCapsule:
    name: str
    start: np.ndarray
    end: np.ndarray
    radius: float


class ArmModel:
    """Kinematics of the cell's arm with its tool. Poses are `SE3` in the world frame."""

    def __init__(self, cell: Cell):
        self.cell = cell
        arm = cell.arm
        links = [rtb.RevoluteDH(d=lk.d, a=lk.a, alpha=lk.alpha, offset=lk.offset,
                                qlim=[lk.q_min, lk.q_max]) for lk in arm.links]
        base = SE3(*arm.base_position) * SE3.Rz(arm.base_yaw)
        self.robot = rtb.DHRobot(links, name=arm.name, base=base)
        self.q_min, self.q_max = arm.q_min, arm.q_max
        self.home = np.array(arm.home)
        tool = cell.tool
        self.frames = {"flange": SE3(), "grasp": SE3(*tool.grasp_centre),
                       "sensor": SE3(*tool.sensor_offset)}
        for i, tip in enumerate(tool.fingertips):
            self.frames[f"fingertip{i}"] = SE3(*tip)
        self.fingertip_frames = tuple(f"fingertip{i}" for i in range(len(tool.fingertips)))
        self._tool_capsules = ([("body", c) for c in tool.body] + [("fingers", c) for c in tool.fingers]
                               + [("probe", c) for c in tool.probe])
        self._rng = np.random.default_rng(0)

    @property
    def n(self) -> int:
        return self.robot.n

    # --- forward ------------------------------------------------------------------------------

    def fk(self, q: np.ndarray, frame: str = "flange") -> SE3:
        return self.robot.fkine(np.asarray(q, float)) * self._frame(frame)

    def within_limits(self, q: np.ndarray, tol: float = 1e-9) -> bool:
        q = np.asarray(q)
        return bool(np.all(q >= self.q_min - tol) and np.all(q <= self.q_max + tol))

    # --- inverse ------------------------------------------------------------------------------

    def ik(self, target: SE3, frame: str, q_seed: np.ndarray, accept=None,
           extra_seeds: int = 12, tol: float = 1e-6) -> np.ndarray:
        """Joints that put `frame` at `target`, nearest to `q_seed` among those found.

        `ik_LM` is seeded from `q_seed` first; if that fails, or `accept(q)` rejects the answer
        (a collision, say), further seeds are tried: home, then deterministic random ones.
        Raises IKError when none is found.
        """
        flange_target = target * self._frame(frame).inv()
        seeds = [np.asarray(q_seed, float), self.home]
        # Seeded by the target so the same request always gives the same answer.
        rng = np.random.default_rng(zlib.crc32(np.round(flange_target.A, 6).tobytes()))
        seeds += [rng.uniform(self.q_min, self.q_max) for _ in range(extra_seeds)]
        best, reasons = None, []
        for i, seed in enumerate(seeds):
            sol = self.robot.ik_LM(flange_target, q0=seed, slimit=1, ilimit=60, tol=tol)
            if not sol.success:
                reasons.append(sol.reason)
                continue
            q = self._wrap_near(np.asarray(sol.q), q_seed)
            if not self.within_limits(q):
                reasons.append("joint limits")
                continue
            if accept is not None and not accept(q):
                reasons.append("rejected (collision)")
                continue
            if best is None or _distance(q, q_seed) < _distance(best, q_seed):
                best = q
            if i == 0:
                break  # the seeded answer is the natural continuation of the current motion
        if best is None:
            p = target.t
            why = max(set(reasons), key=reasons.count) if reasons else "no solution"
            raise IKError(f"no joint configuration puts the {frame} at "
                          f"({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}) m: {why}")
        return best

    # --- collision geometry -------------------------------------------------------------------

    def link_capsules(self, q: np.ndarray, held: HeldBlock | None = None) -> list[WorldCapsule]:
        """The arm's links, the tool's parts and a held block (named "held") as world capsules.

        A standard-DH link i runs from frame i-1 along its z axis by d_i, then along x_i by a_i;
        each leg becomes a capsule with the link's radius. The base link (first leg of link 1)
        stands on the table and is named "base"."""
        frames = self.robot.fkine_all(np.asarray(q, float))
        capsules = []
        for i, link in enumerate(self.cell.arm.links):
            prev, cur = frames[i], frames[i + 1]
            elbow = prev.t + prev.R[:, 2] * link.d
            if abs(link.d) > 1e-9:
                capsules.append(WorldCapsule("base" if i == 0 else f"link{i + 1}", prev.t.copy(),
                                             elbow, link.radius))
            if abs(link.a) > 1e-9:
                capsules.append(WorldCapsule(f"link{i + 1}", elbow, cur.t.copy(), link.radius))
        flange = frames[-1]
        for part, cap in self._tool_capsules:
            capsules.append(WorldCapsule(part, _apply(flange, cap.start), _apply(flange, cap.end),
                                         cap.radius))
        if held is not None:
            grasp = flange * self.frames["grasp"]
            axis = grasp.R @ np.asarray(held.direction, float)
            capsules.append(WorldCapsule("held", grasp.t - axis * held.behind,
                                         grasp.t + axis * held.ahead, held.radius))
        return capsules

    # --- inside -------------------------------------------------------------------------------

    def _frame(self, frame: str) -> SE3:
        try:
            return self.frames[frame]
        except KeyError:
            raise ValueError(f"unknown tool frame {frame!r}; frames: {TOOL_FRAMES}") from None

    def _wrap_near(self, q: np.ndarray, ref: np.ndarray) -> np.ndarray:
        """Shift each joint by whole turns toward `ref` where the limits allow: same pose, less travel."""
        q = q.copy()
        for j in range(len(q)):
            while q[j] - ref[j] > np.pi and q[j] - 2 * np.pi >= self.q_min[j]:
                q[j] -= 2 * np.pi
            while ref[j] - q[j] > np.pi and q[j] + 2 * np.pi <= self.q_max[j]:
                q[j] += 2 * np.pi
        return q


def _apply(pose: SE3, point) -> np.ndarray:
    return pose.R @ np.asarray(point, float) + pose.t


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
