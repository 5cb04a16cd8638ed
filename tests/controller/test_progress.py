"""Long commands show a bar with an ETA on a terminal and nothing otherwise."""

import io

from controller.commands.progress import Progress


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_a_terminal_gets_a_bar_with_the_count_and_an_eta():
    screen = Terminal()
    progress = Progress("bench game", screen)
    for done in range(1, 5):
        progress(done, 4)
    text = screen.getvalue()
    assert "bench game" in text and "4/4" in text and "100%" in text
    assert "<" in text            # tqdm's elapsed<remaining


def test_a_log_or_a_pipe_gets_nothing():
    log = io.StringIO()
    progress = Progress("cell check", log)
    for done in range(1, 11):
        progress(done, 10)
    assert log.getvalue() == ""


def test_a_new_total_starts_a_new_bar_and_nothing_is_left_open():
    screen = Terminal()
    progress = Progress("sim check", screen)
    progress(1, 2)
    progress(1, 3)
    assert progress._bar is not None and progress._bar.total == 3
    progress(3, 3)
    assert progress._bar is None
