"""The one watch of a settling window, against a fake link: it runs out, a fall ends it, and a
touch before it closes ends it early (one after it closes does not)."""

from types import SimpleNamespace

from controller.turn.settling import WATCH_EVERY_S, WindowEnd, watch_settling
from perception.observation import TowerObservation
from planning.game.geometry import TowerPose

FRESH = {(layer, slot): True for layer in range(1, 19) for slot in range(3)}


class FakeLink:
    """Perception calls a fall from `fall_at` on; `emptied(t)`: the slots read empty at t."""
    def __init__(self, fall_at=None, emptied=lambda t: ()):
        self.time, self.fall_at, self.emptied, self.looks = 100.0, fall_at, emptied, []
        self.arm = SimpleNamespace(device_time=lambda: self.time, wait_for=self._wait_for)

    def _wait_for(self, predicate, timeout_s):
        self.time += WATCH_EVERY_S
        assert predicate(SimpleNamespace(device_time=self.time))

    def observe(self, after=None):
        self.looks.append(self.time)
        fell = self.fall_at is not None and self.time >= self.fall_at
        gone = set(self.emptied(self.time))
        seen = TowerObservation(self.time, TowerPose(0.5, 0.0, 0.785, 0.015), 0.0, 0.1, [],
                                {key: key not in gone for key in FRESH}, fell=fell)
        return SimpleNamespace(observation=seen)


def test_the_window_runs_out_with_the_tower_standing():
    link = FakeLink()
    settled = watch_settling(link, 99.0, 10.0)
    assert settled.end is WindowEnd.CLOSED and settled.at == 109.0
    assert link.looks[-1] >= 109.0 and len(link.looks) == 19


def test_a_fall_ends_the_watch_when_seen():
    settled = watch_settling(FakeLink(fall_at=103.2), 99.0, 10.0)
    assert settled.end is WindowEnd.FELL and settled.at == 103.5


def test_a_touch_before_the_window_closes_ends_it_then():
    link = FakeLink()
    settled = watch_settling(link, 99.0, 10.0, touched=lambda: 104.0 if link.time >= 104.5 else None)
    assert settled.end is WindowEnd.TOUCHED and settled.at == 104.0
    # a touch that came only after the window closed does not
    link = FakeLink()
    settled = watch_settling(link, 99.0, 10.0, touched=lambda: 109.5 if link.time >= 109.0 else None)
    assert settled.end is WindowEnd.CLOSED


def test_a_fall_seen_after_the_next_player_touched_is_not_the_window_s():
    link = FakeLink(fall_at=105.0)             # what a hand at the tower can look like
    settled = watch_settling(link, 99.0, 10.0, touched=lambda: 104.8 if link.time >= 105.0 else None)
    assert settled.end is WindowEnd.TOUCHED and settled.at == 104.8


def test_blocks_dropping_one_look_after_another_are_a_fall():
    """Each look empties one slot more than the last, too few for perception to call."""
    top = [(18, 0), (18, 1), (18, 2)]
    link = FakeLink(emptied=lambda t: top[:int(max(t - 102.0, 0))])
    settled = watch_settling(link, 99.0, 10.0)
    assert settled.end is WindowEnd.FELL and settled.at == 105.0
