"""How the console names slots and counts things."""

from controller.wording import grasp_tries, plural, probe_result, slot_name, turn_phase
from controller.turn.report import TurnReport


def test_counts_read_as_english():
    assert [plural(n, "probe") for n in (0, 1, 2)] == ["0 probes", "1 probe", "2 probes"]
    assert plural(1, "story", "stories") == "1 story" and plural(3, "story", "stories") == "3 stories"


def test_a_slot_is_never_written_like_a_decimal():
    assert slot_name(9, 1) == "layer 9 slot 1"
    assert "." not in slot_name(19, 0)


def test_each_phase_of_a_turn_says_what_the_robot_does():
    report = TurnReport(3)
    assert turn_phase("probe", report) == "testing blocks"
    report.target = (19, 2)
    assert turn_phase("place", report) == "placing the block on layer 19 slot 2"
    assert turn_phase("settle", report) == "watching the settling window"


def test_a_grasp_given_up_says_how_each_try_went():
    """A match log said only "the fingers could not get around it" three times in one match; why
    (a finger met the block, the fingers closed on air, no grasp could be planned) was lost."""
    said = grasp_tries([{"force_n": 0.71, "shift_mm": 0.4},
                        {"missed": True, "force_n": 0.0, "shift_mm": 8.4},
                        {"unplanned": "fingers within 2 mm of the tower", "force_n": 0.0,
                         "shift_mm": -7.6},
                        {"force_n": 1.13, "shift_mm": -15.6, "side": -1}])
    assert said == ("+0.4 mm across: a finger met it at 0.71 N; +8.4 mm across: closed on air; "
                    "-7.6 mm across: not planned (fingers within 2 mm of the tower); "
                    "-15.6 mm across: the finger toward slot 0 met it at 1.13 N")
    assert grasp_tries([]) == ""


def test_a_test_push_is_worded_once_for_the_live_viewer_and_the_log_alike():
    assert probe_result(5, 1, 0.2, 4.5, 0.97, 0.3) == \
        "probe layer 5 slot 1: peak 0.20 N under a 0.30 N guard, moved 4.5 mm, p_loose 0.97"
    # an older log without the guard's threshold
    assert probe_result(5, 1, 0.2, 4.5, 0.97) == \
        "probe layer 5 slot 1: peak 0.20 N, moved 4.5 mm, p_loose 0.97"
