"""The players' side light curtain: described once in the cell file, checked when it is read, and
kept out of by every plan, so the robot never breaks a beam itself."""

import numpy as np
import pytest

from planning.game.cell import CellError, load_cell
from planning.motion.contact_geometry import PUSH_THROUGH
from planning.motion.plans import MoveStep


def test_the_default_cells_curtain_lies_between_the_players_and_the_tower(default_cell):
    curtain = default_cell.curtain
    assert curtain is not None and curtain.hold_s == pytest.approx(0.5)
    beams = curtain.beams()
    assert len(beams) == 26 and beams[0][0][2] == pytest.approx(0.03)
    assert beams[-1][0][2] == pytest.approx(0.78)
    assert curtain.tower_side((*default_cell.tower.position, 0.0)) == pytest.approx(0.47)
    assert curtain.tower_side((0.5, -0.6)) < 0 < curtain.tower_side(default_cell.arm.base_position)


@pytest.mark.parametrize("edit, field, allowed", [
    ("end_m = [0.12, -0.47]", "curtain.end_m", "at least 0.1 m from start_m"),
    ("start_m = [0.1, -0.03]\nend_m = [0.9, -0.03]", "curtain.start_m", "half-diagonal"),
    ("start_m = [0.1, -0.01]\nend_m = [0.9, 0.01]", "curtain.start_m", "half-diagonal"),
    ("hold_ms = -1.0", "curtain.hold_ms", "allowed 0 to 5000"),
])
def test_a_curtain_that_cannot_be_is_named(tmp_path, cell_toml, edit, field, allowed):
    text = cell_toml.split("[curtain]")[0] + "[curtain]\n" + edit + "\n" + \
        "\n".join(line for line in cell_toml.split("[curtain]")[1].splitlines()
                  if line.split(" = ")[0] not in [e.split(" = ")[0] for e in edit.splitlines()])
    path = tmp_path / "cell.toml"
    path.write_text(text)
    with pytest.raises(CellError) as err:
        load_cell(path)
    assert err.value.field == field and allowed in str(err.value)


def test_posts_given_either_way_round_face_the_same_way(tmp_path, cell_toml):
    path = tmp_path / "cell.toml"
    path.write_text(cell_toml.replace("start_m = [0.1, -0.47]", "start_m = [0.9, -0.47]")
                    .replace("end_m = [0.9, -0.47]", "end_m = [0.1, -0.47]"))
    curtain = load_cell(path).curtain
    assert curtain.tower_side((0.5, 0.0)) == pytest.approx(0.47)


def test_no_plan_takes_the_arm_into_the_players_side(planner, default_cell):
    curtain = default_cell.curtain
    home = planner.arm.home
    plans = [planner.push(home, layer, slot, PUSH_THROUGH, tower_layers=19)
             for layer in (3, 9, 17) for slot in (0, 2)]
    plans += [planner.pull(home, 12, 1, PUSH_THROUGH, tower_layers=19),
              planner.place(home, 19, 0)]
    nearest = np.inf
    for plan in plans:
        for step in (s for s in plan.steps if isinstance(s, MoveStep)):
            for q in step.trajectory.positions:
                caps = planner.arm.link_capsules(q, plan.held)
                side = np.minimum([curtain.tower_side(p) for p in caps.starts],
                                  [curtain.tower_side(p) for p in caps.ends]) - caps.radii
                nearest = min(nearest, float(side.min()))
    assert nearest >= curtain.keep_out - 1e-9


def test_a_configuration_reaching_into_the_players_side_is_refused(planner, default_cell):
    curtain = default_cell.curtain
    rng = np.random.default_rng(5)
    refused = 0
    for _ in range(300):
        q = rng.uniform(planner.arm.q_min, planner.arm.q_max)
        caps = planner.arm.link_capsules(q)
        side = np.minimum([curtain.tower_side(p) for p in caps.starts],
                          [curtain.tower_side(p) for p in caps.ends]) - caps.radii
        flagged = {c.part for c in planner.checker.contacts(q, 19, 0.0) if c.obstacle == "curtain"}
        assert flagged == {n for n, d in zip(caps.names, side) if d < curtain.keep_out}
        refused += bool(flagged)
    assert refused > 30                     # plenty of the arm's reach lies over there
