"""JSON over HTTP to a cell's own interface: the simulated person's turns (controller/match/
opponents.py) and the simulated cell's test-only actions (controller/bench/surprises.py). The
robot's readings never come this way (the serial link and the camera streams carry them)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request


class CellRefused(RuntimeError):
    """The cell answered, with an error: its words."""


class CellUnreachable(RuntimeError):
    """No answer from the cell: not running, another address, or hung."""


def cell_json(url: str, body: dict | None = None, timeout_s: float = 10.0) -> dict:
    """POST `body` (an action) or, with none, GET (a document) at `url`; the answer's JSON."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as reply:
            return json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        try:
            words = json.loads(exc.read()).get("error", exc.reason)
        except ValueError:
            words = exc.reason
        raise CellRefused(str(words)) from None
    except OSError as exc:
        raise CellUnreachable(str(exc)) from None
