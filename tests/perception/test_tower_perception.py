"""Perception on rendered frames with known answers: occupancy, protrusions, falls."""

import numpy as np
import pytest

from perception.camera_model import CameraModel
from perception.markers import MarkerDetector
from perception.observation import PerceptionError
from perception.pipeline import Perception
from perception.tower_estimator import TowerEstimator
from tests.perception.conftest import frames_of


def test_nominal_cameras_project_where_the_renderer_draws(sim_world, default_cell):
    detector = MarkerDetector(54)
    for cam in default_cell.cameras:
        model = CameraModel.from_cell(cam)
        offsets = []
        for s in detector.detect(sim_world.render(cam.name)):
            body = sim_world.block_body[s.block]
            length = sim_world.block_spec(s.block).length
            centre = sim_world.data.xpos[body] + sim_world.data.xmat[body].reshape(3, 3)[:, 0] * s.end * length / 2
            offsets.append(s.centre - model.project(centre[None, :])[0])
        offsets = np.array(offsets)
        assert len(offsets) >= 45
        assert np.all(np.abs(np.median(offsets, axis=0)) < 0.3)


def test_camera_rays_go_back_through_their_pixels(default_cell):
    model = CameraModel.from_cell(default_cell.cameras[0])
    point = np.array([[0.52, 0.01, 0.2]])
    ray = model.rays(model.project(point))[0]
    to_point = point[0] - model.position
    assert np.allclose(ray, to_point / np.linalg.norm(to_point), atol=1e-6)


def test_a_fresh_tower_is_seen_whole_and_flush(sim_world, default_cell):
    result = Perception(default_cell).observe(frames_of(sim_world))
    obs = result.observation
    assert not obs.fell
    assert obs.tower_state().stories() == "18"
    assert len(obs.blocks) == 54 and not obs.unread and not obs.out_of_place
    assert max(abs(b.protrusion) for b in obs.blocks) < 0.0015
    assert obs.tilt_deg < 2.0


def test_a_midgame_tower_with_known_answers(midgame_scene, default_cell):
    world, truth, scene, frames = midgame_scene
    perception = Perception(default_cell)
    obs = perception.observe(frames).observation
    assert obs.tower_state().layers == truth.tower_state().layers
    # Every block that was pushed out or in reads as such, to within a millimetre.
    base = {b.block: b.protrusion for b in obs.blocks}
    assert scene.protruded
    seen = 0
    for block, moved in scene.protruded.items():
        if block not in base:
            continue
        observed = next(b for b in obs.blocks if b.block == block)
        axis = perception.model.axis(observed.layer)
        true_axis = world.data.xmat[world.block_body[block]].reshape(3, 3)[:, 0]
        sign = np.sign(obs.pose.vector_to_tower(true_axis) @ axis)
        assert abs(observed.protrusion - sign * moved) < 0.0015, (block, observed, moved)
        seen += 1
    assert seen >= len(scene.protruded) - 1


def test_a_knocked_over_tower_is_reported_fallen(default_cell):
    import hardware.sim  # noqa: F401
    from hardware.sim.scenes import topple
    from hardware.sim.world import SimWorld
    from perception.events import TowerFell
    world = SimWorld(default_cell, 5)
    perception = Perception(default_cell)
    assert not perception.observe(frames_of(world)).observation.fell
    topple(world, np.random.default_rng(1))
    result = perception.observe(frames_of(world))
    assert result.observation.fell
    assert any(isinstance(e, TowerFell) for e in result.events)
    with pytest.raises(PerceptionError, match="fallen"):
        result.observation.tower_state()
    world.close()


def test_a_tower_built_anew_is_not_taken_for_a_fall(midgame_scene, sim_world, default_cell):
    """A new round starts from a fresh 18-layer tower: the layers the last round's tower had
    above it are not blocks that fell, once perception is told the tower was built anew."""
    world, _, _, frames = midgame_scene
    assert world.cell.blocks.layers == 18
    perception = Perception(default_cell)
    before = perception.observe(frames).observation
    assert not before.fell and before.top_layer >= 20
    fresh = frames_of(sim_world)
    assert perception.observe(fresh).observation.fell      # three or more slots emptied at once
    perception.new_tower()
    again = perception.observe(fresh).observation
    assert not again.fell and again.top_layer == 18
    # told where the new tower stands and how high (the safety monitor's looker, every turn)
    perception.observe(frames)
    perception.new_tower(again.pose, 18)
    assert perception.pose == again.pose and perception.layers == 18
    told = perception.observe(fresh).observation
    assert not told.fell and told.occupancy == again.occupancy


