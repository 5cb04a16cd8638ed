"""The simulated person plays through the physics, and the referee sees what they did through the
cameras. A practised turn moves one block from a legal source to the top at a right angle with the
tower standing, and the referee calls nothing; told to break a rule, the person breaks exactly that
one (checked with the simulator's ground truth) and the referee, looking at the rendered camera
images before and after, names it."""

import numpy as np
import pytest

from controller.match.referee import judge_seen_move
from hardware.sim.ground_truth import GroundTruth
from hardware.sim.person import MISTAKES, SimPerson
from hardware.sim.skill import PUT_BACK_N, Skill
from hardware.sim.world import SimWorld
from perception.pipeline import Perception
from planning.game.rules import ViolationCode, legal_sources, placement_target
from planning.game.tower import TowerState
from tests.perception.conftest import frames_of

TURN_LIMIT_S = 120.0


@pytest.fixture(scope="module")
def table(default_cell):
    import hardware.sim  # noqa: F401  (offscreen rendering)
    world = SimWorld(default_cell, 1)
    person = SimPerson(world, Skill(0.8), seed=1)
    fresh = world.save()
    yield world, person, fresh, {}
    world.close()


def _play(world, person, mistake=None) -> dict:
    truth = GroundTruth(world)
    perception = Perception(world.cell)
    seen_before = perception.observe(frames_of(world)).observation
    before = {b.index: truth.slot_of(b.index) for b in world.blocks}
    tower = truth.tower_state()
    person.start_turn(mistake)
    started = world.time
    while person.state == "playing":
        person.step()
        world.step(1)
        assert world.time - started < TURN_LIMIT_S, "the person's turn never ended"
    world.step_for(1.0)
    seen_after = perception.observe(frames_of(world)).observation
    after = {b.index: truth.slot_of(b.index) for b in world.blocks}
    moved = {b: (before[b], after[b]) for b in before if before[b] != after[b]}
    return {"tower": tower, "moved": moved, "truth": truth,
            "called": judge_seen_move(seen_before, seen_after, blocks_moved=tower.blocks_moved)}


def _codes(turn) -> list[ViolationCode]:
    return [v.code for v in turn["called"].violations]


def test_a_practised_turn_is_legal_and_the_referee_calls_nothing(table):
    world, person, fresh, saved = table
    world.restore(fresh)
    turn = _play(world, person)
    assert len(turn["moved"]) == 1, turn["moved"]
    (source, target), = turn["moved"].values()
    assert source in legal_sources(turn["tower"])
    assert target[0] == placement_target(turn["tower"]).layer    # a right angle, or no slot at all
    assert turn["truth"].fallen() == [] and person.state == "done"
    called = turn["called"]
    assert (called.source, called.target) == (source, target) and called.violations == []
    # every block tested before the one taken was given up at a light push
    for tried in person.last_turn["tried"][:-1]:
        assert tried["stopped"] in ("resists", "tower moved") and tried["peak_n"] < 0.6, tried
    saved["one placed"] = world.save()


def test_the_finger_backs_out_of_the_tower_before_it_rises(table):
    import mujoco
    from hardware.sim.mjcf import PERSON_FINGER_LENGTH
    from hardware.sim.person import APPROACH_GAP, PUSH_OUT
    world, person, fresh, _ = table
    world.restore(fresh)
    truth = GroundTruth(world)
    block = truth.block_at(10, 1)
    height = world.data.xpos[world.block_body[block]][2]
    half = world.cell.blocks.length.mean / 2
    finger, tips = person.body.finger, []
    for _ in person._push(block, PUSH_OUT, 5.0, watch=False):
        world.step(1)
        along = np.zeros(9)
        mujoco.mju_quat2Mat(along, world.data.mocap_quat[finger])
        pos = world.data.mocap_pos[finger]
        tips.append((pos[2], truth.to_tower(pos + along.reshape(3, 3)[:, 0] * PERSON_FINGER_LENGTH)))
    assert person.felt["stopped"] == "out"
    out_by = [max(abs(tip[0]), abs(tip[1])) for _, tip in tips]   # from the tower's axis
    assert min(out_by) < half - 0.02               # the tip followed the block into the tower
    rising = [tip for z, tip in tips if height + 0.005 < z < person.body.top_z() + 0.02]
    assert rising and all(max(abs(tip[0]), abs(tip[1])) > half + APPROACH_GAP - 0.002
                          for tip in rising)


