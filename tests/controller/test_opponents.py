"""The console: `stop` and Enter stops the arm at once, whatever the match is doing; any other line
is the person's "done"."""

import http.server
import io
import json
import threading

import pytest

from controller.match.opponents import ConsoleInput, ConsolePerson, OpponentError, SimulatedPerson


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


class _Cell(http.server.BaseHTTPRequestHandler):
    """A cell that refuses every action with its words and serves one document."""

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        self._answer(409, {"error": "the person is mid-turn"})

    def do_GET(self):
        self._answer(200, {"state": "done"})

    def _answer(self, status, body):
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_the_simulated_person_says_what_the_cell_answered_or_that_no_cell_answered():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Cell)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        person = SimulatedPerson(url, timeout_s=5.0)
        assert person.done()
        with pytest.raises(OpponentError, match="refused /person/turn: the person is mid-turn"):
            person.your_turn()
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(OpponentError, match=f"cannot reach the simulated person at {url}"):
        SimulatedPerson(url, timeout_s=5.0).done()


def test_a_cell_that_answers_what_is_not_json_is_refused_in_words():
    from controller.cell_http import CellRefused, cell_json

    class NotJson(_Cell):
        def do_GET(self):
            data = b"<html>busy</html>"
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), NotJson)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with pytest.raises(CellRefused, match="is not JSON: b'<html>busy"):
            cell_json(f"http://127.0.0.1:{server.server_address[1]}/person.json", timeout_s=5.0)
    finally:
        server.shutdown()
        server.server_close()
