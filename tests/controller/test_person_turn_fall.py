"""A fall seen in the person's turn holds only if it goes on being seen: a hand at the tower
hides the slots behind it, which read as emptied. The cell is faked: the arm's clock, the safety
monitor's level, and what the cameras see."""

from dataclasses import replace
from types import SimpleNamespace

from controller.match.log import MatchLog, read_events
from controller.match.progress import MatchProgress
from controller.match.runner import MatchRunner
from controller.safety.monitor import Level
from perception.pipeline import Perception
from planning.game.rules import MatchConfig, Scoring
from planning.game.tower import TowerState
from tests.controller.test_match_resume import Arm, _seen

FRESH = TowerState.fresh()
MOVED = FRESH.moved((5, 1), (19, 0))
CONFIG = MatchConfig(("person", "robot"), Scoring.ROUND_WINS, target_points=1)


class Person:
    """Done `turn_s` of world time after being told to play (where their hand is, the test says)."""
    name = "person"

    def __init__(self, arm: Arm, turn_s: float):
        self.arm, self.turn_s, self.started = arm, turn_s, None

    def your_turn(self):
        self.started = self.arm.t

    def done(self) -> bool:
        return self.arm.t - self.started >= self.turn_s

    def say(self, text):
        pass

    def last_turn(self):
        return {"tried": []}


def _runner(tmp_path, default_cell, sees, hand, starter="person"):
    """A runner whose cameras show `sees(t)` and whose monitor reads `hand(t)` (True: inside);
    `starter` plays the round's first turn."""
    path = tmp_path / "match.jsonl"
    config = CONFIG if starter == CONFIG.players[0] else replace(CONFIG, players=CONFIG.players[::-1])
    with MatchLog.create(path, {"config": config.to_json()}) as log:
        log.append("round_start", tower=FRESH.to_json(), starter=starter)
    log, logged = MatchLog.resume(path)
    arm = Arm()
    link = SimpleNamespace(cell=default_cell, arm=arm, perception=Perception(default_cell),
                           observe=lambda after=None: SimpleNamespace(observation=sees(arm.t)))
    person = Person(arm, turn_s=20.0)
    runner = MatchRunner(link, log, MatchProgress.from_events(logged), person, on_line=lambda _: None)
    runner.monitor.watch = lambda pose, layers: None

    class Monitor(type(runner.monitor)):
        level = property(lambda m: Level.INSIDE if hand(arm.t) else Level.CLEAR,
                         lambda m, value: None)
    runner.monitor.__class__ = Monitor
    runner._emit("clock", world_t=0.0, match_t=0.0)           # match time is world time
    runner.seen = _seen(FRESH)
    return runner, path


def _fallen(tower: TowerState):
    return replace(_seen(tower), fell=True)


def test_slots_hidden_by_a_hand_are_not_a_fall(tmp_path, default_cell):
    hand = lambda t: 5.0 <= t < 12.0                                   # noqa: E731
    sees = lambda t: _fallen(FRESH) if hand(t) else _seen(MOVED if t > 15.0 else FRESH)  # noqa: E731
    runner, path = _runner(tmp_path, default_cell, sees, hand)
    runner._person_turn()
    kinds = [e["event"] for e in read_events(path)]
    assert "fall" not in kinds and "place" in kinds


def test_a_fall_still_seen_once_the_hand_is_gone_is_a_fall(tmp_path, default_cell):
    hand = lambda t: 5.0 <= t < 12.0                                   # noqa: E731
    sees = lambda t: _fallen(FRESH) if t >= 5.0 else _seen(FRESH)     # noqa: E731
    runner, path = _runner(tmp_path, default_cell, sees, hand)
    runner._person_turn()
    falls = [e for e in read_events(path) if e["event"] == "fall"]
    assert len(falls) == 1 and 5.0 <= falls[0]["t"] < 6.0              # when it was first seen


def test_a_fall_seen_while_the_hand_stays_is_a_fall_after_a_while(tmp_path, default_cell):
    hand = lambda t: t >= 5.0                                          # noqa: E731
    sees = lambda t: _fallen(FRESH) if t >= 5.0 else _seen(FRESH)     # noqa: E731
    runner, path = _runner(tmp_path, default_cell, sees, hand)
    runner._person_turn()
    falls = [e for e in read_events(path) if e["event"] == "fall"]
    assert len(falls) == 1 and 5.0 <= falls[0]["t"] < 6.0