def test_a_block_from_a_forbidden_layer(table):
    # the fresh tower's top layer is complete: none of its blocks may be taken
    world, person, fresh, _ = table
    world.restore(fresh)
    turn = _play(world, person, "forbidden_layer")
    assert len(turn["moved"]) == 1, turn["moved"]
    (source, _), = turn["moved"].values()
    assert source[0] == 18 and source not in legal_sources(turn["tower"])
    assert _codes(turn) == [ViolationCode.FORBIDDEN_LAYER]


def test_a_block_laid_the_wrong_way(table):
    # only a complete top layer leaves room to lay a block the wrong way
    world, person, fresh, _ = table
    world.restore(fresh)
    turn = _play(world, person, "wrong_orientation")
    block = next(b for b, (was, _) in turn["moved"].items() if list(was) == person.last_turn["source"])
    pose = turn["truth"].pose(block)
    layer = placement_target(turn["tower"]).layer
    assert (abs(pose.axis[0]) > abs(pose.axis[1])) != (layer % 2 == 1) and pose.tilt < np.radians(10)
    assert ViolationCode.WRONG_ORIENTATION in _codes(turn)


def test_a_new_layer_before_the_top_is_complete(table):
    world, person, _, saved = table
    world.restore(saved["one placed"])
    turn = _play(world, person, "new_layer_early")
    assert any(new is not None and new[0] == turn["tower"].top_layer + 1
               for _, new in turn["moved"].values()), turn["moved"]
    assert ViolationCode.NEW_LAYER_EARLY in _codes(turn)


def test_a_tested_block_left_out(table):
    world, person, _, saved = table
    world.restore(saved["one placed"])
    turn = _play(world, person, "tested_left_out")
    left = person.last_turn["tried"][0]
    assert left["left_out_mm"] > 1.0
    assert ViolationCode.TESTED_BLOCK_DISPLACED in _codes(turn)
    assert tuple(left["source"]) in turn["called"].displaced_mm


def test_skills_and_mistakes_are_checked(table):
    _, person, _, _ = table
    with pytest.raises(ValueError, match="within 0..1"):
        Skill(1.5)
    with pytest.raises(ValueError, match="unknown mistake"):
        person.start_turn("juggling")
    assert Skill(1.0).push_limit_n < Skill(0.0).push_limit_n and Skill(1.0).tries > Skill(0.0).tries
    assert Skill(1.0).force_factor < Skill(0.0).force_factor
    # a tested block goes back home firmly at every level, never more gently than the last push
    for level in np.linspace(0.0, 1.0, 11):
        skill = Skill(float(level))
        assert skill.put_back_n >= max(PUT_BACK_N, skill.push_limit_n * skill.force_factor)
    assert Skill(0.7).put_back_n == pytest.approx(Skill(0.7).push_limit_n * Skill(0.7).force_factor)
    assert Skill(1.0).balance_mm > Skill(0.3).balance_mm > Skill(0.0).balance_mm == 0.0
    assert set(MISTAKES) == {"wrong_orientation", "forbidden_layer", "new_layer_early",
                             "tested_left_out"}


def test_a_skilled_person_leaves_shaky_blocks_and_those_under_a_top_block_for_last(table):
    from planning.stability import BlockDims, removal_margin
    world, person, fresh, _ = table
    world.restore(fresh)                   # 18 full layers: the tower below is the world's
    rows = [[True] * 3 for _ in range(18)]
    rows[5 - 1] = [True, True, False]      # its middle taken, layer 5 would stand on one side
    rows[9 - 1] = [False, True, False]     # the layers above 9 stand on its middle alone
    tower = TowerState(tuple(tuple(r) for r in rows))
    dims = BlockDims.of(person.world.cell.blocks)
    steps = person._candidates(tower)
    judged = 0
    try:
        while True:
            next(steps)
            judged += 1
    except StopIteration as done:
        order = done.value
    assert judged == len(order)             # one block judged per physics step, no stall
    assert sorted(order) == sorted(s for s in legal_sources(tower) if s[0] > 2)
    # every block of layer 17 has a block of the top layer lying across its drawn end
    riders = [person._carries_top_block(tower, s) for s in order]
    assert {s for s, r in zip(order, riders) if r} == {s for s in order if s[0] == 17}
    shaky = [removal_margin(tower, dims, s) < person.skill.balance_mm for s in order]
    assert order.index((5, 1)) > order.index((7, 1)) and shaky[order.index((5, 1))]
    keys = list(zip(riders, shaky))
    assert keys == sorted(keys)             # balanced before shaky, a top block dragged last


