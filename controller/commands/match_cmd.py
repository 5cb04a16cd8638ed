"""`jenga-robot play` (a match): the robot against a person, with live progress, the result at
the end, and a report folder holding the match log, a short summary and the plots
(controller/match/report.py). `--resume LOG` goes on with a match from its log."""

from __future__ import annotations

import argparse
import datetime
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from controller.commands.cell_cmd import load
from controller.commands.common import EXIT_FAILED, CommandError, interruption
from controller.commands.viewing import close_recorder, open_recorder
from controller.viewer.video import CameraVideos, free_name
from controller.wording import plural
from planning.game.rules import MatchConfig, RuleOptions, Scoring

if TYPE_CHECKING:
    from controller.match.log import MatchLog
    from controller.match.progress import MatchProgress

ROBOT = "robot"
PERSON = "person"


def match_config(args: argparse.Namespace, person: str) -> MatchConfig:
    players = (ROBOT, person) if args.first == "robot" else (person, ROBOT)
    scoring = Scoring(args.scoring)
    # one robot and one person: a team each
    teams = ((ROBOT,), (person,)) if scoring is Scoring.TEAM else ()
    try:
        options = RuleOptions.with_variants(args.variant, turn_limit_s=args.turn_limit_s)
        return MatchConfig(players, scoring, target_points=args.points, rounds=args.rounds,
                           teams=teams, options=options)
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def report_dir(args: argparse.Namespace) -> Path:
    if args.report_dir:
        return Path(args.report_dir)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("reports") / f"match-{stamp}"


@dataclass
class Setup:
    """What a match is played with: from the options, or from the header of the log it resumes.
    A new match's log is created once the cell answers: a match that never started leaves no
    report folder and nothing to resume."""

    log: MatchLog | None
    log_path: Path
    progress: MatchProgress
    opponent: str
    seed: int | None
    person_skill: float
    person_mistake: str | None = None
    ended: bool = False       # the log holds the match's end
    header: dict | None = None  # a new match's log header

    def open_log(self) -> MatchLog:
        from controller.match.log import MatchLog
        if self.log is None:
            self.log = MatchLog.create(self.log_path, self.header)
        return self.log


def new_match(args: argparse.Namespace, cell) -> Setup:
    from controller.match.log import MatchLog
    from controller.match.progress import MatchProgress

    opponent = args.person or ("console" if args.serial else "simulated")
    if opponent == "simulated" and args.serial:
        raise CommandError("a simulated person plays only in the simulated cell: leave out --serial")
    if not 0.0 <= args.person_skill <= 1.0:
        raise CommandError(f"--person-skill must be within 0..1, got {args.person_skill}")
    config = match_config(args, PERSON)
    log_path = report_dir(args) / "match.jsonl"
    seed = None if args.serial else args.seed
    if args.person_mistake and opponent != "simulated":
        raise CommandError("--person-mistake is for the simulated person")
    MatchLog.check_free(log_path)
    header = {"config": config.to_json(), "cell": cell.name, "seed": seed, "opponent": opponent,
              "person_skill": args.person_skill, "person_mistake": args.person_mistake}
    return Setup(None, log_path, MatchProgress(config), opponent, seed, args.person_skill,
                 args.person_mistake, header=header)


def resumed_match(args: argparse.Namespace, cell) -> Setup:
    from controller.match.log import MatchLog
    from controller.match.progress import MatchProgress, MatchProgressError

    log_path = Path(args.resume)
    log, events = MatchLog.resume(log_path)
    header = events[0]
    try:
        progress = MatchProgress.from_events(events)
    except MatchProgressError as exc:
        log.close()
        raise CommandError(f"{log_path} cannot be resumed: {exc}") from None
    problem = None
    if header.get("cell") not in (None, cell.name):
        problem = f"the match was played on cell {header['cell']!r}: give its file with --cell"
    elif header.get("opponent") == "simulated" and args.serial:
        problem = "the match was played in the simulated cell: leave out --serial"
    elif header.get("opponent") == "console" and not args.serial:
        problem = "the match was played at a real cell: name it with --serial and --camera"
    if problem:
        log.close()
        raise CommandError(f"cannot resume {log_path}: {problem}")
    seed = None
    if header.get("opponent", "simulated") == "simulated":
        seed = header["seed"] if header.get("seed") is not None else args.seed
    return Setup(log, log_path, progress, header.get("opponent", "simulated"), seed,
                 float(header.get("person_skill", args.person_skill)), header.get("person_mistake"),
                 ended=any(e.get("event") == "match_end" for e in events))