def _without(tower: TowerState, *slots, on_table=()):
    """The tower seen with `slots` emptied and the blocks `on_table` read lying on the table."""
    seen = _seen(tower)
    occupancy = {key: full and key not in slots for key, full in seen.occupancy.items()}
    return replace(seen, occupancy=occupancy, on_table=list(on_table))


def _falls(path):
    return [e for e in read_events(path) if e["event"] == "fall"]


def test_blocks_falling_one_look_after_another_are_a_fall(tmp_path, default_cell):
    """The top of the tower drops block by block after the move: no two looks in a row differ by
    more than one slot, and the blocks on the table hold the workspace busy for good."""
    top = [(18, 0), (18, 1), (18, 2)]
    hand = lambda t: t >= 5.0                                          # noqa: E731
    sees = lambda t: _without(MOVED, *[s for i, s in enumerate(top) if t >= 8.0 + i])  # noqa: E731
    runner, path = _runner(tmp_path, default_cell, sees, hand)
    runner._person_turn()
    falls = _falls(path)
    assert len(falls) == 1 and falls[0]["what"] == "tower" and 20.0 <= falls[0]["t"] < 21.0
    assert not runner.progress.in_round


def test_one_block_dropped_and_lying_in_the_workspace_ends_the_round(tmp_path, default_cell):
    hand = lambda t: t >= 5.0                                          # noqa: E731
    sees = lambda t: _without(MOVED, (18, 0), on_table=[51]) if t >= 8.0 else _seen(MOVED)  # noqa: E731
    runner, path = _runner(tmp_path, default_cell, sees, hand)
    runner._person_turn()
    falls = _falls(path)
    assert len(falls) == 1 and falls[0]["what"] == "minor" and falls[0]["blocks"] == 1
    assert 30.0 <= falls[0]["t"] < 31.0            # the person done at 20 s, then 10 s of waiting
    assert not runner.progress.in_round


def test_something_left_in_the_workspace_is_asked_for_once(tmp_path, default_cell):
    hand = lambda t: 5.0 <= t < 60.0                                   # noqa: E731
    sees = lambda t: _seen(MOVED) if t >= 8.0 else _seen(FRESH)       # noqa: E731
    runner, path = _runner(tmp_path, default_cell, sees, hand)
    said = []
    runner.person.say = said.append
    runner._person_turn()
    assert len(said) == 1 and "take it away" in said[0]
    kinds = [e["event"] for e in read_events(path)]
    assert "fall" not in kinds and "place" in kinds


def test_a_done_said_once_ends_the_turn(tmp_path, default_cell):
    """A console person's "done" is one Enter, read once: the turn ends on it, however many times
    the robot asks while it looks."""
    hand = lambda t: 5.0 <= t < 12.0                                   # noqa: E731
    sees = lambda t: _seen(MOVED) if t >= 8.0 else _seen(FRESH)       # noqa: E731
    runner, path = _runner(tmp_path, default_cell, sees, hand)
    said = iter([True])
    arm = runner.link.arm
    runner.person.done = lambda: arm.t >= 20.0 and next(said, False)
    runner._person_turn()
    assert "place" in [e["event"] for e in read_events(path)]


def test_blocks_gone_out_of_sight_while_the_workspace_stays_busy_are_a_fall(tmp_path, default_cell):
    """Two blocks fell where their markers cannot be read: two slots emptied (the moved block's
    and one more), too few for a fall, and nothing read on the table. The person is asked to
    clear the workspace; still busy 20 s after they said done, the lost block is a fall."""
    hand = lambda t: t >= 5.0                                          # noqa: E731
    sees = lambda t: _without(MOVED, (18, 0)) if t >= 8.0 else _seen(MOVED)  # noqa: E731
    runner, path = _runner(tmp_path, default_cell, sees, hand)
    said = []
    runner.person.say = said.append
    runner._person_turn()
    falls = _falls(path)
    assert len(said) == 1 and len(falls) == 1 and falls[0]["blocks"] == 1
    assert 40.0 <= falls[0]["t"] < 41.0            # done at 20 s, asked at 30 s, called at 40 s
    assert not runner.progress.in_round