def _take_out_with(person, monkeypatch, came_out: bool, stays_out_m: float, fallen: bool = False):
    """Drive `_take_out` with the finger and hand stubbed: each candidate tested comes out (or
    not), a watched draw drags the tower and is given up, an unwatched one comes, and a block
    stays `stays_out_m` from home whatever is pushed back. Returns the source taken and the
    draws asked for (watched or not)."""
    draws = []

    def candidates(tower):
        return [(9, 1), (12, 0)]   # the first is not the turn's last: it is drawn watching
        yield

    def push(block, protrude, limit_n, **kwargs):
        person.felt = {"peak_n": 0.2, "stopped": "out" if came_out else "tower moved"}
        return came_out
        yield

    def draw(block, watch=True):
        draws.append(watch)
        return not watch           # watched, the tower follows; unwatched, it comes
        yield

    def put_back(block):
        return None
        yield

    for name, stub in (("_candidates", candidates), ("_push", push), ("_draw", draw),
                       ("_put_back", put_back), ("_moved", lambda block: stays_out_m)):
        monkeypatch.setattr(person, name, stub)
    monkeypatch.setattr(person, "skill", Skill(1.0))
    # the module's person is shared: no mistake left from another test, its tower as told
    monkeypatch.setattr(person, "mistake", None)
    monkeypatch.setattr(person.truth, "tower_fell", lambda: fallen)
    record = {"tried": []}
    steps = person._take_out(None, record)
    try:
        while True:
            next(steps)
    except StopIteration as done:
        return done.value, draws, record


def test_a_drawn_block_that_will_not_go_back_is_taken_after_all(table, monkeypatch):
    _, person, _, _ = table
    # drawn half out it dragged the tower, and it jams on the way back in: the rules forbid
    # leaving it out and touching another, so the practised player takes it
    source, draws, record = _take_out_with(person, monkeypatch, came_out=True, stays_out_m=0.05)
    assert source == (9, 1) and draws == [True, False]
    assert record["tried"][-1]["taken_after_all"]
    # put back home, it stays there and the next candidate is tried (the last, taken by force)
    source, draws, _ = _take_out_with(person, monkeypatch, came_out=True, stays_out_m=0.0)
    assert source == (12, 0) and draws == [True, False]
    # one that never came out is not drawn by its stub while it drags the tower
    source, draws, record = _take_out_with(person, monkeypatch, came_out=False, stays_out_m=0.003)
    assert source is None and draws == []
    assert not any(t.get("taken_after_all") for t in record["tried"])


def test_a_person_stops_trying_blocks_once_the_tower_has_fallen(table, monkeypatch):
    """Playing on after a fall, a person went to put back a block lying 64 m below the table and
    the turn never ended (skill 0.7, seed 19)."""
    _, person, _, _ = table
    source, draws, record = _take_out_with(person, monkeypatch, came_out=True, stays_out_m=0.05,
                                           fallen=True)
    assert source is None and draws == [] and record["tried"] == []
    for steps in (person._put_back(3), person._draw(3)):
        with pytest.raises(StopIteration) as done:
            next(steps)           # nothing pushed or drawn: not a physics step
        assert not done.value.value


def test_a_new_round_stops_a_turn_the_fall_cut_short(default_cell):
    from hardware.sim.server import SimServer
    server = SimServer(default_cell, 2, cameras=False)
    try:
        server.person_turn({})
        for _ in range(300):                   # the finger on its way to a block
            server.person.step()
            server.world.step()
        assert server.person.state == "playing"
        server.rebuild_tower({})
        assert server.person.state == "done"
        assert server.truth.tower_state() == TowerState.fresh()
    finally:
        server.stop()


def test_the_hand_is_in_the_workspace_when_any_part_of_it_is():
    from hardware.sim.mocap import overlaps_square

    def box(centre, angle, half=(0.5, 0.25)):
        c, s = np.cos(angle), np.sin(angle)
        axes = np.array([[c, s], [-s, c]])
        corners = np.array([np.asarray(centre) + axes[0] * x * half[0] + axes[1] * y * half[1]
                            for x in (-1, 1) for y in (-1, 1)])
        return corners, axes
    assert not overlaps_square(*box((1.51, 0.0), 0.0), 1.0)
    assert overlaps_square(*box((1.49, 0.0), 0.0), 1.0)
    # turned 45 degrees off the square's corner: apart along the diagonal, though its extent
    # along x and along y overlaps the square's
    corners, axes = box((1.1, 1.1), np.pi / 4, half=(0.1, 0.5))
    assert corners[:, 0].min() < 1.0 and corners[:, 1].min() < 1.0
    assert not overlaps_square(corners, axes, 1.0)
    assert overlaps_square(*box((1.0, 1.0), np.pi / 4, half=(0.1, 0.5)), 1.0)
    assert overlaps_square(*box((0.0, 0.0), 0.3), 1.0)