def test_blocks_pushed_far_out_of_their_slots_are_not_blocks_on_the_table(default_cell):
    """Tested blocks pushed 30 mm out (their markers in no slot) are not fallen blocks: the rays
    to their markers meet the table near the tower too, but pass along their slots' lines."""
    import hardware.sim  # noqa: F401
    from hardware.sim.ground_truth import GroundTruth
    from hardware.sim.scenes import shift_block
    from hardware.sim.world import SimWorld
    world = SimWorld(default_cell, 1)
    truth = GroundTruth(world)
    for layer, slot, distance in ((6, 2, 0.03), (7, 2, 0.03), (10, 2, 0.03), (12, 0, 0.03),
                                  (6, 0, -0.03), (9, 0, -0.03), (11, 2, -0.03)):
        shift_block(world, truth.block_at(layer, slot), distance)
    obs = Perception(default_cell).observe(frames_of(world)).observation
    world.close()
    assert obs.out_of_place                # some markers are read outside any slot
    assert obs.on_table == [] and not obs.fell


def test_blocks_sticking_out_too_far_to_be_read_in_their_slots_are_seen_where_they_stand(default_cell):
    """A block 60-70 mm out toward the cameras is read in no slot, nor in one it hides from a
    camera (layer 12's was read in layer 10's); its marker's ray and size say which slot it sticks
    out of and how far, for the arm to keep clear of it. The look left such a block out of the
    tower the arm keeps clear of."""
    obs, moved, ids = _seen_out_toward_the_cameras(default_cell, ((12, 2, 0.06), (15, 1, 0.06),
                                                                  (8, 0, 0.07)))
    assert not obs.fell and obs.on_table == []
    assert set(obs.far_out) == set(moved) and set(obs.out_of_place) == ids
    assert {block for block, _ in obs.far_out.values()} == ids
    assert not ids & {b.block for b in obs.blocks}
    for key, out in moved.items():
        assert not obs.occupancy[key]
        assert obs.far_out[key][1] == pytest.approx(out, abs=0.004), key


def _seen_out_toward_the_cameras(default_cell, outs):
    """A settled seed-1 tower with the blocks of `outs` ((layer, slot, m)) slid that far out
    toward the cameras, as the cameras see it: the observation, where each block's centre now
    stands along its layer's axis ((layer, slot) -> m), and the moved blocks."""
    import hardware.sim  # noqa: F401
    from hardware.sim.ground_truth import GroundTruth
    from hardware.sim.scenes import shift_block
    from hardware.sim.world import SimWorld
    from planning.game.geometry import TowerGeometry
    tower = TowerGeometry.from_cell(default_cell)
    world = SimWorld(default_cell, 1)
    truth = GroundTruth(world)
    moved = {(layer, slot): -tower.front_end(layer) * out for layer, slot, out in outs}
    ids = {truth.block_at(*key) for key in moved}
    for (layer, slot), out in moved.items():
        shift_block(world, truth.block_at(layer, slot), out)
    obs = Perception(default_cell).observe(frames_of(world)).observation
    world.close()
    return obs, moved, ids


@pytest.mark.parametrize("layer, on_table", [(4, {40}), (2, set())])
def test_a_marker_on_the_table_behind_a_slots_line_is_on_the_table_by_its_size(default_cell, layer,
                                                                                on_table):
    """A block lying on the table where the ray to it passes through the line a slot's end face
    slides along (a block knocked off the top, seen past the tower) is on the table: its marker's
    size puts it at the table's distance. The block sticking out on that very ray is not. Behind a
    low layer's line, just above the table, the size cannot tell the two apart: the marker is
    taken for a block sticking out, not for a fallen one."""
    from perception.markers import MarkerSighting, diagonal_crossings
    from perception.observation import FALL_ZONE_M, TABLE_MARKER_HEIGHT
    from perception.tower_estimator import TowerFit
    from planning.game.markers import marker_id
    perception = Perception(default_cell)
    observer, pose = perception.observer, perception.pose
    camera = perception.cameras[0]
    faces = perception.estimator.candidate_faces(camera, pose, 18)
    row = int(np.flatnonzero(faces.layer == layer)[0])
    out = pose.vector_to_world(faces.outward[row])
    slid = pose.to_world(faces.corners[row] + 0.03 * faces.outward[row])  # 30 mm out

    def sighting(block, corners_world):
        corners = camera.project(corners_world)
        return MarkerSighting(marker_id(block, 1), corners, diagonal_crossings(corners[None])[0])

    # on the same ray, where it meets the table: an end face standing up, turned to the camera
    centre = slid.mean(axis=0)
    ray = (centre - camera.position) / np.linalg.norm(centre - camera.position)
    spot = camera.position + ray * (TABLE_MARKER_HEIGHT - camera.position[2]) / ray[2]
    facing = np.array([-ray[0], -ray[1], 0.0]) / np.linalg.norm(ray[:2])
    up = np.array([0.0, 0.0, 1.0])
    right = np.cross(up, facing)
    h = perception.model.marker_side / 2
    lying = np.array([spot + h * (-right + up), spot + h * (right + up), spot + h * (right - up),
                      spot + h * (-right - up)])
    fit = TowerFit(pose, 0.0, [], [(camera.name, sighting(40, lying)), (camera.name, sighting(41, slid))])
    assert np.linalg.norm(np.cross(out, ray)) > 0.1            # the face is not end-on to the camera
    assert np.linalg.norm(spot[:2] - pose.to_world(np.zeros((1, 3)))[0, :2]) < FALL_ZONE_M
    assert set(observer._off_the_slots(fit, 18, set())[0]) == on_table


