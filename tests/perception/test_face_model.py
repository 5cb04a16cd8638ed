"""The pure geometry under perception: the face table, marker centres, the fit's derivatives and
the sticker test, checked against their definitions (no rendering)."""

import numpy as np
import pytest
from hypothesis import assume, given, settings, strategies as st

from perception.markers import diagonal_crossings
from perception.observation import TowerObserver
from perception.tower_estimator import TowerEstimator
from perception.tower_model import TowerModel, face_key, table_row
from planning.game.tower import SLOTS


@pytest.fixture(scope="module")
def model(default_cell):
    return TowerModel(default_cell.blocks)


def test_the_face_table_is_the_tower_geometry(model):
    pitch = model.nominal_pitch
    table = model.face_table(range(1, 19), pitch)
    assert len(table) == 18 * len(SLOTS) * 2
    # Ordered layer, then slot, then end (+1 first).
    assert list(zip(table.layer[:4], table.slot[:4], table.end[:4])) == [(1, 0, 1), (1, 0, -1), (1, 1, 1), (1, 1, -1)]
    for i in range(len(table)):
        layer, slot, end = int(table.layer[i]), int(table.slot[i]), int(table.end[i])
        centre = table.centre[i]
        assert np.allclose(table.axis[i], model.axis(layer)) and np.allclose(table.across[i], model.across(layer))
        assert centre[2] == pytest.approx(model.layer_centre_z(layer, pitch))
        assert centre @ table.axis[i] == pytest.approx(end * model.length / 2)
        assert centre @ table.across[i] == pytest.approx(float(model.geometry.slot_offset(np.array([slot]))[0]))
        # The marker: a square of the marker's side, centred on the face, in the face's plane.
        corners = table.corners[i]
        assert np.allclose(corners.mean(axis=0), centre)
        assert np.allclose((corners - centre) @ table.outward[i], 0.0)
        sides = np.linalg.norm(np.roll(corners, -1, axis=0) - corners, axis=1)
        assert np.allclose(sides, model.marker_side)
        # Corners go clockwise seen from outside (top-left, top-right, bottom-right, bottom-left).
        turn = np.cross(corners[1] - corners[0], corners[2] - corners[1])
        assert turn @ table.outward[i] < 0
        one = model.face(layer, slot, end, pitch)
        assert np.allclose(one.corners, corners) and np.allclose(one.centre, centre)


def test_faces_seen_from_a_point_are_the_ones_facing_it(model):
    table = model.face_table(range(1, 7), model.nominal_pitch)
    eye = np.array([0.6, 0.2, 0.3])
    seen = table.visible_from(eye)
    assert 0 < len(seen) < len(table)
    facing = {(int(f.layer), int(f.slot), int(f.end)) for f in table.faces() if (eye - f.centre) @ (f.axis * f.end) > 0}
    assert {(f.layer, f.slot, f.end) for f in seen.faces()} == facing


@given(st.lists(st.tuples(st.integers(0, 100), st.sampled_from(SLOTS), st.sampled_from([1, -1])), unique=True, max_size=60))
def test_face_keys_name_one_face_each(faces):
    keys = [int(face_key(*f)) for f in faces]
    assert len(set(keys)) == len(keys)
    if faces:
        layer, slot, end = (np.array(c) for c in zip(*faces))
        assert list(face_key(layer, slot, end)) == keys


@settings(max_examples=200, deadline=None)
@given(st.floats(-0.6, 0.6), st.floats(-0.6, 0.6), st.floats(20, 80), st.floats(0, 2 * np.pi))
def test_diagonals_cross_at_the_image_of_the_centre(tilt_x, tilt_y, size_px, spin):
    # A unit square seen in perspective (a homography): its centre's image is where the
    # diagonals cross, which the corners' mean is not.
    c, s = np.cos(spin), np.sin(spin)
    H = np.array([[size_px * c, -size_px * s, 640.0], [size_px * s, size_px * c, 360.0], [tilt_x, tilt_y, 1.0]])
    # a singular homography maps the square onto a line (seen edge-on): no marker image
    assume(abs(np.linalg.det(H)) > 0.05 * size_px ** 2)
    square = np.array([[-0.5, 0.5, 1], [0.5, 0.5, 1], [0.5, -0.5, 1], [-0.5, -0.5, 1]])
    image = square @ H.T
    corners = image[:, :2] / image[:, 2:]
    assert np.allclose(diagonal_crossings(corners[None])[0], [640.0, 360.0], atol=1e-6)