def _run(world, steps):
    """Step the world under one of the person's moves; what the move returned."""
    try:
        while True:
            next(steps)
            world.step(1)
    except StopIteration as done:
        return done.value


def test_a_draw_that_moves_the_tower_slides_the_block_back_before_letting_go(table, monkeypatch):
    """Let go where it stood, a block drawn past its middle tips over the tower's edge and will
    not go back: the practised player slides it back in, still holding it, as far as it came."""
    from hardware.sim.person import PUSH_OUT
    world, person, fresh, _ = table
    world.restore(fresh)
    block = GroundTruth(world).block_at(9, 1)         # a loose block of the seed-1 tower
    body = world.block_body[block]
    home = world.data.xpos[body].copy()
    assert _run(world, person._push(block, PUSH_OUT, 5.0, watch=False))
    gripped = world.data.xpos[body].copy()
    # the tower is seen to follow once the block has come 30 mm
    monkeypatch.setattr(person, "_tower_follows",
                        lambda b: float(np.linalg.norm(world.data.xpos[body] - gripped)) > 0.03)
    let_go = []
    release = person.body.release
    monkeypatch.setattr(person.body, "release",
                        lambda: (let_go.append(world.data.xpos[body].copy()), release())[1])
    assert _run(world, person._draw(block)) is False
    assert np.linalg.norm(let_go[0] - gripped) < 0.002          # back where it was gripped
    assert np.linalg.norm(world.data.xpos[body] - home) < 0.002  # then pushed home
    # a block that carries the tower: it comes along as the block is drawn, the pull still in
    # the hold as the hand turns back, and the block goes back all the same
    monkeypatch.undo()
    world.restore(fresh)
    block = GroundTruth(world).block_at(7, 0)
    body = world.block_body[block]
    assert _run(world, person._push(block, PUSH_OUT, 5.0, watch=False))
    gripped = world.data.xpos[body].copy()
    let_go.clear()
    monkeypatch.setattr(person.body, "release",
                        lambda: (let_go.append(world.data.xpos[body].copy()), release())[1])
    assert _run(world, person._draw(block)) is False
    assert np.linalg.norm(let_go[0] - gripped) < 0.001


def test_a_practised_person_forces_the_block_that_gave_the_most_not_an_untried_one(table,
                                                                                  monkeypatch):
    """After the gentle tries, the last block of a turn is taken by force: a practised player
    goes back to the one that went furthest before it resisted. The candidates come with the
    shakiest last, and forcing that one toppled towers."""
    world, person, fresh, _ = table
    world.restore(fresh)
    truth = GroundTruth(world)
    order = [(9, 1), (10, 0), (12, 0), (13, 1)]
    gave_mm = {truth.block_at(9, 1): 0.5, truth.block_at(10, 0): 3.0, truth.block_at(12, 0): 2.0}
    pushed, taken = [], []

    def candidates(tower):
        return order
        yield

    def push(block, protrude, limit_n, feel_n=None, **kwargs):
        pushed.append((block, feel_n is None))
        person.felt = {"peak_n": 0.4, "stopped": "out" if feel_n is None else "resists"}
        return feel_n is None
        yield

    def draw(block, watch=True):
        taken.append(block)
        return True
        yield

    def put_back(block):
        return None
        yield

    for name, stub in (("_candidates", candidates), ("_push", push), ("_draw", draw),
                       ("_put_back", put_back),
                       ("_moved", lambda block: gave_mm.get(block, 0.0) / 1000)):
        monkeypatch.setattr(person, name, stub)
    monkeypatch.setattr(person, "skill", Skill(0.8))
    monkeypatch.setattr(person, "mistake", None)
    monkeypatch.setattr(Skill, "tries", property(lambda self: len(order)))
    steps = person._take_out(None, {"tried": []})
    with pytest.raises(StopIteration) as done:
        while True:
            next(steps)
    assert done.value.value == (10, 0)
    blocks = [truth.block_at(*s) for s in order]
    assert pushed == [(blocks[0], False), (blocks[1], False), (blocks[2], False), (blocks[1], True)]
    assert taken == [blocks[1]]
