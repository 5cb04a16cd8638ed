"""The arm as a roboticstoolbox model built from the cell: forward and inverse kinematics of the
flange and the tool frames, and the arm's collision capsules in the world."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

import numpy as np
import roboticstoolbox as rtb
from spatialmath import SE3

from planning.game.cell.model import Cell

TOOL_FRAMES = ("flange", "grasp", "sensor", "fingertip0", "fingertip1")


class IKError(RuntimeError):
    """No joint configuration reaches the pose (within limits, and acceptable to the caller)."""


@dataclass(frozen=True)
class HeldBlock:
    """A block in the gripper, as a capsule through the grasp centre along `direction` (a unit
    vector in the grasp frame, pointing from the held end to the far end): `behind` and `ahead`
    of the grasp centre (m), with the block's half thickness as radius. `raised`: how far above
    the block's centre line the fingers hold it (m; a grasp that rode up a low block), by which
    the block hangs lower than the capsule says."""

    direction: tuple[float, float, float]
    behind: float
    ahead: float
    radius: float
    raised: float = 0.0


@dataclass(frozen=True)
class CapsuleSet:
    """World capsules of one configuration: names (K,), starts and ends (K, 3), radii (K,); of N
    configurations (`link_capsules_many`), starts and ends (N, K, 3)."""

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
               extra_seeds: int = 12, tol: float = 1e-12, first: bool = False,
               accept_many=None) -> list[np.ndarray]:
        """Every distinct accepted configuration the seeds of `ik` find, nearest to `q_seed`
        first (with `first`, the seeded answer alone when it is accepted). Raises IKError when
        none is found. `accept_many` is `accept` for N configurations at once ((N,) booleans):
        every seed's answer is then judged in one go."""
        if accept_many is not None and first:
            raise ValueError("accept_many judges every seed's answer together: not with first")
        if accept_many is not None:
            answers, reasons = self._solve(target, frame, q_seed, None, extra_seeds, tol, False,
                                           distinct=False)
            ok = accept_many(np.array(answers)) if answers else []
            found = []
            for q, good in zip(answers, ok):
                if not good:
                    reasons.append("rejected (collision)")
                elif all(_distance(q, other) > SAME_BRANCH for other in found):
                    found.append(q)
        else:
            found, reasons = self._solve(target, frame, q_seed, accept, extra_seeds, tol, first)
        if not found:
            p = target.t
            why = max(set(reasons), key=reasons.count) if reasons else "no solution"
            raise IKError(f"no joint configuration puts the {frame} at "
                          f"({p[0]:.3f}, {p[1]:.3f}, {p[2]:.3f}) m: {why}")
        return sorted(found, key=lambda q: _distance(q, q_seed))

    def _solve(self, target: SE3, frame: str, q_seed: np.ndarray, accept, extra_seeds: int,
               tol: float, first: bool, distinct: bool = True) -> tuple[list[np.ndarray], list[str]]:
        """(answers, reasons seeds failed), in seed order: the accepted answers within the
        limits, only the first of near-identical ones when `distinct`."""
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
            if not distinct or all(_distance(q, other) > SAME_BRANCH for other in found):
                found.append(q)
            if i == 0 and first:
                break  # the seeded answer is the natural continuation of the current motion
        return found, reasons

    # --- collision geometry -------------------------------------------------------------------

    def joint_frames(self, q: np.ndarray) -> np.ndarray:
        """(J+1, 4, 4) world frames of the base and of every link, by standard DH in plain numpy."""
        return self.joint_frames_many(np.asarray(q, float)[None, :])[0]

    def joint_frames_many(self, qs: np.ndarray) -> np.ndarray:
        """(N, J+1, 4, 4) frames for N configurations at once: the collision checker asks about
        thousands of configurations per plan, a path's worth at a time."""
        qs = np.atleast_2d(np.asarray(qs, float))
        frames = np.empty((len(qs), self.n + 1, 4, 4))
        frames[:, 0] = self._base
        link = np.zeros((len(qs), 4, 4))
        link[:, 3, 3] = 1.0
        for i, (d, a, ca, sa, offset) in enumerate(self._dh):
            theta = qs[:, i] + offset
            ct, st = np.cos(theta), np.sin(theta)
            link[:, 0, 0], link[:, 0, 1], link[:, 0, 2], link[:, 0, 3] = ct, -st * ca, st * sa, a * ct
            link[:, 1, 0], link[:, 1, 1], link[:, 1, 2], link[:, 1, 3] = st, ct * ca, -ct * sa, a * st
            link[:, 2, 1], link[:, 2, 2], link[:, 2, 3] = sa, ca, d
            frames[:, i + 1] = frames[:, i] @ link
        return frames

    def link_capsules(self, q: np.ndarray, held: HeldBlock | None = None) -> CapsuleSet:
        """The arm's links, the tool's parts and a held block (named "held") as world capsules.

        A standard-DH link i runs from frame i-1 along its z axis by d_i, then along x_i by a_i;
        each leg becomes a capsule with the link's radius. The base link (first leg of link 1)
        stands on the table and is named "base"."""
        many = self.link_capsules_many(np.asarray(q, float)[None, :], held)
        return CapsuleSet(many.names, many.starts[0], many.ends[0], many.radii)

    def link_capsules_many(self, qs: np.ndarray, held: HeldBlock | None = None) -> CapsuleSet:
        """`link_capsules` for N configurations: starts and ends (N, K, 3)."""
        frames = self.joint_frames_many(qs)
        starts, ends = [], []
        for i, link in enumerate(self.cell.arm.links):
            origin, z = frames[:, i, :3, 3], frames[:, i, :3, 2]
            elbow = origin + z * link.d
            if abs(link.d) > 1e-9:
                starts.append(origin)
                ends.append(elbow)
            if abs(link.a) > 1e-9:
                starts.append(elbow)
                ends.append(frames[:, i + 1, :3, 3])
        rot, pos = frames[:, -1, :3, :3], frames[:, -1, :3, 3]
        starts = np.concatenate([np.stack(starts, axis=1),
                                 np.einsum("kj,nij->nki", self._tool_starts, rot) + pos[:, None]], axis=1)
        ends = np.concatenate([np.stack(ends, axis=1),
                               np.einsum("kj,nij->nki", self._tool_ends, rot) + pos[:, None]], axis=1)
        names, radii = self._capsule_names, self._capsule_radii
        if held is not None:
            grasp = pos + rot @ self._grasp_offset
            axis = rot @ np.asarray(held.direction, float)
            starts = np.concatenate([starts, (grasp - axis * held.behind)[:, None]], axis=1)
            ends = np.concatenate([ends, (grasp + axis * held.ahead)[:, None]], axis=1)
            names = names + ("held",)
            radii = np.append(radii, held.radius)
        return CapsuleSet(names, starts, ends, radii)

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
