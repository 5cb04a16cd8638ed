"""`jenga-robot cell check`: can the cell's arm reach every slot it will ever need to?"""

from __future__ import annotations

import argparse
import os
import re
from typing import TYPE_CHECKING

from controller.commands.common import EXIT_FAILED, CommandError
from controller.commands.progress import Progress
from hardware.cells import DEFAULT_CELL
from planning.game.cell import CellError, load_cell

if TYPE_CHECKING:
    from planning.reachability import SlotReach


def register(commands: argparse._SubParsersAction) -> None:
    cell = commands.add_parser("cell", help="the robot cell: check the description against the tower")
    sub = cell.add_subparsers(dest="cell_command", required=True, metavar="{check}")
    check = sub.add_parser("check", help="reachability of every push, pull and placement pose")
    check.add_argument("--cell", default=str(DEFAULT_CELL), metavar="FILE",
                       help="cell file (default: the bundled default cell)")
    check.add_argument("--layers", default="1-45", metavar="A-B",
                       help="layers to check, e.g. 1-45 or 7 (default %(default)s)")
    check.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                       help="processes to plan in (default: one per core)")
    check.set_defaults(run=run_check)


def parse_layers(text: str) -> range:
    match = re.fullmatch(r"\s*(\d+)\s*(?:-\s*(\d+))?\s*", text)
    if not match:
        raise CommandError(f"--layers {text!r}: expected a layer or a range like 1-45")
    low = int(match.group(1))
    high = int(match.group(2) or low)
    if low < 1 or high < low or high > 200:
        raise CommandError(f"--layers {text!r}: expected 1 <= A <= B <= 200")
    return range(low, high + 1)


def load(path: str):
    try:
        return load_cell(path)
    except CellError as exc:
        raise CommandError(str(exc)) from None


def run_check(args: argparse.Namespace) -> int:
    from planning.reachability import check_reach   # the kinematics: seconds to import

    layers = parse_layers(args.layers)
    if args.jobs < 1:
        raise CommandError("--jobs must be at least 1")
    cell = load(args.cell)
    results = check_reach(cell, layers, progress=Progress("cell check"), jobs=args.jobs)
    print(render(cell.name, layers, results))
    return 0 if all(r.ok for r in results) else EXIT_FAILED


def render(name: str, layers: range, results: list[SlotReach]) -> str:
    """A compact table: one row per layer, per slot P (push), U (pull), L (place); `x` where a
    needed pose is unreachable, `-` where a placement is not needed (inside the starting tower)."""
    by_layer: dict[int, list[SlotReach]] = {}
    for r in results:
        by_layer.setdefault(r.layer, []).append(r)
    lines = [f"cell {name}: layers {layers.start}-{layers.stop - 1}; P push face, U pull face, "
             f"L placement; x unreachable, - not needed",
             "layer  slot 0  slot 1  slot 2"]
    for layer in sorted(by_layer, reverse=True):
        cells = []
        for r in by_layer[layer]:
            place = "-" if not r.place_needed else ("L" if r.place is None else "x")
            cells.append(("P" if r.push is None else "x") + ("U" if r.pull is None else "x") + place)
        lines.append(f"{layer:5d}  " + "  ".join(f"{c:>6}" for c in cells))
    failures = [(r, what, why) for r in results
                for what, why in (("push", r.push), ("pull", r.pull),
                                  ("place", r.place if r.place_needed else None)) if why]
    needed = sum(2 + r.place_needed for r in results)
    if failures:
        lines.append(f"{len(failures)} of {needed} needed poses unreachable:")
        lines += [f"  layer {r.layer} slot {r.slot} {what}: {why}" for r, what, why in failures]
    else:
        lines.append(f"all {needed} needed poses reachable")
    return "\n".join(lines)
