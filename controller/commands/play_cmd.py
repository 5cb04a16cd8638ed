"""`jenga-robot play`: the robot plays a match against a person (by default the simulated cell's
simulated person), or with `--solo` builds alone until the tower falls or no block will come out."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os

from controller.commands.cell_cmd import load
from controller.commands.common import EXIT_FAILED, CommandError, interruption
from controller.commands.viewing import add_viewer_options, close_recorder, open_recorder
from controller.wording import plural, slot_name, turn_phase
from hardware.cells import DEFAULT_CELL
from planning.game.rules import VARIANT_NAMES, Scoring

# A simulated device counts every deadline in its own (device) time, and its world waits for a
# host a busy machine kept from running (hardware/sim/server.py): the wall clock only tells that its
# process is gone (the pty closes: PortClosedError at once) or hung, silent this long. A loaded
# machine (load 3-11 on 2 cores) kept a sound simulated cell silent for 0.5 s.
SIM_STALL_S = 30.0
# the rules the simulated person can be told to break (hardware/sim/person.py)
PERSON_MISTAKES = ("wrong_orientation", "forbidden_layer", "new_layer_early", "tested_left_out")


# Options that apply to one kind of play, with their defaults. Each is None unless given, so that
# one given where it does not apply is refused rather than silently ignored.
SOLO_OPTIONS = {"turns": None, "records": "reports/solo-records.json", "report": None}
MATCH_OPTIONS = {"scoring": "round_wins", "points": 1, "rounds": 3, "first": "person", "variant": [],
                 "person": None, "person_skill": 0.7, "person_mistake": None, "report_dir": None,
                 "resume": None, "turn_limit_s": None}
# a resumed match is played with the settings its log holds
KEPT_BY_THE_LOG = ("seed", "scoring", "points", "rounds", "first", "variant", "person",
                   "person_skill", "person_mistake", "turn_limit_s", "report_dir")
DEFAULT_SEED = 1


def register(commands: argparse._SubParsersAction) -> None:
    play = commands.add_parser("play", help="play Jenga (the simulated cell unless hardware is named)")
    play.add_argument("--solo", action="store_true", help="the robot plays every turn")
    play.add_argument("--turns", type=int,
                      help="a move cap for a solo game (default: none, the game goes on until the "
                           "tower falls or no block will come out)")
    play.add_argument("--scoring", choices=[s.value for s in Scoring],
                      help="match scoring (default round_wins; team: the robot and the person "
                           "are a team each)")
    play.add_argument("--points", type=int,
                      help="round wins or team points that win the match (default 1)")
    play.add_argument("--rounds", type=int,
                      help="rounds of a penalty-total or survival match (default 3)")
    play.add_argument("--first", choices=["person", "robot"],
                      help="who builds and moves first (default person)")
    play.add_argument("--variant", action="append", choices=VARIANT_NAMES,
                      help="a rule variant, once per variant")
    play.add_argument("--person", choices=["simulated", "console"],
                      help="the opponent: the simulated cell's person (default without --serial) "
                           "or a real one at the table, who presses Enter when done")
    play.add_argument("--person-skill", type=float, metavar="0..1",
                      help="the simulated person's skill (default 0.7)")
    play.add_argument("--person-mistake", choices=PERSON_MISTAKES,
                      help="the simulated person breaks this rule on every turn, to show the "
                           "referee at work (warned the first time, the round lost on a repeat)")
    play.add_argument("--report-dir", metavar="DIR",
                      help="where a match writes its log, summary and plots "
                           "(default reports/match-TIME)")
    play.add_argument("--resume", metavar="LOG",
                      help="go on with the match in this log (a report folder's match.jsonl), "
                           "after the controller was stopped or killed; the log's own settings "
                           "(scoring, seed, opponent) hold")
    play.add_argument("--seed", type=int, help=f"tower seed of the simulated cell (default {DEFAULT_SEED})")
    play.add_argument("--cell", default=str(DEFAULT_CELL), metavar="FILE")
    play.add_argument("--serial", metavar="PORT", help="the arm's serial port (real hardware)")
    play.add_argument("--camera", action="append", default=[], metavar="NAME=URL",
                      help="a camera's stream (real hardware), once per camera")
    play.add_argument("--records", metavar="FILE",
                      help="solo play: the height records kept per cell and set size "
                           "(default reports/solo-records.json)")
    play.add_argument("--turn-limit-s", type=float, metavar="S",
                      help="the timed-turns variant: a limit per turn from its first touch "
                           "(RULES.md names 30 and 60 s)")
    play.add_argument("--report", metavar="FILE",
                      help="solo play: write every turn as JSON: the block taken, each probe "
                           "with its force trace, the time of each phase (rewritten as each turn "
                           "ends; written on Ctrl-C too)")
    add_viewer_options(play)
    play.set_defaults(run=run_play)


def settle_options(args: argparse.Namespace) -> None:
    """Refuse an option given where it does not apply; fill in the defaults of the rest."""
    def given(names) -> list[str]:
        return ["--" + n.replace("_", "-") for n in names if getattr(args, n) is not None]

    wrong = given(MATCH_OPTIONS) if args.solo else given(SOLO_OPTIONS)
    if wrong:
        raise CommandError(f"{', '.join(wrong)}: for a match, not for --solo play" if args.solo else
                           f"{', '.join(wrong)}: for --solo play (add --solo), not for a match")
    kept = given(KEPT_BY_THE_LOG) if args.resume else []
    if kept:
        raise CommandError(f"{', '.join(kept)}: a resumed match keeps the settings in its log; "
                           f"leave {'it' if len(kept) == 1 else 'them'} out")
    for name, default in {**SOLO_OPTIONS, **MATCH_OPTIONS, "seed": DEFAULT_SEED}.items():
        if getattr(args, name) is None:
            setattr(args, name, list(default) if isinstance(default, list) else default)


def _describe(report) -> str:
    probes = ", ".join(f"{slot_name(p.layer, p.slot)} {p.peak_force_n:.2f} N/{p.travel_mm:.1f} mm"
                       for p in report.probes)
    phases = " ".join(f"{k} {v:.1f}" for k, v in report.phases_s.items())
    took = slot_name(*report.source) if report.source else "nothing"
    to = slot_name(*report.target) if report.target else "-"
    return (f"turn {report.number}: took {took} (block {report.block}) -> {to}; "
            f"{'legal' if report.legal else 'ILLEGAL'}{'; THE TOWER FELL' if report.fell else ''}; "
            f"probes [{probes}]; {report.duration_s:.1f} s of world time ({phases}; "
            f"{report.moving_s:.1f} s of it moving); "
            f"stories {report.stories or '?'}")


def write_report(path: str, result, playing: bool = False) -> None:
    """The game as JSON, replaced whole (written beside, synced and renamed: a stop or a crash
    while it is written leaves the last one). `playing`: the game goes on after this turn."""
    turns = [dataclasses.asdict(t) | {"duration_s": t.duration_s} for t in result.turns]
    document = {"turns": turns, "stories": result.stories, "fell": result.fell, "error": result.error,
                "tower": result.tower, "world_s": round(result.world_s, 3),
                "wall_s": round(result.wall_s, 3), "pace": round(result.pace, 3),
                "legal_turns": result.legal_turns,
                "ended": f"not yet: turn {len(result.turns)} done" if playing else result.ending(),
                "extraction_success": round(result.extraction_success, 3),
                "probes_per_turn": round(result.probes_per_turn, 2),
                "median_turn_s": result.median_turn_s}
    partial = f"{path}.partial"
    with open(partial, "w") as out:
        json.dump(document, out, indent=1, default=lambda o: o.item() if hasattr(o, "item") else str(o))
        out.flush()
        os.fsync(out.fileno())
    os.replace(partial, path)


def _check_writable(path: str) -> None:
    """Refuse a report path that cannot be written before the game starts, not after a turn."""
    try:
        with open(f"{path}.partial", "w"):
            pass
        os.remove(f"{path}.partial")
    except OSError as exc:
        raise CommandError(f"cannot write the report {path}: {exc.strerror or exc}") from None


def run_play(args: argparse.Namespace) -> int:
    from controller.cell_link import CellLink, CellLinkError, SimulatedCell
    from controller.solo import SoloResult, play_solo
    from firmware_bridge.errors import ArmError

    settle_options(args)
    if not args.solo:
        from controller.commands.match_cmd import run_match
        return run_match(args)
    if args.turns is not None and args.turns < 1:
        raise CommandError("--turns must be at least 1")
    if args.report:
        _check_writable(args.report)
    cell = load(args.cell)
    cameras = dict(item.split("=", 1) for item in args.camera if "=" in item)
    result = SoloResult()

    def turn_done(report) -> None:
        print(_describe(report), flush=True)
        if args.report:
            # each turn as it ends: a crash loses none
            write_report(args.report, result, playing=not (result.error or result.fell))

    sim = None
    recorder = open_recorder(args)
    try:
        if args.serial:
            if set(cameras) != {c.name for c in cell.cameras}:
                raise CommandError(f"name every camera of the cell: "
                                   f"{', '.join(c.name + '=URL' for c in cell.cameras)}")
            serial = args.serial
        else:
            print(f"starting the simulated cell (seed {args.seed})", flush=True)
            sim = SimulatedCell(args.seed, args.cell)
            serial, cameras = sim.serial, sim.camera_urls
        # A simulator sharing this computer with the controller can be paused for a few hundred
        # milliseconds when the machine is busy: give its link that much slack.
        with CellLink(cell, serial, cameras, stall_s=None if args.serial else SIM_STALL_S) as link:
            watched, on_turn = None, turn_done
            if recorder is not None:
                from controller.viewer.watch import watch_link, watch_player
                watch = watch_link(recorder, link)
                watched = lambda player: watch_player(watch, player)   # noqa: E731
                on_turn = lambda report: (watch.turn_done(report), turn_done(report))  # noqa: E731
            play_solo(link, args.turns, on_turn=on_turn,
                      on_phase=lambda phase, r: print(
                          f"  turn {r.number}: {turn_phase(phase, r)}", flush=True),
                      on_note=lambda text: print(f"  {text}", flush=True), result=result,
                      watch=watched)
    except (CellLinkError, ArmError) as exc:
        raise CommandError(str(exc), EXIT_FAILED) from None
    except KeyboardInterrupt as exc:
        # the arm was left stopped as the link closed; the game so far is still reported
        how, status = interruption(exc)
        if result.error is None:        # not after the game had already ended
            stopped = result.turns[-1].number if result.turns and result.turns[-1].error \
                else len(result.turns) + 1
            result.error = f"turn {stopped}: {how}"
        _finish_solo(args, cell, result)
        return status
    finally:
        close_recorder(recorder, args, result.wall_s)
        if sim is not None:
            sim.close()
    _finish_solo(args, cell, result)
    return 0 if result.ran_as_asked(args.turns) else EXIT_FAILED


def _finish_solo(args: argparse.Namespace, cell, result) -> None:
    """Write the solo game's report and print its summary and the height record."""
    if args.report:
        write_report(args.report, result)
        print(f"report: {args.report}", flush=True)
    print(f"result: {plural(len(result.turns), 'turn')}, "
          f"{'all legal' if result.all_legal else 'NOT all legal'}, "
          f"tower {result.tower}, {result.stories or '?'} stories"
          + (f"; {result.world_s:.0f} s of world time in {result.wall_s:.0f} s "
             f"(pace {result.pace:.2f})" if result.world_s > 0 else "")
          + (f"; stopped: {result.error}" if result.error else ""), flush=True)
    print(f"game: {plural(result.legal_turns, 'legal turn')}, "
          f"ended: {result.ending()}; extraction success {result.extraction_success:.0%}, "
          f"{result.probes_per_turn:.1f} probes a turn"
          + (f", median turn {result.median_turn_s:.1f} s" if result.median_turn_s else ""),
          flush=True)
    print(solo_record_line(args, cell, result), flush=True)


def solo_record_line(args: argparse.Namespace, cell, result) -> str:
    """Keep the solo height record: the height after the last legal turn with the tower standing."""
    from pathlib import Path

    from controller.records import RecordError, record_key, update_record

    legal = [t for t in result.turns if t.legal and not t.fell and t.stories]
    stories = legal[-1].stories if legal else ""
    key = record_key(cell.name, cell.blocks.count)
    try:
        old, beaten = update_record(Path(args.records), key, stories, len(legal),
                                    None if args.serial else args.seed)
    except RecordError as exc:
        raise CommandError(str(exc), EXIT_FAILED) from None
    before = f"{old.stories} stories ({plural(old.blocks_moved, 'block')}, {old.date})" if old else "none yet"
    if beaten:
        return f"solo record ({key}): NEW RECORD {stories} stories; the record was {before}"
    return f"solo record ({key}): {before}; this game {stories or 'no legal turn'}"
