"""Build the MuJoCo model (MJCF text plus in-memory texture assets) of a cell and a drawn tower.

Physics settings that make a stack of 54 wooden blocks behave (each checked by `jenga-robot sim
check`):
- 1 ms steps, elliptic friction cones with a high impratio (20), so friction is much stiffer than
  the normal direction and static friction holds a block with little creep (about 3 um/s at the top
  of an awake 18-layer tower; it stops when the resting tower falls asleep). No-slip iterations
  would halve that creep but double the cost of every step; an impratio of 30 made a few towers
  blow up on their first steps (a light block balanced on a same-width block below);
- stiff block contacts (solref time constant 2 ms, impedance 0.99 to 0.999), so a block sinks a
  few hundredths of a millimetre under load, far less than the 0.18 mm thickness spread that
  decides which blocks carry the tower;
- a contact skin: every colliding geom is shrunk by `SKIN` and given a contact margin of `SKIN`,
  so two touching surfaces are found while their shrunk geoms are still `2 SKIN` apart and act
  exactly at the real surfaces. Contacts then come from separated boxes, never from barely
  penetrating nearly parallel faces, which otherwise flicker between contact sets and make a stack
  rattle. (MuJoCo sums the two geoms' margins and, in this version, does not subtract `gap`.)
  Blocks are drawn by full-size visual boxes; the shrunk collision boxes are in hidden group 3.

Contact groups (contype/conaffinity bits): 1 blocks and table, 2 arm links, 4 tool. Blocks collide
with everything; the table with blocks and the tool; arm links and the tool never with each other.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from hardware.sim import markers
from hardware.sim.blocks import BlockSpec
from planning.game.markers import marker_side
from planning.game.board import DEFAULT_BOARD
from planning.game.cell.model import Cell

TIMESTEP = 0.001
IMPRATIO = 20
# Island sleeping: bodies at rest (every speed below this, m/s or rad/s) stop being integrated
# until something awake touches them. Small enough that a tower starting to topple is moving
# faster than this within a few steps; the arm and instruments never sleep.
SLEEP_TOLERANCE = 1e-4
BLOCK_SOLREF = "0.002 1"
BLOCK_SOLIMP = "0.99 0.999 0.0005 0.5 2"
SKIN = 0.0005
TOOL_FRICTION = 0.3      # aluminium rod and finger backs on wood
PAD_FRICTION = 1.0       # rubber finger pads
TABLE_FRICTION = 0.5
ROD_DAMPING = 2.0        # N s/m, the fingertip's compliance damper
# Position servo gains per joint, N m/rad and N m s/rad: stiff like a real arm's joint controllers.
JOINT_KP = (4000.0, 4000.0, 2000.0, 400.0, 400.0, 200.0)
JOINT_KV = (200.0, 200.0, 100.0, 20.0, 20.0, 10.0)
FINGER_KP = 2000.0
FINGER_MASS = 0.05
ROD_MASS = 0.02
DECAL_THICKNESS = 0.0001
# The simulated person (hardware/sim/person.py): a pushing finger on a sprung tip, like a
# fingertip's give, and a placing hand that holds a block through a weld it switches on and off.
# Both wait under the table, out of every camera's sight, until the person plays.
PERSON_PARK = ((0.3, 0.0, -0.3), (0.6, 0.0, -0.3))      # finger, hand (world, m)
PERSON_FINGER_STIFFNESS = 300.0     # N/m: a fingertip gives a few millimetres under a newton
PERSON_FINGER_LENGTH = 0.05
PERSON_FINGER_RADIUS = 0.007
SKIN_RGBA = "0.86 0.67 0.55 1"


@dataclass(frozen=True)
class BuiltModel:
    xml: str
    assets: dict[str, bytes]


def _v(values) -> str:
    return " ".join(f"{float(v):.9g}" for v in values)


def _yaw_quat(yaw: float) -> str:
    return _v([np.cos(yaw / 2), 0.0, 0.0, np.sin(yaw / 2)])


def _rx_quat(angle: float) -> str:
    return _v([np.cos(angle / 2), np.sin(angle / 2), 0.0, 0.0])


def build(cell: Cell, blocks: list[BlockSpec], *, markers_on: bool = True,
          probe_stage: bool = False, board: str | None = None) -> BuiltModel:
    """The whole cell: table, tower, arm with tool and sensors, cameras; optionally the force-gauge
    probe stage used to measure block looseness (`hardware/sim/probe_stage.py`) and a calibration
    board, free-standing (`board="stage"`) or held on the tool flange (`board="hand"`)."""
    assets: dict[str, bytes] = {}
    tex, mats, bodies = [], [], []
    if board is not None:
        assets["board.png"] = markers.png(calibration_board_image())
        tex.append('<texture name="board" type="2d" file="board.png"/>')
        mats.append('<material name="board" texture="board"/>')
    tx, ty = cell.tower.position
    tyaw = cell.tower.yaw
    rot = np.array([[np.cos(tyaw), -np.sin(tyaw)], [np.sin(tyaw), np.cos(tyaw)]])
    shade = np.random.default_rng(len(blocks)).uniform(0.9, 1.1, len(blocks))
    sticker = marker_side(cell.blocks.height.mean)
    for b in blocks:
        xy = rot @ np.array(b.position[:2]) + np.array([tx, ty])
        half = np.array([b.length / 2, b.width / 2, b.height / 2])
        colour = _v(np.clip(np.array([0.80, 0.64, 0.42]) * shade[b.index % len(shade)], 0, 1))
        geoms = [f'<geom name="block{b.index}" class="block" size="{_v(half - SKIN)}" '
                 f'mass="{b.mass:.6g}" friction="{b.friction:.4g} 0.005 0.0001"/>',
                 f'<geom class="visual" type="box" size="{_v(half)}" rgba="{colour} 1"/>']
        if markers_on:
            for end in (1, -1):
                mid = markers.marker_id(b.index, end)
                name = f"marker{mid}"
                assets[f"{name}.png"] = markers.png(markers.end_face_image(mid, b.width, b.height, sticker))
                tex.append(f'<texture name="{name}" type="2d" file="{name}.png"/>')
                mats.append(f'<material name="{name}" texture="{name}" specular="0.1"/>')
                x = end * (b.length / 2 + DECAL_THICKNESS / 2)
                # The decal's texture reads correctly when the face is seen from outside: the -x
                # face is the +x decal turned half a turn about z.
                quat = "1 0 0 0" if end > 0 else _yaw_quat(np.pi)
                geoms.append(f'<geom class="decal" pos="{_v([x, 0, 0])}" quat="{quat}" '
                             f'size="{_v([DECAL_THICKNESS / 2, b.width / 2 - 1e-5, b.height / 2 - 1e-5])}" '
                             f'material="{name}"/>')
        bodies.append(f'<body name="block{b.index}" pos="{_v([xy[0], xy[1], b.position[2]])}" '
                      f'quat="{_yaw_quat(tyaw + b.yaw)}"><freejoint name="block{b.index}"/>'
                      + "".join(geoms) + "</body>")
    arm, actuators = _arm(cell, board == "hand")
    sensors = ('<force name="wrist_force" site="wrist_ft"/><torque name="wrist_torque" site="wrist_ft"/>'
               '<jointpos name="fingertip_travel" joint="fingertip"/>')
    stage = (_probe_stage(cell) if probe_stage else "") + _person()
    if board == "stage":
        stage += f'<body name="board_stage" mocap="true" pos="0 -1 0.5">{_board_geom()}</body>'
    xml = f"""<mujoco model="jenga-cell-{cell.name}">
  <compiler angle="radian" autolimits="true"/>
  <option timestep="{TIMESTEP}" cone="elliptic" impratio="{IMPRATIO}" integrator="implicitfast"
          solver="Newton" iterations="50" ls_iterations="50" tolerance="1e-10"
          sleep_tolerance="{SLEEP_TOLERANCE}">
    <flag sleep="enable"/>
  </option>
  <visual>
    <global offwidth="{max(c.width for c in cell.cameras)}" offheight="{max(c.height for c in cell.cameras)}"/>
    <headlight ambient="0.35 0.35 0.35" diffuse="0.45 0.45 0.45" specular="0.05 0.05 0.05"/>
    <quality shadowsize="0"/>
  </visual>
  <default>
    <default class="block">
      <geom type="box" condim="3" solref="{BLOCK_SOLREF}" solimp="{BLOCK_SOLIMP}"
            margin="{SKIN}" contype="1" conaffinity="7" group="3"/>
    </default>
    <default class="visual"><geom contype="0" conaffinity="0" mass="0" group="0"/></default>
    <default class="decal"><geom type="box" contype="0" conaffinity="0" mass="0" group="1"/></default>
    <default class="link">
      <geom type="capsule" contype="2" conaffinity="0" margin="{SKIN}" rgba="0.55 0.6 0.65 1"/>
    </default>
    <default class="tool">
      <geom contype="4" conaffinity="0" solref="{BLOCK_SOLREF}" solimp="{BLOCK_SOLIMP}"
            margin="{SKIN}" friction="{TOOL_FRICTION} 0.005 0.0001" rgba="0.25 0.25 0.28 1"/>
    </default>
  </default>
  <asset>
    <texture name="table" type="2d" builtin="checker" rgb1="0.42 0.42 0.44" rgb2="0.40 0.40 0.42" width="256" height="256"/>
    <material name="table" texture="table" texrepeat="8 8"/>
    {"".join(tex)}
    {"".join(mats)}
  </asset>
  <worldbody>
    <light name="key" pos="{_v([tx - 0.6, ty - 0.2, 1.4])}" dir="{_v([0.5, 0.15, -1])}" diffuse="0.5 0.5 0.5" castshadow="false"/>
    <light name="fill" pos="{_v([tx - 0.4, ty + 0.6, 1.0])}" dir="{_v([0.3, -0.5, -0.8])}" diffuse="0.3 0.3 0.3" castshadow="false"/>
    <geom name="table" type="box" size="1.2 1.2 0.02" pos="{_v([tx, ty, -0.02 - SKIN])}" material="table"
          contype="1" conaffinity="5" friction="{TABLE_FRICTION} 0.005 0.0001"
          solref="{BLOCK_SOLREF}" solimp="{BLOCK_SOLIMP}" margin="{SKIN}"/>
    {_cameras(cell)}
    {"".join(bodies)}
    {arm}
    {stage}
  </worldbody>
  <actuator>{actuators}</actuator>
  <equality>
    <!-- The fingers move together, as a parallel gripper's rack and pinion makes them: a grasp
         centres the block between them. -->
    <joint joint1="finger_a" joint2="finger_b" polycoef="0 1 0 0 0" solref="0.002 1"/>
    <!-- The person's grip: which block it holds and how are set when the hand closes. -->
    <weld name="person_grip" body1="person_hand" body2="block{blocks[0].index}" active="false"
          solref="0.01 1"/>
  </equality>
  <sensor>{sensors}</sensor>
