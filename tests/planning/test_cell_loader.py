import dataclasses
import math

import pytest

from planning.game.cell import CellError, load_cell


def test_default_cell_is_typed_immutable_and_in_si_units(default_cell):
    cell = default_cell
    assert cell.arm.joint_count == 6
    assert cell.tool.stroke >= 0.030
    assert 0.0001 < cell.blocks.height.mean < 0.1  # metres, not millimetres
    assert math.isclose(cell.blocks.length.mean, 0.07503)
    assert cell.blocks.count == 54 and cell.blocks.layers == 18
    assert cell.blocks.mass.low == pytest.approx(0.0159)
    assert all(link.speed_max > 0 for link in cell.arm.links)
    assert len(cell.cameras) == 2 and {c.width for c in cell.cameras} == {1280}
    assert {c.height for c in cell.cameras} == {720}
    assert cell.tool.fingertip_stiffness > 0
    with pytest.raises(dataclasses.FrozenInstanceError):
        cell.arm.name = "other"


def write(tmp_path, text):
    path = tmp_path / "cell.toml"
    path.write_text(text)
    return path


@pytest.mark.parametrize("old, new, field, allowed", [
    ("stroke_mm = 40.0", "stroke_mm = 20.0", "tool.stroke_mm", "allowed 30 to 200"),
    ("speed_max_deg_s = 180.0", "speed_max_deg_s = -5.0", "arm.joints[0].speed_max_deg_s",
     "allowed 1 to 1000"),
    ("count = 54", "count = 53", "blocks.count", "multiple of 3"),
    ("width_px = 1280", 'width_px = "wide"', "cameras[0].width_px", "integer"),
    ("yaw_deg = 45.0", "yaw_deg = 400.0", "tower.yaw_deg", "allowed -180 to 180"),
    ("fingertip_stiffness_n_per_mm = 0.5", "", "tool.fingertip_stiffness_n_per_mm", "required"),
    ("base_xyz_m = [0.0, 0.0, 0.0]", "base_xyz_m = [0.0, 0.0]", "arm.base_xyz_m", "list of 3"),
])
def test_a_malformed_cell_names_field_value_and_what_is_allowed(tmp_path, cell_toml, old, new,
                                                                  field, allowed):
    assert old in cell_toml
    with pytest.raises(CellError) as err:
        load_cell(write(tmp_path, cell_toml.replace(old, new, 1)))
    message = str(err.value)
    assert field in message and allowed in message
    assert err.value.field == field
    assert "\n" not in message


def test_home_outside_the_joint_limits(tmp_path, cell_toml):
    text = cell_toml.replace("home_deg = [0.0, -130.0, 120.0", "home_deg = [0.0, -130.0, 200.0")
    with pytest.raises(CellError, match="arm.home_deg.*joint 3"):
        load_cell(write(tmp_path, text))


def test_not_toml_and_missing_file(tmp_path):
    with pytest.raises(CellError, match="not valid TOML"):
        load_cell(write(tmp_path, "name = [unclosed"))
    with pytest.raises(CellError, match="cannot be read"):
        load_cell(tmp_path / "absent.toml")


@pytest.mark.parametrize("old, new, field, hint", [
    ("[curtain]", "[curtian]", "curtian", "did you mean 'curtain'?"),
    ("roll_deg", "rol_deg", "cameras[0].rol_deg", "did you mean 'roll_deg'?"),
    ("stroke_mm = 40.0", "stroke_mm = 40.0\ngrip_speed_mm_s = 10.0", "tool.grip_speed_mm_s",
     "known here: body,"),
    ("[[tool.fingertips]]\n", "[[tool.fingertips]]\nposition_mm = [1, 2, 3]\n",
     "tool.fingertips[0].position_mm", "did you mean 'position_m'?"),
])
def test_an_unknown_key_is_an_error_not_a_silent_default(tmp_path, cell_toml, old, new, field, hint):
    """A misspelled section or key would drop a safety device or a setting without a word."""
    assert old in cell_toml
    with pytest.raises(CellError) as err:
        load_cell(write(tmp_path, cell_toml.replace(old, new, 1)))
    assert err.value.field == field
    assert "unknown key" in str(err.value) and hint in str(err.value)
    assert "\n" not in str(err.value)


def test_the_curtain_stays_optional(tmp_path, cell_toml):
    head, _, tail = cell_toml.partition("[curtain]")
    without = head + tail[tail.index("\n["):]
    assert load_cell(write(tmp_path, without)).curtain is None