def _sightings(perception, shifted: dict, skip: tuple | None = None) -> dict:
    """Every visible marker of an 18-layer tower at its nominal pose, projected into both cameras:
    the blocks of `shifted` ((layer, slot) -> m) lie that far across their slots' lines; `skip`
    ((layer, slot), camera name): that camera does not read that block."""
    from perception.markers import MarkerSighting, diagonal_crossings
    from planning.game.markers import marker_id
    pose = perception.pose
    out = {}
    for camera in perception.cameras:
        faces = perception.estimator.candidate_faces(camera, pose, 18)
        seen = []
        for i in range(len(faces)):
            layer, slot, end = int(faces.layer[i]), int(faces.slot[i]), int(faces.end[i])
            if skip is not None and skip == ((layer, slot), camera.name):
                continue
            corners = faces.corners[i] + faces.across[i] * shifted.get((layer, slot), 0.0)
            px = camera.project(pose.to_world(corners))
            seen.append(MarkerSighting(marker_id(3 * (layer - 1) + slot, end), px,
                                       diagonal_crossings(px[None])[0]))
        out[camera.name] = seen
    return out


def _read(perception, estimator, found, block: tuple[int, int]):
    fit = estimator.fit(found, perception.pose, 18)
    seen = next(b for b in estimator.blocks(fit) if (b.layer, b.slot) == block)
    return seen.protrusion, seen.cameras


def test_a_block_one_camera_reads_is_measured_where_both_last_saw_it(default_cell):
    """One camera alone places a marker on the vertical plane through its slot's axis. The end
    faces are seen obliquely, so a block lying beside that line (here 4 mm) would read millimetres
    off along its axis; placed where both cameras last saw it across the line, it reads true."""
    perception = Perception(default_cell)
    shifted = (10, 0)
    estimator = perception.estimator
    along, cameras = _read(perception, estimator, _sightings(perception, {shifted: 0.004}), shifted)
    assert len(cameras) == 2 and abs(along) < 2e-4
    for name in ("left", "right"):
        one = _sightings(perception, {shifted: 0.004}, (shifted, name))
        along, cameras = _read(perception, estimator, one, shifted)
        assert len(cameras) == 1 and abs(along) < 3e-4, (name, along)
        # without what both cameras saw, the slot's own line: millimetres off
        fresh = TowerEstimator(estimator.model, perception.cameras)
        assert abs(_read(perception, fresh, one, shifted)[0]) > 2e-3
    perception.new_tower()
    assert estimator.across_m == {}


def test_a_block_one_camera_reads_first_lies_where_its_layer_lies(default_cell):
    """Never read by both cameras, a block is taken to lie across its slot's line as far as the
    blocks of its layer both cameras read: a layer shifted 3 mm (a placed top layer, say) reads
    true, where the slot's own line would put the block millimetres off along its axis."""
    perception = Perception(default_cell)
    layer = {(11, slot): 0.003 for slot in range(3)}
    for name in ("left", "right"):
        one = _sightings(perception, layer, ((11, 1), name))
        along, cameras = _read(perception, TowerEstimator(perception.model, perception.cameras),
                               one, (11, 1))
        assert len(cameras) == 1 and abs(along) < 3e-4, (name, along)


def test_blocks_sticking_far_out_at_the_seen_end_are_read_in_their_slots(default_cell):
    """A block 20-30 mm out toward the cameras (pushed from the front) whose marker both cameras
    read is in its slot, sticking out as far as it does: read as empty, it was left out of the
    tower the arm keeps clear of."""
    obs, moved, _ = _seen_out_toward_the_cameras(default_cell, ((12, 2, 0.03), (15, 1, 0.02),
                                                                (17, 0, 0.03)))
    for key, out in moved.items():
        seen = obs.block_at(*key)
        assert obs.occupancy[key] and seen is not None, key
        assert seen.protrusion == pytest.approx(out, abs=0.0015), key
