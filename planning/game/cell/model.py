"""The robot cell as typed, immutable objects, all in SI units (metres, radians, kilograms, seconds).

One description serves the planner (its roboticstoolbox model) and the simulator (its MuJoCo model).
Poses are given as a position and a yaw (rotation about the table's vertical z); the table top is
the plane z = 0 of the world frame.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class DHLink:
    """One standard-DH link: d and a in metres, alpha and offset in radians."""

    d: float
    a: float
    alpha: float
    offset: float
    q_min: float
    q_max: float
    speed_max: float      # rad/s
    accel_max: float      # rad/s^2
    radius: float         # collision capsule radius of the link, m
    mass: float           # kg
    torque_max: float     # N m


@dataclass(frozen=True)
class Arm:
    name: str
    base_position: tuple[float, float, float]  # world, m
    base_yaw: float                            # rad
    links: tuple[DHLink, ...]
    home: tuple[float, ...]                    # rad, a safe pose clear of the tower

    @property
    def joint_count(self) -> int:
        return len(self.links)

    @property
    def q_min(self) -> np.ndarray:
        return np.array([lk.q_min for lk in self.links])

    @property
    def q_max(self) -> np.ndarray:
        return np.array([lk.q_max for lk in self.links])

    @property
    def speed_max(self) -> np.ndarray:
        return np.array([lk.speed_max for lk in self.links])

    @property
    def accel_max(self) -> np.ndarray:
        return np.array([lk.accel_max for lk in self.links])


@dataclass(frozen=True)
class Capsule:
    """A segment with a radius, in the frame that owns it (m)."""

    start: tuple[float, float, float]
    end: tuple[float, float, float]
    radius: float


@dataclass(frozen=True)
class Tool:
    """Gripper, wrist force/torque sensor and pushing fingertip, all mounted on the flange.

    Frames are given in the flange frame (z out of the flange). The gripper's fingers close along
    the flange y axis around the grasp centre. The pushing fingertips are the two ends of a rod
    that runs along the flange x axis: each pushes outward along x (the sign of its x), so either
    side of the tool can face a block.
    """

    mass: float                                 # kg, everything past the flange
    sensor_offset: tuple[float, float, float]   # force/torque sensor origin, flange frame
    sensor_force_range: float                   # N, per axis
    sensor_noise_force: float                   # N, standard deviation
    sensor_noise_torque: float                  # N m, standard deviation
    sensor_bias_drift: float                    # N/s, slow bias random walk
    grasp_centre: tuple[float, float, float]
    stroke: float                               # m, full opening of the fingers
    finger_length: float                        # m, along the flange z axis
    pad_length: float                           # m, contact length of each pad along z
    grip_force: float                           # N
    fingertips: tuple[tuple[float, float, float], ...]
    fingertip_radius: float                     # m
    fingertip_stiffness: float                  # N/m of the compliant tip
    fingertip_travel: float                     # m of compliance before the tip bottoms out
    body: tuple[Capsule, ...]                   # gripper body and sensor: never touches the tower
    fingers: tuple[Capsule, ...]                # fingers when open: touch only a protruding block
    probe: tuple[Capsule, ...]                  # the fingertip rod: enters the tower when pushing

    @property
    def finger_thickness(self) -> float:
        """How thick each finger is across its closing direction and along the held block's
        height (m): the finger capsules' diameter, the one size the planner and the simulated
        fingers share (a finger thicker than the block's 15 mm height reaches below a layer-1
        block into the table)."""
        return 2 * max(c.radius for c in self.fingers)


@dataclass(frozen=True)
class Camera:
    name: str
    width: int                                  # px
    height: int                                 # px
    fx: float                                   # px
    fy: float                                   # px
    cx: float                                   # px
    cy: float                                   # px
    fps: float
    position: tuple[float, float, float]        # world, m
    look_at: tuple[float, float, float]         # world, m: the point on the optical axis
    roll: float = 0.0                           # rad about the optical axis; pi/2: portrait

    def axes(self) -> np.ndarray:
        """World directions (columns) of the OpenCV camera axes: x right and y down in the image,
        z along the optical axis."""
        forward = np.array(self.look_at, float) - np.array(self.position, float)
        forward /= np.linalg.norm(forward)
        right = np.cross(forward, [0.0, 0.0, 1.0])
        if np.linalg.norm(right) < 1e-9:          # looking straight down or up
            right = np.array([1.0, 0.0, 0.0])
        right /= np.linalg.norm(right)
        up = np.cross(right, forward)
        c, s = np.cos(self.roll), np.sin(self.roll)
        right, up = c * right + s * up, -s * right + c * up
        return np.column_stack([right, -up, forward])

    @property
    def matrix(self) -> np.ndarray:
        return np.array([[self.fx, 0.0, self.cx], [0.0, self.fy, self.cy], [0.0, 0.0, 1.0]])

    @property
    def fovy(self) -> float:
        """Vertical field of view, rad."""
        return 2.0 * float(np.arctan2(self.height / 2.0, self.fy))


@dataclass(frozen=True)
class Spread:
    """A measured quantity: mean, standard deviation and the range seen on a real set (SI)."""

    mean: float
    std: float
    low: float
    high: float


@dataclass(frozen=True)
class BlockSet:
    count: int
    length: Spread   # m
    width: Spread    # m
    height: Spread   # m
    mass: Spread     # kg
    friction: Spread  # wood on wood, dimensionless
    side_gap: float = 0.00025   # m between neighbours in a layer, typically: blocks side by side
                                # never touch perfectly

    @property
    def layers(self) -> int:
        return self.count // 3


@dataclass(frozen=True)
class TowerPlacement:
    position: tuple[float, float]   # world x, y of the tower's centre on the table, m
    yaw: float                      # rad; the tower's x axis is the axis of odd layers


@dataclass(frozen=True)
class Curtain:
    """A safety light curtain along the players' side of the table, wired to the arm controller's
    safety input: a vertical plane of beams from post `start` to post `end` (world x, y), from
    `low` to `high` above the table. The arm is held while a beam is broken and for `hold_s`
    after they are all clear again; the planner keeps every part of the arm `keep_out` on the
    tower's side of it, so the robot never breaks it itself."""

    start: tuple[float, float]      # world x, y of one post, m
    end: tuple[float, float]        # the other post
    low: float                      # m above the table: the lowest beam
    high: float                     # the highest
    beam_spacing: float             # m between beams
    scan_period: float              # s between scans of the beams (the curtain's response time)
    hold_s: float                   # s every beam stays clear before the arm goes on
    keep_out: float                 # m the arm keeps from the curtain's plane

    def beams(self) -> list[tuple[tuple[float, float, float], tuple[float, float, float]]]:
        """Every beam as (start, end) points in the world, bottom up."""
        count = int((self.high - self.low) / self.beam_spacing + 1e-9) + 1
        heights = [self.low + i * self.beam_spacing for i in range(count)]
        return [((*self.start, z), (*self.end, z)) for z in heights]

    def plane(self) -> tuple[tuple[float, float], float]:
        """The curtain's plane as a unit normal (x, y) toward the tower's side and an offset:
        a point p lies `normal . p - offset` (m) on the tower's side (the loader orders the posts
        so that the tower's side is the positive one)."""
        (x0, y0), (x1, y1) = self.start, self.end
        nx, ny = y0 - y1, x1 - x0
        norm = (nx * nx + ny * ny) ** 0.5
        nx, ny = nx / norm, ny / norm
        return (nx, ny), nx * x0 + ny * y0

    def tower_side(self, point) -> float:
        """Signed distance (m) of a world point (x, y, ...) from the curtain's plane: positive on
        the tower's side, negative on the players'."""
        (nx, ny), offset = self.plane()
        return nx * point[0] + ny * point[1] - offset


@dataclass(frozen=True)
class Cell:
    name: str
    arm: Arm
    tool: Tool
    cameras: tuple[Camera, ...]
    tower: TowerPlacement
    blocks: BlockSet
    source: str = ""                # the file it came from, for messages
    curtain: Curtain | None = None  # the players' side light curtain, if the cell has one

    def camera(self, name: str) -> Camera:
        for cam in self.cameras:
            if cam.name == name:
                return cam
        raise KeyError(f"no camera {name!r} in cell {self.name}; cameras: "
                       f"{[c.name for c in self.cameras]}")
