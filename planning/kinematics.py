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
class CapsuleSet:
    """World capsules of one configuration: names (K,), starts and ends (K, 3), radii (K,)."""

    names: tuple[str, ...]
    starts: np.ndarray
    ends: np.ndarray
    radii: np.ndarray


class ArmModel:
    """Kinematics of the cell's arm with its tool. Poses are `SE3` in the world frame."""

    def __init__(self, cell: Cell):
        self.cell = cell
        arm = cell.arm
        links = [rtb.RevoluteDH(d=lk.d, a=lk.a, alpha=lk.alpha, offset=lk.offset,
                                qlim=[lk.q_min, lk.q_max]) for lk in arm.links]
        base = SE3(*arm.base_position) * SE3.Rz(arm.base_yaw)
        self.robot = rtb.DHRobot(links, name=arm.name, base=base)
        # The ETS form solves IK in compiled code without being rebuilt on every call.
        self._ets = self.robot.ets()
        self.q_min, self.q_max = arm.q_min, arm.q_max
        self.home = np.array(arm.home)
        tool = cell.tool
        self.frames = {"flange": SE3(), "grasp": SE3(*tool.grasp_centre),
                       "sensor": SE3(*tool.sensor_offset)}
        for i, tip in enumerate(tool.fingertips):
            self.frames[f"fingertip{i}"] = SE3(*tip)
        self.fingertip_frames = tuple(f"fingertip{i}" for i in range(len(tool.fingertips)))
        tool_capsules = ([("body", c) for c in tool.body] + [("fingers", c) for c in tool.fingers]
                         + [("probe", c) for c in tool.probe])
        self._tool_starts = np.array([c.start for _, c in tool_capsules])
        self._tool_ends = np.array([c.end for _, c in tool_capsules])
        self._grasp_offset = np.array(tool.grasp_centre)
        self._base = base.A
        self._dh = [(lk.d, lk.a, np.cos(lk.alpha), np.sin(lk.alpha), lk.offset) for lk in arm.links]
        link_names, link_radii = [], []
        for i, lk in enumerate(arm.links):
            if abs(lk.d) > 1e-9:
                link_names.append("base" if i == 0 else f"link{i + 1}")
                link_radii.append(lk.radius)
            if abs(lk.a) > 1e-9:
                link_names.append(f"link{i + 1}")
                link_radii.append(lk.radius)
        self._capsule_names = tuple(link_names + [name for name, _ in tool_capsules])
        self._capsule_radii = np.array(link_radii + [c.radius for _, c in tool_capsules])
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
           extra_seeds: int = 12, tol: float = 1e-12) -> np.ndarray:
        """Joints that put `frame` at `target`, nearest to `q_seed` among those found.

        `ik_LM` is seeded from `q_seed` first; if that fails, or `accept(q)` rejects the answer
        (a collision, say), further seeds are tried: home, then deterministic random ones.
        Raises IKError when none is found.
        """
        return self.ik_all(target, frame, q_seed, accept, extra_seeds, tol, first=True)[0]

    def ik_all(self, target: SE3, frame: str, q_seed: np.ndarray, accept=None,
               extra_seeds: int = 12, tol: float = 1e-12, first: bool = False) -> list[np.ndarray]:
        """Every distinct accepted configuration the seeds of `ik` find, nearest to `q_seed`
        first (with `first`, the seeded answer alone when it is accepted). Raises IKError when
        none is found."""
        flange_target = target * self._frame(frame).inv()
        seeds = [np.asarray(q_seed, float), self.home]
        # Seeded by the target so the same request always gives the same answer.
        rng = np.random.default_rng(zlib.crc32(np.round(flange_target.A, 6).tobytes()))
        seeds += [rng.uniform(self.q_min, self.q_max) for _ in range(extra_seeds)]
        found, reasons = [], []
        for i, seed in enumerate(seeds):
            # tol bounds the LM cost (half the squared pose error), not the error itself.
            sol = self._ets.ik_LM(flange_target, q0=seed, slimit=1, ilimit=100, tol=tol)
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
            if all(_distance(q, other) > SAME_BRANCH for other in found):
                found.append(q)
            if i == 0 and first:
                break  # the seeded answer is the natural continuation of the current motion
        if not found:
            p = target.t
            why = max(set(reasons), key=reasons.count) if reasons else "no solution"
            raise IKError(f"no joint configuration puts the {frame} at "
                          f"({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}) m: {why}")
        return sorted(found, key=lambda q: _distance(q, q_seed))

    # --- collision geometry -------------------------------------------------------------------

    def joint_frames(self, q: np.ndarray) -> np.ndarray:
        """(J+1, 4, 4) world frames of the base and of every link, by standard DH in plain numpy
        (the collision checker calls this thousands of times per plan)."""
        q = np.asarray(q, float)
        frames = np.empty((self.n + 1, 4, 4))
        frames[0] = self._base
        for i, (d, a, ca, sa, offset) in enumerate(self._dh):
            theta = q[i] + offset
            ct, st = np.cos(theta), np.sin(theta)
            link = np.array([[ct, -st * ca, st * sa, a * ct],
                             [st, ct * ca, -ct * sa, a * st],
                             [0.0, sa, ca, d],
                             [0.0, 0.0, 0.0, 1.0]])
            frames[i + 1] = frames[i] @ link
        return frames

    def link_capsules(self, q: np.ndarray, held: HeldBlock | None = None) -> CapsuleSet:
        """The arm's links, the tool's parts and a held block (named "held") as world capsules.

        A standard-DH link i runs from frame i-1 along its z axis by d_i, then along x_i by a_i;
        each leg becomes a capsule with the link's radius. The base link (first leg of link 1)
        stands on the table and is named "base"."""
        frames = self.joint_frames(q)
        starts, ends = [], []
        for i, link in enumerate(self.cell.arm.links):
            origin, z = frames[i][:3, 3], frames[i][:3, 2]
            elbow = origin + z * link.d
            if abs(link.d) > 1e-9:
                starts.append(origin)
                ends.append(elbow)
            if abs(link.a) > 1e-9:
                starts.append(elbow)
                ends.append(frames[i + 1][:3, 3])
        flange = frames[-1]
        rot, pos = flange[:3, :3], flange[:3, 3]
        starts += list(self._tool_starts @ rot.T + pos)
        ends += list(self._tool_ends @ rot.T + pos)
        names, radii = self._capsule_names, self._capsule_radii
        if held is not None:
            grasp = pos + rot @ self._grasp_offset
            axis = rot @ np.asarray(held.direction, float)
            starts.append(grasp - axis * held.behind)
            ends.append(grasp + axis * held.ahead)
            names = names + ("held",)
            radii = np.append(radii, held.radius)
        return CapsuleSet(names, np.array(starts), np.array(ends), radii)

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


SAME_BRANCH = 1e-3     # rad: two IK answers closer than this are the same configuration


def _distance(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(np.asarray(a) - np.asarray(b))))
