"""The robot's opponent as the match sees them: someone to tell "your turn" and "rebuild the tower",
who may say "done". A simulated person is told through the simulated cell's HTTP interface (what a
speaker and a display would do for a real one); a real person reads the console and presses Enter.
Either way the robot sees what they do with its cameras, never through this interface.
"""

from __future__ import annotations

import json
import queue
import sys
import threading
import urllib.error
import urllib.request


class OpponentError(RuntimeError):
    """The opponent could not be told or asked."""


class SimulatedPerson:
    """The simulated cell's person (`sim serve`), at `base_url` (the cell's HTTP address)."""

    name = "person"

    def __init__(self, base_url: str, timeout_s: float = 10.0):
        self.base_url = base_url.rstrip("/")
        self.timeout_s = timeout_s
        self.mistake: str | None = None     # for tests: the next turn breaks this rule

    def your_turn(self) -> None:
        body = {"mistake": self.mistake} if self.mistake else {}
        self.mistake = None
        self._post("/person/turn", body)

    def done(self) -> bool:
        return self._get("/person.json")["state"] == "done"

    def rebuild(self) -> None:
        self._post("/tower/rebuild", {})

    def say(self, text: str) -> None:
        pass

    def _post(self, path: str, body: dict) -> dict:
        request = urllib.request.Request(self.base_url + path, data=json.dumps(body).encode(),
                                         method="POST", headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as reply:
                return json.loads(reply.read())
        except urllib.error.HTTPError as exc:
            raise OpponentError(f"the simulated person refused {path}: "
                                f"{json.loads(exc.read()).get('error', exc.reason)}") from None
        except OSError as exc:
            raise OpponentError(f"cannot reach the simulated person at {self.base_url}: {exc}") from None

    def _get(self, path: str) -> dict:
        try:
            with urllib.request.urlopen(self.base_url + path, timeout=self.timeout_s) as reply:
                return json.loads(reply.read())
        except OSError as exc:
            raise OpponentError(f"cannot reach the simulated person at {self.base_url}: {exc}") from None


class ConsolePerson:
    """A person at the table, told on the console. Enter says "done"; `stop` (or `e`) and Enter
    is the emergency stop, handed to `on_stop`."""

    name = "person"

    def __init__(self, on_stop=None, stream=None):
        self.on_stop = on_stop
        self._lines: queue.Queue[str] = queue.Queue()
        self._stream = stream or sys.stdin
        threading.Thread(target=self._read, name="console", daemon=True).start()

    def your_turn(self) -> None:
        self._drain()
        self.say("your turn: take a block, put it on top, take your hand away and press Enter")

    def done(self) -> bool:
        try:
            self._lines.get_nowait()
        except queue.Empty:
            return False
        return True

    def rebuild(self) -> None:
        self._drain()
        self.say("new round: build the tower again, then press Enter")
        self._lines.get()

    def say(self, text: str) -> None:
        print(f">> {text}", flush=True)

    def _drain(self) -> None:
        while not self._lines.empty():
            self._lines.get_nowait()

    def _read(self) -> None:
        for line in self._stream:
            word = line.strip().lower()
            if word in ("e", "stop", "estop") and self.on_stop is not None:
                self.on_stop()
                continue
            self._lines.put(word)