</mujoco>"""
    return BuiltModel(xml, assets)


def _cameras(cell: Cell) -> str:
    out = []
    for cam in cell.cameras:
        axes = cam.axes()
        right, up = axes[:, 0], -axes[:, 1]
        # MuJoCo cameras look along -z with x right and y up in the image.
        # MuJoCo's principal point sits half a pixel off OpenCV's (pixel centres on integers) in
        # both axes: shift it so renders have exactly the cell's intrinsics in OpenCV's convention.
        principal = (cam.cx - 0.5 - cam.width / 2.0, cam.height / 2.0 - cam.cy - 0.5)
        out.append(f'<camera name="{cam.name}" pos="{_v(cam.position)}" xyaxes="{_v(right)} {_v(up)}" '
                   f'resolution="{cam.width} {cam.height}" focalpixel="{_v([cam.fx, cam.fy])}" '
                   f'principalpixel="{_v(principal)}" sensorsize="{_v([cam.width * 1e-5, cam.height * 1e-5])}"/>')
    return "".join(out)


def calibration_board_image() -> np.ndarray:
    """The ChArUco board of planning/game/board.py as an RGB texture."""
    spec = DEFAULT_BOARD
    dictionary = cv2.aruco.getPredefinedDictionary(getattr(cv2.aruco, spec.dictionary_name))
    board = cv2.aruco.CharucoBoard((spec.squares_x, spec.squares_y), spec.square_m, spec.marker_m,
                                   dictionary)
    w, h = spec.size_m
    grey = board.generateImage((int(round(w * 5000)), int(round(h * 5000))), marginSize=0, borderBits=1)
    return cv2.cvtColor(grey, cv2.COLOR_GRAY2RGB)


def _board_geom(pos=(0.0, 0.0, 0.0), quat="1 0 0 0") -> str:
    """The board as a thin visual box whose +x face carries the printed board (image right along
    +y, image up along +z), on a white backing a little larger than the print."""
    w, h = DEFAULT_BOARD.size_m
    return (f'<geom name="board" type="box" pos="{_v(pos)}" quat="{quat}" size="{_v([0.001, w / 2, h / 2])}" '
            f'material="board" contype="0" conaffinity="0" mass="0"/>'
            f'<geom type="box" pos="{_v(np.array(pos) - np.array([0.0015, 0, 0]))}" quat="{quat}" '
            f'size="{_v([0.0005, w / 2 + 0.01, h / 2 + 0.01])}" rgba="1 1 1 1" contype="0" '
            f'conaffinity="0" mass="0"/>')


# Where a hand-held board sits on the flange: 0.25 m out along the tool's z, its printed face
# looking along the tool's -y, so the arm can show it to a camera beside it.
HAND_BOARD_POS = (0.0, 0.0, 0.25)
HAND_BOARD_QUAT = _yaw_quat(-np.pi / 2)


def _arm(cell: Cell, hand_board: bool = False) -> tuple[str, str]:
    """The arm as nested bodies, one per DH link, each with a hinge about its local z; the tool on
    the flange. Body i sits at DH frame i-1; its legs are the planner's collision capsules."""
    arm = cell.arm
    links = arm.links
    open_tags, close_tags = [], []
    never_sleep = ' sleep="never"'  # a servoed arm is never at rest in MuJoCo's sense
    for i, lk in enumerate(links):
        name = f"link{i + 1}"
        if i == 0:
            pos, quat = _v(arm.base_position), _yaw_quat(arm.base_yaw)
        else:
            prev = links[i - 1]
            pos = _v([prev.a, 0.0, prev.d])
            quat = _rx_quat(prev.alpha)
        legs = []
        offset_rot = np.array([[np.cos(lk.offset), -np.sin(lk.offset)], [np.sin(lk.offset), np.cos(lk.offset)]])
        elbow = np.array([0.0, 0.0, lk.d])
        tip = np.array([*(offset_rot @ np.array([lk.a, 0.0])), lk.d])
        total = abs(lk.d) + abs(lk.a)
        if abs(lk.d) > 1e-9:
            legs.append(f'<geom class="link" fromto="{_v([0, 0, 0])} {_v(elbow)}" size="{lk.radius - SKIN}" '
                        f'mass="{lk.mass * abs(lk.d) / total:.6g}"/>')
        if abs(lk.a) > 1e-9:
            legs.append(f'<geom class="link" fromto="{_v(elbow)} {_v(tip)}" size="{lk.radius - SKIN}" '
                        f'mass="{lk.mass * abs(lk.a) / total:.6g}"/>')
        # The joint of body i+1 hangs off this body at the end of this link, turned by the offset.
        open_tags.append(
            f'<body name="{name}" pos="{pos}" quat="{quat}" gravcomp="1"{never_sleep if i == 0 else ""}>'
            f'<joint name="joint{i + 1}" axis="0 0 1" range="{lk.q_min} {lk.q_max}" armature="0.05" damping="0.5"/>'
            + "".join(legs))
        if abs(lk.offset) > 1e-12:
            open_tags.append(f'<body name="{name}_offset" quat="{_yaw_quat(lk.offset)}" gravcomp="1">')
            close_tags.append("</body>")
        close_tags.append("</body>")
    last = links[-1]
    held = _board_geom(HAND_BOARD_POS, HAND_BOARD_QUAT) if hand_board else ""
    flange = (f'<body name="tool" pos="{_v([last.a, 0.0, last.d])}" quat="{_rx_quat(last.alpha)}" gravcomp="1">'
              + _tool(cell) + held + "</body>")
    xml = "".join(open_tags) + flange + "".join(reversed(close_tags))
    acts = []
    for i, lk in enumerate(links):
        acts.append(f'<position name="joint{i + 1}" joint="joint{i + 1}" kp="{JOINT_KP[i]}" kv="{JOINT_KV[i]}" '
                    f'ctrlrange="{lk.q_min} {lk.q_max}" forcerange="{-lk.torque_max} {lk.torque_max}"/>')
    grip = cell.tool.grip_force
    for side in ("a", "b"):
        acts.append(f'<position name="finger_{side}" joint="finger_{side}" kp="{FINGER_KP}" kv="20" '
                    f'ctrlrange="0 {cell.tool.stroke / 2}" forcerange="{-grip} {grip}"/>')
    return xml, "".join(acts)


