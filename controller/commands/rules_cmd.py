"""`jenga-robot rules legal|judge`: the rules engine on a tower state or a recorded round."""

from __future__ import annotations

import argparse
import sys

from controller.commands.common import CommandError, print_json, read_json
from planning.game.rules import (RuleInputError, RuleOptions, judge_round, legal_sources, parse_round,
                            placement_target)
from planning.game.rules.options import VARIANT_NAMES
from planning.game.tower import TowerError, TowerState


def register(commands: argparse._SubParsersAction) -> None:
    rules = commands.add_parser("rules", help="the rules engine: legal moves, judging a round")
    sub = rules.add_subparsers(dest="rules_command", required=True, metavar="{legal,judge}")

    legal = sub.add_parser("legal", help="legal sources and the placement target of a tower state")
    legal.add_argument("--state", required=True, metavar="FILE",
                       help='JSON {"layers": [[1,1,1], [1,0,1], ...]}, bottom first, 1 = block')
    legal.add_argument("--variant", action="append", default=[], choices=VARIANT_NAMES,
                       help="rule option to switch on (repeatable), e.g. forbid_top_two")
    legal.set_defaults(run=run_legal)

    judge = sub.add_parser("judge", help="rule on a recorded round: who fell, who won")
    judge.add_argument("--events", required=True, metavar="FILE",
                       help='JSON {"players": [...], "events": [{"t": s, "type": ...}, ...]}')
    judge.add_argument("--window-s", type=float, default=RuleOptions().window_s,
                       help="settling window after a placement, seconds (default %(default)s)")
    judge.add_argument("--turn-limit-s", type=float, default=None,
                       help="timed-turns variant: limit per turn from the first touch, seconds")
    judge.add_argument("--variant", action="append", default=[], choices=VARIANT_NAMES,
                       help="rule option to switch on (repeatable)")
    judge.set_defaults(run=run_judge)


def run_legal(args: argparse.Namespace) -> int:
    options = RuleOptions.with_variants(args.variant)
    try:
        tower = TowerState.from_json(read_json(args.state, "state file"))
    except TowerError as exc:
        raise CommandError(f"{args.state}: not a tower: {exc}") from None
    print_json({
        "highest_complete_layer": tower.highest_complete_layer,
        "sources": [list(s) for s in legal_sources(tower, options)],
        "place": placement_target(tower).to_json(),
        "stories": tower.stories(),
    })
    return 0


def run_judge(args: argparse.Namespace) -> int:
    try:
        options = RuleOptions.with_variants(args.variant, window_s=args.window_s,
                                            turn_limit_s=args.turn_limit_s)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    try:
        players, events = parse_round(read_json(args.events, "events file"))
        result, notes = judge_round(players, events, options)
    except RuleInputError as exc:
        raise CommandError(f"{args.events}: {exc}") from None
    for note in notes:
        print(f"warning: t={note.t:g}: {note.violation.message}", file=sys.stderr)
    print_json(result.to_json())
    return 0