def run_match(args: argparse.Namespace) -> int:
    from controller.cell_link import CellLink, CellLinkError, SimulatedCell
    from controller.commands.play_cmd import SIM_STALL_S
    from controller.match.log import MatchLogError
    from controller.match.runner import MatchError, MatchRunner
    from controller.match.opponents import ConsoleInput, ConsolePerson, OpponentError, SimulatedPerson
    from firmware_bridge.errors import ArmError

    cell = load(args.cell)
    try:
        setup = resumed_match(args, cell) if args.resume else new_match(args, cell)
    except MatchLogError as exc:
        raise CommandError(str(exc)) from None
    progress = setup.progress
    if progress.over:
        if not setup.ended:    # killed after the last round ended, before the end reached the disk
            setup.log.append("match_end", winner=progress.match.winner,
                             standings=progress.match.standings())
        setup.log.close()
        print(f"the match in {setup.log_path} is over: {progress.match.winner} won", flush=True)
        return finish(setup, 0)
    if args.resume:
        print(f"resuming the match in {setup.log_path}: score "
              + ", ".join(f"{side} {points}" for side, points in progress.match.standings()),
              flush=True)
    cameras = dict(item.split("=", 1) for item in args.camera if "=" in item)
    sim = None
    status = EXIT_FAILED
    # a match is recorded in its report folder, beside its log, and filmed there (docs/viewer.md);
    # a recording asked for elsewhere is checked before anything starts, the folder's once the
    # match has one (a match that cannot start leaves no folder)
    folder = setup.log_path.parent
    recorder = None
    if args.rrd or args.viewer:           # asked for: checked (and the viewer up) before all else
        recorder = open_recorder(args, default_rrd=free_name(folder, "match", ".rrd"))
    started = time.monotonic()
    try:
        if args.serial:
            serial = args.serial
        else:
            print(f"starting the simulated cell (seed {setup.seed}, person skill "
                  f"{setup.person_skill:g})", flush=True)
            sim = SimulatedCell(setup.seed, args.cell, setup.person_skill)
            serial, cameras = sim.serial, sim.camera_urls
        with CellLink(cell, serial, cameras, stall_s=None if args.serial else SIM_STALL_S) as link:
            log = setup.open_log()
            if recorder is None:
                try:
                    recorder = open_recorder(args, default_rrd=free_name(folder, "match", ".rrd"))
                except CommandError as exc:   # the match plays on, unrecorded
                    print(f"not recorded: {exc}", flush=True)
            if sim:
                person = SimulatedPerson(sim.base_url, mistake=setup.person_mistake)
                # `stop` and Enter at the keyboard is the emergency stop, whoever the opponent
                if sys.stdin is not None and sys.stdin.isatty():
                    ConsoleInput(on_stop=link.arm.estop)
            else:
                person = ConsolePerson(on_stop=link.arm.estop)
            runner = MatchRunner(link, log, progress, person,
                                 on_line=lambda line: print(line, flush=True))
            if recorder is not None:
                from controller.viewer.watch import watch_link, watch_player
                watch = watch_link(recorder, link)
                watch_player(watch, runner.robot)
                log.listeners.append(watch.logged)
            videos = CameraVideos(link.cameras, folder, recorder)
            try:
                winner = runner.run()
            finally:                       # finished while the cameras are still open
                for line in videos.close():
                    print(line, flush=True)
                log.listeners.clear()     # what is logged after this the recording misses
            status = 0 if winner is not None else EXIT_FAILED
    except (CellLinkError, ArmError, MatchError, OpponentError, MatchLogError) as exc:
        if setup.log is None:
            raise CommandError(f"the match could not start: {exc}", EXIT_FAILED) from None
        _note(setup.log, f"stopped: {exc}")
        print(f"jenga-robot: the match stopped: {exc}\n  resume it with: jenga-robot play "
              f"--resume {setup.log_path}", file=sys.stderr, flush=True)
    except KeyboardInterrupt as exc:
        if setup.log is None:
            raise
        how, status = interruption(exc)
        _note(setup.log, f"stopped: {how}")
        print(f"{how}; resume with: jenga-robot play --resume {setup.log_path}",
              file=sys.stderr, flush=True)
    finally:
        close_recorder(recorder, args, time.monotonic() - started)
        if sim is not None:
            sim.close()
        if setup.log is not None:
            setup.log.close()
    return finish(setup, status)


def finish(setup: Setup, status: int) -> int:
    """Draw the report of the match as its log stands, whatever ended the run."""
    from controller.match.log import read_events
    from controller.match.report import write_report

    report = write_report(setup.log_path.parent, read_events(setup.log_path), setup.log_path)
    print(report.summary, flush=True)
    print(f"report: {setup.log_path.parent} ({plural(len(report.files), 'file')})", flush=True)
    return status


def _note(log, text: str) -> None:
    from controller.match.log import MatchLogError
    try:
        log.append("note", text=text)
    except MatchLogError:
        pass              # the disk is the problem; the error itself is reported
