"""Load a cell file (TOML, human units in the key names) into a `Cell` in SI units.

Every field is checked; the first bad one raises `CellError` naming the field, the value and what is
allowed, e.g. `arm.joints[3].speed_max_deg_s = -5: allowed 1 to 1000`. A key the loader does not read
is an error too: a misspelled `[curtian]` or `rol_deg` would otherwise drop a safety device or a
setting without a word.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from dataclasses import replace
from pathlib import Path
from typing import Any

from planning.game.cell.model import (Arm, BlockSet, Camera, Capsule, Cell, Curtain, DHLink, Spread,
                                 Tool, TowerPlacement)

MM = 1e-3
MS = 1e-3
DEG = math.pi / 180.0


class CellError(ValueError):
    """A cell file that cannot describe a cell. `field` is a dotted path into the file."""

    def __init__(self, source: str, field: str, value: Any, allowed: str):
        self.source, self.field, self.value, self.allowed = source, field, value, allowed
        if value is _MISSING:
            shown = "missing"
        elif isinstance(value, dict) or (isinstance(value, list) and value
                                         and all(isinstance(v, dict) for v in value)):
            shown = "(a table)"
        else:
            shown = f"= {value!r}"
        super().__init__(f"cell file {source}: {field} {shown}: {allowed}")


_MISSING = object()


class _Reader:
    """Reads typed values out of one TOML table, remembering the path for messages and the keys
    read, so that `check_unread` can name a key nobody asked for."""

    def __init__(self, table: Any, path: str, source: str, readers: list[_Reader] | None = None):
        self.table, self.path, self.source = table, path, source
        if not isinstance(table, dict):
            raise CellError(source, path or "(top level)", table, "expected a table")
        self.read: set[str] = set()
        self._readers = readers if readers is not None else []
        self._readers.append(self)

    def check_unread(self) -> None:
        """Raise for the first key of any table read through this reader that nothing read."""
        for reader in self._readers:
            for key in reader.table:
                if key not in reader.read:
                    close = difflib.get_close_matches(key, reader.read, n=1)
                    hint = f"did you mean {close[0]!r}?" if close else \
                        f"known here: {', '.join(sorted(reader.read))}"
                    raise CellError(reader.source, reader._field(key), reader.table[key],
                                    f"unknown key; {hint}")

    def _field(self, key: str) -> str:
        return f"{self.path}.{key}" if self.path else key

    def _raw(self, key: str, default: Any = _MISSING) -> Any:
        self.read.add(key)
        value = self.table.get(key, default)
        if value is _MISSING:
            raise CellError(self.source, self._field(key), _MISSING, "required")
        return value

    def number(self, key: str, low: float, high: float, default: Any = _MISSING) -> float:
        value = self._raw(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) \
                or not low <= value <= high:
            raise CellError(self.source, self._field(key), value, f"allowed {low:g} to {high:g}")
        return float(value)

    def integer(self, key: str, low: int, high: int, default: Any = _MISSING) -> int:
        value = self._raw(key, default)
        if type(value) is not int or not low <= value <= high:
            raise CellError(self.source, self._field(key), value,
                            f"allowed an integer {low} to {high}")
        return value

    def text(self, key: str, default: Any = _MISSING) -> str:
        value = self._raw(key, default)
        if not isinstance(value, str) or not value.strip():
            raise CellError(self.source, self._field(key), value, "allowed a non-empty string")
        return value

    def vector(self, key: str, size: int, low: float, high: float, scale: float = 1.0,
               default: Any = _MISSING) -> tuple[float, ...]:
        value = self._raw(key, default)
        if (not isinstance(value, list) or len(value) != size
                or any(isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v)
                       or not low <= v <= high for v in value)):
            raise CellError(self.source, self._field(key), value,
                            f"allowed a list of {size} numbers, each {low:g} to {high:g}")
        return tuple(float(v) * scale for v in value)

    def optional_table(self, key: str) -> _Reader | None:
        self.read.add(key)
        return self.table_of(key) if key in self.table else None

    def table_of(self, key: str) -> _Reader:
        return _Reader(self._raw(key), self._field(key), self.source, self._readers)

    def tables(self, key: str, count_low: int, count_high: int) -> list[_Reader]:
        value = self._raw(key)
        if not isinstance(value, list) or not count_low <= len(value) <= count_high:
            raise CellError(self.source, self._field(key), value,
                            f"allowed {count_low} to {count_high} tables ([[{self._field(key)}]])")
        return [_Reader(v, f"{self._field(key)}[{i}]", self.source, self._readers)
                for i, v in enumerate(value)]

    def fail(self, key: str, value: Any, allowed: str) -> None:
        raise CellError(self.source, self._field(key), value, allowed)


def load_cell(path: str | Path) -> Cell:
    """Read and check a cell file. Raises CellError (a ValueError) for anything wrong with it."""
    path = Path(path)
    source = path.name
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise CellError(str(path), "(file)", str(path), f"cannot be read: {exc.strerror or exc}") \
            from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise CellError(source, "(file)", str(path), f"is not valid TOML: {exc}") from None
    return parse_cell(data, source)


def parse_cell(data: dict, source: str = "<cell>") -> Cell:
    top = _Reader(data, "", source)
    arm = _arm(top.table_of("arm"))
    cell = Cell(
        name=top.text("name"),
        arm=arm,
        tool=_tool(top.table_of("tool")),
        cameras=_cameras(top),
        tower=_tower(top.table_of("tower")),
        blocks=_blocks(top.table_of("blocks")),
        source=source,
    )
    curtain = top.optional_table("curtain")
    if curtain is not None:
        cell = replace(cell, curtain=_curtain(curtain, cell))
    top.check_unread()
    return cell


def _arm(r: _Reader) -> Arm:
    links = []
    for j in r.tables("joints", 6, 6):
        q_min = j.number("min_deg", -360, 360) * DEG
        q_max = j.number("max_deg", -360, 360) * DEG
        if q_max <= q_min:
            j.fail("max_deg", q_max / DEG, f"allowed above min_deg ({q_min / DEG:g})")
        links.append(DHLink(
            d=j.number("d_m", -2, 2), a=j.number("a_m", -2, 2),
            alpha=j.number("alpha_deg", -180, 180) * DEG,
            offset=j.number("offset_deg", -180, 180, default=0.0) * DEG,
            q_min=q_min, q_max=q_max,
            speed_max=j.number("speed_max_deg_s", 1, 1000) * DEG,
            accel_max=j.number("accel_max_deg_s2", 1, 10000) * DEG,
            radius=j.number("link_radius_m", 0.005, 0.3),
            mass=j.number("link_mass_kg", 0.01, 100),
            torque_max=j.number("torque_max_nm", 0.1, 2000)))
    home = r.vector("home_deg", 6, -360, 360, scale=DEG)
    for i, (q, link) in enumerate(zip(home, links)):
        if not link.q_min <= q <= link.q_max:
            r.fail("home_deg", [round(v / DEG, 3) for v in home],
                   f"joint {i + 1} outside its limits {link.q_min / DEG:g} to {link.q_max / DEG:g} deg")
    return Arm(name=r.text("name"), base_position=r.vector("base_xyz_m", 3, -5, 5),
               base_yaw=r.number("base_yaw_deg", -180, 180) * DEG, links=tuple(links), home=home)


def _capsules(r: _Reader, key: str) -> tuple[Capsule, ...]:
    return tuple(Capsule(c.vector("start_m", 3, -1, 1), c.vector("end_m", 3, -1, 1),
                         c.number("radius_m", 0.001, 0.2)) for c in r.tables(key, 1, 16))


def _tool(r: _Reader) -> Tool:
    stroke = r.number("stroke_mm", 30, 200) * MM
    return Tool(
        mass=r.number("mass_kg", 0.05, 10),
        sensor_offset=r.vector("sensor_offset_m", 3, -0.5, 0.5),
        sensor_force_range=r.number("sensor_force_range_n", 1, 2000),
        sensor_noise_force=r.number("sensor_noise_n", 0, 5),
        sensor_noise_torque=r.number("sensor_noise_nm", 0, 1),
        sensor_bias_drift=r.number("sensor_bias_drift_n_per_s", 0, 1),
        grasp_centre=r.vector("grasp_centre_m", 3, -0.5, 0.5),
        stroke=stroke,
        finger_length=r.number("finger_length_mm", 5, 200) * MM,
        pad_length=r.number("pad_length_mm", 5, 100) * MM,
        grip_force=r.number("grip_force_n", 1, 200),
        fingertips=_fingertips(r),
        fingertip_radius=r.number("fingertip_radius_mm", 1, 7) * MM,
        fingertip_stiffness=r.number("fingertip_stiffness_n_per_mm", 0.01, 100) / MM,
        fingertip_travel=r.number("fingertip_travel_mm", 1, 50) * MM,
        body=_capsules(r, "body"), fingers=_capsules(r, "fingers"), probe=_capsules(r, "probe"))


def _fingertips(r: _Reader) -> tuple[tuple[float, float, float], ...]:
    tips = []
    for t in r.tables("fingertips", 1, 2):
        tip = t.vector("position_m", 3, -0.5, 0.5)
        if abs(tip[0]) < 0.05:
            t.fail("position_m", list(tip), "allowed a tip at least 0.05 m out along x, the rod's axis")
        if tips and (tip[0] > 0) == (tips[0][0] > 0):
            t.fail("position_m", list(tip), "allowed one tip on each side (+x and -x)")
        tips.append(tip)
    return tuple(tips)


def _cameras(top: _Reader) -> tuple[Camera, ...]:
    cameras = []
    for c in top.tables("cameras", 1, 8):
        width, height = c.integer("width_px", 64, 7680), c.integer("height_px", 48, 4320)
        cam = Camera(
            name=c.text("name"), width=width, height=height,
            fx=c.number("fx_px", 10, 100000), fy=c.number("fy_px", 10, 100000),
            cx=c.number("cx_px", 0, width), cy=c.number("cy_px", 0, height),
            fps=c.number("fps", 1, 240),
            position=c.vector("position_m", 3, -5, 5), look_at=c.vector("look_at_m", 3, -5, 5),
            roll=c.number("roll_deg", -180, 180, default=0.0) * DEG)
        if math.dist(cam.position, cam.look_at) < 0.05:
            c.fail("look_at_m", list(cam.look_at), "allowed a point at least 0.05 m from position_m")
        if any(other.name == cam.name for other in cameras):
            c.fail("name", cam.name, "allowed a name no other camera has")
        cameras.append(cam)
    return tuple(cameras)


def _tower(r: _Reader) -> TowerPlacement:
    return TowerPlacement(position=r.vector("position_m", 2, -5, 5),
                          yaw=r.number("yaw_deg", -180, 180) * DEG)


def _curtain(r: _Reader, cell: Cell) -> Curtain:
    start, end = r.vector("start_m", 2, -5, 5), r.vector("end_m", 2, -5, 5)
    if math.dist(start, end) < 0.1:
        r.fail("end_m", list(end), "allowed a post at least 0.1 m from start_m")
    low = r.number("lowest_beam_mm", 5, 500) * MM
    high = r.number("highest_beam_mm", low / MM, 3000) * MM
    curtain = Curtain(start, end, low, high,
                      beam_spacing=r.number("beam_spacing_mm", 5, 100) * MM,
                      scan_period=r.number("response_ms", 1, 100) * MS,
                      hold_s=r.number("hold_ms", 0, 5000) * MS,
                      keep_out=r.number("keep_out_mm", 0, 500) * MM)
    if curtain.tower_side(cell.tower.position) < 0:      # the tower on the positive side
        curtain = replace(curtain, start=end, end=start)
    reach = cell.blocks.length.high / 2 * math.sqrt(2)
    if curtain.tower_side(cell.tower.position) < reach:
        r.fail("start_m", list(start), f"allowed a line at least {reach:.3f} m from the tower's "
                                       f"centre (its footprint's half-diagonal)")
    if curtain.tower_side(cell.arm.base_position) < curtain.keep_out:
        r.fail("start_m", list(start), "allowed a line with the arm's base on the tower's side, "
                                       "keep_out_mm from it")
    return curtain


def _spread(r: _Reader, key: str, low: float, high: float, scale: float) -> Spread:
    s = r.table_of(key)
    mean = s.number("mean", low, high)
    lo, hi = s.number("min", low, high), s.number("max", low, high)
    if not lo <= mean <= hi:
        s.fail("mean", mean, f"allowed between min ({lo:g}) and max ({hi:g})")
    std = s.number("std", 0, (high - low))
    return Spread(mean * scale, std * scale, lo * scale, hi * scale)


def _blocks(r: _Reader) -> BlockSet:
    count = r.integer("count", 3, 300)
    if count % 3:
        r.fail("count", count, "allowed a multiple of 3 (a tower starts as complete layers)")
    return BlockSet(count=count,
                    length=_spread(r, "length_mm", 10, 1000, MM),
                    width=_spread(r, "width_mm", 5, 400, MM),
                    height=_spread(r, "height_mm", 3, 200, MM),
                    mass=_spread(r, "mass_g", 1, 5000, 1e-3),
                    friction=_spread(r, "friction", 0.05, 1.5, 1.0),
                    side_gap=r.number("side_gap_mm", 0.0, 5.0, 0.25) * MM)
