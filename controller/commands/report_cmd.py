"""`jenga-robot report LOG [--out DIR] [--rrd FILE]`: draw a match's report folder again from its
log (the summary, every probe's force trace, the tower after every turn), and with `--rrd` turn
the log into a Rerun recording (docs/viewer.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

from controller.commands.common import CommandError
from controller.wording import plural


def register(commands: argparse._SubParsersAction) -> None:
    report = commands.add_parser("report", help="draw a match's report from its log")
    report.add_argument("log", metavar="LOG", help="the match log (a report folder's match.jsonl)")
    report.add_argument("--out", metavar="DIR",
                        help="where to write the report (default: the log's own folder)")
    report.add_argument("--rrd", metavar="FILE",
                        help="also write the log as a Rerun recording (python -m rerun_cli FILE "
                             "opens it)")
    report.add_argument("--cell", default=None, metavar="FILE",
                        help="the cell the match was played in, for the tower's geometry in the "
                             "recording (default: the default cell)")
    report.set_defaults(run=run_report)


def run_report(args: argparse.Namespace) -> int:
    from controller.match.log import MatchLogError, read_events
    from controller.match.progress import MatchProgressError
    from controller.match.report import write_report

    log = Path(args.log)
    try:
        events = read_events(log)
        if not events:
            raise CommandError(f"{log} holds no match")
        report = write_report(Path(args.out) if args.out else log.parent, events, log)
    except (MatchLogError, MatchProgressError) as exc:
        raise CommandError(str(exc)) from None
    except OSError as exc:
        raise CommandError(f"cannot write the report: {exc.strerror or exc}") from None
    print(report.summary)
    print(f"report: {report.files[0].parent} ({plural(len(report.files), 'file')})")
    if getattr(args, "rrd", None):
        from controller.commands.cell_cmd import load
        from controller.viewer.from_log import record_match_log
        from controller.viewer.recorder import RecorderError
        from hardware.cells import DEFAULT_CELL
        try:
            counts = record_match_log(events, load(getattr(args, "cell", None) or str(DEFAULT_CELL)),
                                      Path(args.rrd))
        except RecorderError as exc:
            raise CommandError(str(exc)) from None
        print(f"recording: {args.rrd} ({plural(counts['events'], 'event')}, "
              f"{plural(counts['probes'], 'probe trace')}, {plural(counts['pulls'], 'pull')}, "
              f"{plural(counts['towers'], 'tower')})")
    return 0