def _tool(cell: Cell) -> str:
    """Sensor site, gripper housing, two fingers on slide joints along y, and the fingertip rod on a
    sprung slide joint along x (its compliance)."""
    tool = cell.tool
    mass_body = max(tool.mass - 2 * FINGER_MASS - ROD_MASS, 0.05)
    parts = [f'<site name="wrist_ft" pos="{_v(tool.sensor_offset)}" size="0.005"/>',
             f'<site name="grasp" pos="{_v(tool.grasp_centre)}" size="0.003" rgba="1 0 0 0.3"/>']
    body_caps = tool.body
    for k, cap in enumerate(body_caps):
        parts.append(f'<geom class="tool" type="capsule" fromto="{_v(cap.start)} {_v(cap.end)}" '
                     f'size="{cap.radius - SKIN}" mass="{mass_body / len(body_caps):.6g}"/>')
    gz = tool.grasp_centre[2]
    finger_len = tool.finger_length
    pad_half = tool.pad_length / 2
    # The fingers are as thick as the planner's finger capsules (x along the held block's height).
    half = tool.finger_thickness / 2
    for side, sign in (("a", 1.0), ("b", -1.0)):
        # Each finger's joint opens it outward from the closed position (pads touching at y = 0).
        parts.append(
            f'<body name="finger_{side}" pos="0 0 0">'
            f'<joint name="finger_{side}" type="slide" axis="0 {sign} 0" range="0 {tool.stroke / 2}" damping="5"/>'
            f'<geom class="tool" type="box" pos="{_v([0, sign * (half + 0.001), gz + pad_half - finger_len / 2])}" '
            f'size="{_v([half - SKIN, half - SKIN, finger_len / 2 - SKIN])}" mass="{FINGER_MASS}"/>'
            f'<geom name="pad_{side}" class="tool" type="box" pos="{_v([0, sign * (SKIN + 0.0005), gz])}" '
            f'size="{_v([half - 2 * SKIN, 0.0005, pad_half])}" friction="{PAD_FRICTION} 0.01 0.0001" mass="0.001" '
            f'rgba="0.1 0.1 0.1 1"/></body>')
    rod = [f'<geom class="tool" type="capsule" fromto="{_v(c.start)} {_v(c.end)}" size="{c.radius - SKIN}" '
           f'mass="{ROD_MASS / len(tool.probe):.6g}" rgba="0.7 0.7 0.75 1"/>' for c in tool.probe]
    k = tool.fingertip_stiffness
    parts.append(f'<body name="fingertip_rod"><joint name="fingertip" type="slide" axis="1 0 0" '
                 f'stiffness="{k}" damping="{ROD_DAMPING}" range="{-tool.fingertip_travel} {tool.fingertip_travel}"/>'
                 + "".join(rod) + "</body>")
    return "".join(parts)


