"""A match log (controller/match/log.py) as a Rerun recording, after the fact: every event as
text, every probe's force trace and every pull's drag, and the tower after every turn at its
slots' nominal places (the log keeps which slots are full, not where perception saw each block).
Its time line is `match_time`, the log's own clock (s); live recordings run on `device_time`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from controller.viewer.recorder import Recorder, paths
from controller.viewer.scene import nominal_boxes
from controller.wording import probe_result
from planning.game.cell.model import Cell
from planning.game.geometry import TowerGeometry
from planning.game.tower import TowerError, TowerState
from planning.stability import BlockDims

MATCH_TIME = "match_time"
# fields that are the record's bookkeeping or too long for a line of text
_NOT_SAID = ("seq", "event", "wall", "tower", "standings", "config", "trace", "pull_trace",
             "moves", "phases_s", "result", "account")


def describe_event(record: dict[str, Any]) -> tuple[str, str] | None:
    """A log event in one line, and its level (INFO, WARN, ERROR); None for bookkeeping."""
    kind = record.get("event", "")
    if kind in ("clock", "match"):
        return None
    if kind == "note":
        return str(record.get("text", "")), "INFO"
    if kind == "probe":
        return probe_result(record["layer"], record["slot"], record["peak_force_n"],
                            record["travel_mm"], record.get("p_loose", float("nan")),
                            record.get("threshold_n")), "INFO"
    details = ", ".join(f"{k} {v}" for k, v in record.items() if k not in _NOT_SAID)
    if kind == "round_end" and "reason" in record:
        details = str(record["reason"])
    level = {"fall": "ERROR", "violation": "WARN"}.get(kind, "INFO")
    return (f"{kind}: {details}" if details else kind), level


def record_match_log(events: list[dict[str, Any]], cell: Cell, rrd: Path) -> dict[str, int]:
    """Write the recording; returns how many of each thing it holds."""
    geometry, dims = TowerGeometry.from_cell(cell), BlockDims.of(cell.blocks)
    counts = {"events": 0, "probes": 0, "pulls": 0, "towers": 0}
    t = 0.0
    with Recorder(rrd, timeline=MATCH_TIME, announce=lambda text: None) as recorder:
        for record in events:
            if isinstance(record.get("t"), (int, float)):
                t = float(record["t"])
            kind = record.get("event")
            if kind == "probe" and record.get("trace"):
                name = f"{record['layer']}.{record['slot']}"
                recorder.series(f"{paths.PROBES}/{name}", record["trace"])
                t = max(t, record["trace"][-1][0])
                counts["probes"] += 1
            elif kind == "place" and record.get("pull_trace"):
                source = record.get("source") or [0, 0]
                recorder.series(f"{paths.PULLS}/{source[0]}.{source[1]}", record["pull_trace"])
                counts["pulls"] += 1
            elif kind in ("round_start", "turn_end") and record.get("tower"):
                try:
                    state = TowerState.from_json(record["tower"])
                except (TowerError, KeyError, TypeError, ValueError):
                    state = None
                if state is not None:
                    recorder.boxes(paths.TOWER, t, nominal_boxes(state, geometry, dims))
                    counts["towers"] += 1
            said = describe_event(record)
            if said is not None:
                recorder.event(t, *said)
                counts["events"] += 1
    return counts
