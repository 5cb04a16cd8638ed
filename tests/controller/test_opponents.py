"""The console: `stop` and Enter stops the arm at once, whatever the match is doing; any other line
is the person's "done"."""

import io
import threading

from controller.match.opponents import ConsoleInput, ConsolePerson


class Lines(io.StringIO):
    """A console whose lines arrive when the test releases them."""

    def __init__(self, lines):
        super().__init__()
        self.lines = list(lines)
        self.release = threading.Event()

    def __iter__(self):
        self.release.wait(5.0)
        yield from self.lines


def test_stop_reaches_the_arm_and_other_lines_wait_for_the_match():
    stopped = threading.Event()
    console = Lines(["\n", "stop\n", "done\n"])
    person = ConsolePerson(on_stop=stopped.set, stream=console)
    assert not person.done()
    console.release.set()
    assert stopped.wait(5.0)
    assert [person.console.lines.get(timeout=5.0) for _ in range(2)] == ["", "done"]
    person.console.lines.put("")               # Enter: the person's turn is done, once
    assert person.done() and not person.done()


def test_a_stop_that_cannot_be_delivered_is_said_and_the_console_keeps_reading(capsys):
    def unplugged():
        raise OSError("the arm's port is gone")
    console = Lines(["e\n", "next\n"])
    reader = ConsoleInput(on_stop=unplugged, stream=console)
    console.release.set()
    assert reader.lines.get(timeout=5.0) == "next"
    assert "emergency stop not delivered: the arm's port is gone" in capsys.readouterr().out
