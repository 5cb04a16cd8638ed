"""The robot's opponent as the match sees them: someone to tell "your turn", "rebuild the tower"
and "the match goes on from this tower", who may say "done". A simulated person is told through
the simulated cell's HTTP interface (what a speaker and a display would do for a real one); a real
person reads the console and presses Enter. Either way the robot sees what they do with its
cameras, never through this interface; the simulated person's own account of a turn
(`last_turn`) goes only into the match log, for whoever reads it.
"""

from __future__ import annotations

import queue
import sys
import threading

from controller.cell_http import CellRefused, CellUnreachable, cell_json


class OpponentError(RuntimeError):
    """The opponent could not be told or asked."""


class SimulatedPerson:
    """The simulated cell's person (`sim serve`), at `base_url` (the cell's HTTP address)."""

    name = "person"

    def __init__(self, base_url: str, timeout_s: float = 10.0, mistake: str | None = None):
        """`mistake`: a rule the person breaks on every turn, to show the referee at work
        (hardware/sim/person.py's MISTAKES)."""
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.mistake = mistake

    def your_turn(self) -> None:
        self._call("/person/turn", {"mistake": self.mistake} if self.mistake else {})

    def done(self) -> bool:
        return self._call("/person.json")["state"] == "done"

    def rebuild(self) -> None:
        self._call("/tower/rebuild", {})

    def last_turn(self) -> dict | None:
        """What the person tried in their last turn: each block pushed (how hard, whether it came
        out), the block taken and where it went."""
        return self._call("/person.json").get("last_turn") or None

    def resume(self, tower) -> None:
        """A match goes on after the controller stopped: the tower is set up as the log left it
        (a restarted simulator starts from a fresh tower)."""
        self._call("/tower/arrange", tower.to_json())

    def say(self, text: str) -> None:
        pass

    def _call(self, path: str, body: dict | None = None) -> dict:
        """POST `body` to the cell's `path`, or GET it when there is none."""
        try:
            return cell_json(self.base_url + path, body, self.timeout_s)
        except CellRefused as exc:
            raise OpponentError(f"the simulated person refused {path}: {exc}") from None
        except CellUnreachable as exc:
            raise OpponentError(f"cannot reach the simulated person at {self.base_url}: {exc}") from None


class ConsoleInput:
    """Lines typed at the console, read in a thread of its own. `stop` (or `e`, `estop`) and Enter
    is the emergency stop, handed to `on_stop` at once, whatever the match is doing; any other
    line waits in `lines`."""

    STOP_WORDS = ("e", "stop", "estop")

    def __init__(self, on_stop=None, stream=None):
        self.on_stop = on_stop
        self.lines: queue.Queue[str] = queue.Queue()
        self._stream = stream or sys.stdin
        threading.Thread(target=self._read, name="console", daemon=True).start()

    def drain(self) -> None:
        while not self.lines.empty():
            self.lines.get_nowait()

    def _read(self) -> None:
        for line in self._stream:
            word = line.strip().lower()
            if word in self.STOP_WORDS and self.on_stop is not None:
                try:
                    self.on_stop()
                    print(">> emergency stop: the arm is holding", flush=True)
                except Exception as exc:      # the link may be down: say so, keep reading
                    print(f">> emergency stop not delivered: {exc}", flush=True)
                continue
            self.lines.put(word)


class ConsolePerson:
    """A person at the table, told on the console. Enter says "done"; `stop` and Enter is the
    emergency stop, handed to `on_stop`."""

    name = "person"

    def __init__(self, on_stop=None, stream=None):
        self.console = ConsoleInput(on_stop, stream)

    def your_turn(self) -> None:
        self.console.drain()
        self.say("your turn: take a block, put it on top, take your hand away and press Enter")

    def done(self) -> bool:
        try:
            self.console.lines.get_nowait()
        except queue.Empty:
            return False
        return True

    def rebuild(self) -> None:
        self.console.drain()
        self.say("new round: build the tower again, then press Enter")
        self.console.lines.get()

    def last_turn(self) -> dict | None:
        """A person at the table tells nobody what they tried."""
        return None

    def resume(self, tower) -> None:
        """A match goes on after the controller stopped: the tower should still stand as the log
        left it; the person checks it (the robot then looks for itself)."""
        self.console.drain()
        self.say(f"the match goes on: the tower should stand at {tower.stories()} stories, as the "
                 f"report's last tower map shows; check it and press Enter")
        self.console.lines.get()

    def say(self, text: str) -> None:
        print(f">> {text}", flush=True)
