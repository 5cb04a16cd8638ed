"""Solo records: in solo play the robot builds alone and tries to beat its own height record
(RULES.md, Records). A record is kept per cell and set size in a small JSON file, written whole
to a temporary file and renamed over the old one, so a kill never leaves half a record.
"""

from __future__ import annotations

import datetime
import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

from planning.game.tower import parse_stories


class RecordError(RuntimeError):
    """The records file cannot be read or written."""


@dataclass(frozen=True)
class SoloRecord:
    stories: str              # "19 1/3"
    blocks_moved: int
    seed: int | None
    date: str

    def beaten_by(self, stories: str) -> bool:
        return parse_stories(stories) > parse_stories(self.stories)


def record_key(cell_name: str, block_count: int) -> str:
    return f"{cell_name}/{block_count}"


def load_records(path: Path) -> dict[str, SoloRecord]:
    try:
        data = json.loads(path.read_text())
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise RecordError(f"cannot read the solo records {path}: {exc}; move it aside to start "
                          f"new records") from None
    try:
        return {key: SoloRecord(**value) for key, value in data.items()}
    except TypeError as exc:
        raise RecordError(f"the solo records {path} are not this program's: {exc}") from None


def update_record(path: Path, key: str, stories: str, blocks_moved: int,
                  seed: int | None) -> tuple[SoloRecord | None, bool]:
    """The record before this game, and whether this game beat it (and is now the record)."""
    records = load_records(path)
    old = records.get(key)
    if not stories or (old is not None and not old.beaten_by(stories)):
        return old, False
    records[key] = SoloRecord(stories, blocks_moved, seed,
                              datetime.date.today().isoformat())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        scratch = path.with_suffix(path.suffix + ".new")
        scratch.write_text(json.dumps({k: asdict(v) for k, v in records.items()}, indent=1) + "\n")
        os.replace(scratch, path)
    except OSError as exc:
        raise RecordError(f"cannot write the solo records {path}: {exc.strerror or exc}") from None
    return old, True
