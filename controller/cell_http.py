"""JSON over HTTP to a cell's own interface: the simulated person's turns (controller/match/
opponents.py) and the simulated cell's test-only actions (controller/bench/surprises.py). The
robot's readings never come this way (the serial link and the camera streams carry them)."""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request


class CellHttpError(RuntimeError):
    """The cell's HTTP interface did not give what was asked."""


class CellRefused(CellHttpError):
    """The cell answered, with an error (its words) or with what is not JSON."""


class CellUnreachable(CellHttpError):
    """No whole answer from the cell: not running, another address, or hung."""


def cell_json(url: str, body: dict | None = None, timeout_s: float = 10.0) -> dict:
    """POST `body` (an action) or, with none, GET (a document) at `url`; the answer's JSON."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, method="GET" if body is None else "POST",
                                     headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as reply:
            body = reply.read()
    except urllib.error.HTTPError as exc:
        raise CellRefused(_words(exc)) from None
    except (OSError, http.client.HTTPException) as exc:
        raise CellUnreachable(str(exc) or type(exc).__name__) from None
    try:
        return json.loads(body)
    except ValueError:
        raise CellRefused(f"the answer to {url} is not JSON: {body[:80]!r}") from None


def _words(exc: urllib.error.HTTPError) -> str:
    """What a cell that refused said: its JSON's `error`, else the HTTP reason."""
    try:
        answer = json.loads(exc.read())
    except (ValueError, OSError, http.client.HTTPException):
        return str(exc.reason)
    return str(answer.get("error", exc.reason)) if isinstance(answer, dict) else str(exc.reason)
