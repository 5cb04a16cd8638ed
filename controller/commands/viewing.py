"""`--viewer` and `--rrd FILE`, for the commands that play (`play`, `play --solo`, `sim serve`):
the options, and the recorder they ask for (controller/viewer, docs/viewer.md)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from controller.commands.common import CommandError


def add_viewer_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--viewer", action="store_true",
                        help="watch it live in Rerun's viewer: a window where there is a display, "
                             "else the web viewer on 127.0.0.1 (its address is printed)")
    parser.add_argument("--viewer-analytics", action="store_true",
                        help="let the viewer send Rerun's anonymous usage statistics as your "
                             "Rerun configuration says (off without this)")
    parser.add_argument("--rrd", metavar="FILE",
                        help="record it to FILE in Rerun's format (python -m rerun_cli FILE "
                             "opens it)")


def has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def open_recorder(args: argparse.Namespace, default_rrd: Path | None = None):
    """The recorder `--viewer` and `--rrd` ask for (a match records to `default_rrd` unless
    told otherwise), or None; CommandError if it cannot start."""
    if default_rrd is not None and not args.rrd:
        args.rrd = str(default_rrd)
    if not (args.viewer or args.rrd):
        return None
    from controller.viewer.recorder import Recorder, RecorderError
    try:
        return Recorder(Path(args.rrd) if args.rrd else None, viewer=args.viewer,
                        has_display=has_display(), viewer_analytics=args.viewer_analytics,
                        announce=lambda text: print(text, flush=True))
    except RecorderError as exc:
        raise CommandError(str(exc)) from None


def close_recorder(recorder, args: argparse.Namespace, wall_s: float | None = None) -> None:
    """Write what is left and say where the recording is and what it cost."""
    if recorder is None:
        return
    recorder.close()
    share = f", {100 * recorder.cost_s / wall_s:.1f} % of the game's {wall_s:.0f} s" \
        if wall_s else ""
    where = f"{args.rrd}; " if args.rrd else ""
    print(f"recording: {where}recording took {recorder.cost_s:.2f} s of the controller's "
          f"time{share}", flush=True)
