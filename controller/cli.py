"""`jenga-robot`: the product's command line."""

from __future__ import annotations

import argparse
import signal
import sys

from controller.commands import (bench_cmd, calibrate_cmd, cell_cmd, play_cmd, report_cmd,
                                 rules_cmd, sim_cmd)
from controller.commands.common import EXIT_TERMINATED, CommandError, Terminated

COMMAND_GROUPS = (rules_cmd, cell_cmd, sim_cmd, bench_cmd, calibrate_cmd, play_cmd, report_cmd)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="jenga-robot",
        description="Controller for a robot arm that plays Jenga, and its simulated cell.")
    commands = parser.add_subparsers(dest="command", required=True)
    for group in COMMAND_GROUPS:
        group.register(commands)
    return parser


def _terminate(signum, frame) -> None:
    raise Terminated()


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    # A command may set its own (sim serve waits for it to stop serving); the default unwinds.
    signal.signal(signal.SIGTERM, _terminate)
    try:
        return args.run(args)
    except CommandError as exc:
        print(f"jenga-robot: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Terminated:
        print("jenga-robot: terminated", file=sys.stderr)
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        print("jenga-robot: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