def _person() -> str:
    """The simulated person's finger (a sprung tip that collides with blocks, on the back of a
    hand) and placing hand (seen, not colliding: it holds a block by the `person_grip` weld)."""
    finger, hand = (_v(p) for p in PERSON_PARK)
    skin = f'class="visual" rgba="{SKIN_RGBA}"'
    return (f'<body name="person_finger" mocap="true" pos="{finger}">'
            f'<geom type="box" pos="-0.07 0 0.012" size="0.045 0.04 0.012" {skin}/>'
            f'<body name="person_fingertip" sleep="never">'
            f'<joint name="person_finger_spring" type="slide" axis="1 0 0" '
            f'stiffness="{PERSON_FINGER_STIFFNESS}" damping="{ROD_DAMPING}" range="-0.02 0.02"/>'
            f'<geom type="capsule" fromto="-0.02 0 0 {PERSON_FINGER_LENGTH - PERSON_FINGER_RADIUS} 0 0" '
            f'size="{PERSON_FINGER_RADIUS - SKIN}" contype="4" conaffinity="0" margin="{SKIN}" '
            f'solref="{BLOCK_SOLREF}" solimp="{BLOCK_SOLIMP}" friction="0.6 0.005 0.0001" '
            f'mass="0.01" rgba="{SKIN_RGBA}"/></body></body>'
            f'<body name="person_hand" mocap="true" pos="{hand}">'
            f'<geom type="box" pos="0 0 0.03" size="0.045 0.04 0.012" {skin}/>'
            f'<geom type="box" pos="0 0.022 0.0045" size="0.03 0.008 0.012" {skin}/>'
            f'<geom type="box" pos="0 -0.022 0.0045" size="0.03 0.008 0.012" {skin}/></body>')


def _probe_stage(cell: Cell) -> str:
    """A motorised force gauge (a lab instrument, not part of the robot): a mocap carriage with a
    sprung tip of the cell's fingertip stiffness, parked away from the tower."""
    tool = cell.tool
    return (f'<body name="probe_stage" mocap="true" pos="0 -1 0.5">'
            f'<geom type="box" size="0.01 0.01 0.01" contype="0" conaffinity="0" rgba="0.9 0.3 0.2 1"/>'
            f'<body name="probe_tip" sleep="never"><joint name="probe_spring" type="slide" axis="1 0 0" '
            f'stiffness="{tool.fingertip_stiffness}" damping="{ROD_DAMPING}" '
            f'range="{-tool.fingertip_travel} {tool.fingertip_travel}"/>'
            f'<geom class="tool" type="capsule" fromto="0 0 0 0.03 0 0" size="{tool.fingertip_radius - SKIN}" '
            f'mass="0.005"/></body></body>')
