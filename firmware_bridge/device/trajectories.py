"""The reference engine's trajectories: uploads arriving in TRAJ_LOAD chunks, and those loaded and
checked, by id (docs/protocol.md section 6). The reference keeps any number of them."""

from __future__ import annotations

from firmware_bridge.device.hardware import DeviceConfig
from firmware_bridge.device.motion import (LoadedTrajectory, TrajectoryRejected, Upload,
                                           check_trajectory)
from firmware_bridge.messages import Reason, TrajLoad


class TrajectoryStore:
    def __init__(self) -> None:
        self.uploads: dict[int, Upload] = {}
        self.loaded: dict[int, LoadedTrajectory] = {}

    def forget(self, traj_id: int) -> None:
        """No upload and no trajectory of this id any more (one running runs on)."""
        self.uploads.pop(traj_id, None)
        self.loaded.pop(traj_id, None)

    def load(self, chunk: TrajLoad, config: DeviceConfig) -> Reason | None:
        """Take one chunk; the reason it was refused, or None."""
        if chunk.index == 0:
            self.forget(chunk.traj_id)    # a new upload of this id, good or not
        if chunk.total < 2 or chunk.total > config.max_points \
                or any(len(q) != len(config.joints) for _, q in chunk.points):
            # too long, or a chunk for another arm (or one that disagrees with those before it)
            self.uploads.pop(chunk.traj_id, None)
            return Reason.BAD_TRAJECTORY
        if chunk.index == 0:
            self.uploads[chunk.traj_id] = Upload(chunk.traj_id, chunk.total, [], [])
        upload = self.uploads.get(chunk.traj_id)
        if upload is None or chunk.index != len(upload.times) or chunk.total != upload.total \
                or chunk.index + len(chunk.points) > upload.total:
            self.uploads.pop(chunk.traj_id, None)
            return Reason.BAD_TRAJECTORY
        for t, q in chunk.points:
            upload.times.append(t)
            upload.positions.append(q)
        if upload.complete:
            del self.uploads[chunk.traj_id]
            try:
                self.loaded[chunk.traj_id] = check_trajectory(upload, config.joints)
            except TrajectoryRejected as exc:
                return exc.reason
        return None
