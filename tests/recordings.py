"""Reading a Rerun recording back through Rerun's own API, for the tests that check what the
viewer would show."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import rerun as rr


@dataclass
class Entity:
    rows: int = 0
    times: list[float] = field(default_factory=list)        # device (or match) time, s
    columns: dict[str, list] = field(default_factory=lambda: defaultdict(list))

    @property
    def span_s(self) -> float:
        return max(self.times) - min(self.times) if len(self.times) > 1 else 0.0


def read_recording(path: Path) -> dict[str, Entity]:
    """Every entity of the recording at `path`: its rows, their device times and its columns."""
    entities: dict[str, Entity] = defaultdict(Entity)
    for chunk in rr.chunk.RrdReader(path).stream():
        batch = chunk.to_record_batch()
        entity = entities[chunk.entity_path]
        entity.rows += chunk.num_rows
        names = batch.schema.names
        timeline = next((t for t in ("device_time", "match_time") if t in names), None)
        if timeline is not None:
            entity.times += list(batch.column(timeline).cast("int64").to_numpy() / 1e9)
        for name in names:
            if ":" in name:
                entity.columns[name] += batch.column(name).to_pylist()
    return dict(entities)


def scalars(entity: Entity) -> np.ndarray:
    """The scalar series of an entity, one row a sample."""
    return np.array([row for row in entity.columns["Scalars:scalars"]], float)


def texts(entity: Entity) -> list[str]:
    """The text log lines of an entity, in order."""
    return [line for row in entity.columns["TextLog:text"] for line in row]