def test_a_degenerate_quad_has_its_mean_for_a_centre():
    flat = np.array([[[0.0, 0.0], [1.0, 0.0], [2.0, 0.0], [3.0, 0.0]],
                     [[0.0, 0.0], [2.0, 0.0], [2.0, 2.0], [0.0, 2.0]]])
    assert np.allclose(diagonal_crossings(flat), [[1.5, 0.0], [1.0, 1.0]])


@settings(max_examples=50, deadline=None)
@given(offsets=st.lists(st.floats(-0.05, 0.05), min_size=6, max_size=6), seed=st.integers(0, 1000))
def test_the_fit_derivatives_are_the_residuals_slopes(model, offsets, seed):
    estimator = TowerEstimator(model, [])
    rng = np.random.default_rng(seed)
    faces = model.face_table(range(1, 15), model.nominal_pitch)
    pick = rng.choice(len(faces), 12, replace=False)
    data = {"centres": faces.centre[pick] + rng.normal(0, 0.003, (12, 3)) + [0.5, 0.1, 0.0],
            "across": faces.across[pick], "axis": faces.axis[pick], "layer": faces.layer[pick].astype(float),
            "flat": faces.centre[pick] * [1.0, 1.0, 0.0]}
    params = np.array([0.5, 0.1, 0.3, model.nominal_pitch, 0.0, 0.0]) + np.array(offsets) * [1, 1, 10, 0.1, 1, 1]
    J = estimator._jacobian(data, params)
    step = 1e-7
    numeric = np.stack([(estimator._residuals(data, params + step * e) - estimator._residuals(data, params - step * e))
                        / (2 * step) for e in np.eye(6)], axis=1)
    assert np.allclose(J, numeric, atol=1e-6)


def _sticker_image(white: bool, dark: bool) -> np.ndarray:
    image = np.full((120, 160, 3), (150, 110, 70), np.uint8)      # wood
    if white:
        image[40:80, 60:100] = 230
    if dark:
        image[50:70, 70:90] = 20
    return image


QUAD = np.array([[60, 40], [99, 40], [99, 79], [60, 79]], np.int32)


@pytest.mark.parametrize("white,dark,expected", [(True, True, True), (True, False, False),
                                                 (False, False, False), (False, True, False)])
def test_a_sticker_is_white_and_black(white, dark, expected):
    assert TowerObserver._white(_sticker_image(white, dark), QUAD) is expected


def test_a_quad_off_the_image_or_too_small_is_no_sticker():
    image = _sticker_image(True, True)
    assert TowerObserver._white(image, QUAD + [500, 0]) is False
    assert TowerObserver._white(image, np.array([[70, 50], [72, 50], [72, 52], [70, 52]], np.int32)) is False


def test_a_point_on_a_face_names_that_face_and_one_off_every_face_none(model):
    from perception.tower_estimator import SLOT_GATE_M
    from planning.game.geometry import TowerPose
    estimator = TowerEstimator(model, [])
    pose = TowerPose(0.5, 0.1, 0.4, model.nominal_pitch * 1.01, 0.0, 0.0)
    table = model.face_table(range(1, 13), pose.pitch)
    assert list(table_row(table.layer, table.slot, table.end)) == list(range(len(table)))
    found = estimator._faces_at(pose.to_world(table.centre), pose, 12)
    assert [(f.layer, f.slot, f.end) for f in found] == list(zip(table.layer, table.slot, table.end))
    # Half-way between two slots (or beside the tower): further than the gate from any face.
    assert model.slot_pitch / 2 > SLOT_GATE_M
    off = table.centre + table.across * (model.slot_pitch / 2)
    assert all(f is None for f in estimator._faces_at(pose.to_world(off), pose, 12))
    above = table.centre[-6:] + np.array([0.0, 0.0, pose.pitch])   # layer 13, beyond `top`
    assert all(f is None for f in estimator._faces_at(pose.to_world(above), pose, 12))
