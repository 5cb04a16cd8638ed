"""`jenga-robot play` (a match): the robot against a person, with live progress, the result at
the end, and a report folder holding the match log and a short summary."""

from __future__ import annotations

import argparse
import datetime
from pathlib import Path

from controller.commands.cell_cmd import load
from controller.commands.common import EXIT_FAILED, CommandError
from planning.rules import MatchConfig, RuleOptions, Scoring

ROBOT = "robot"


def match_config(args: argparse.Namespace, person: str) -> MatchConfig:
    players = (ROBOT, person) if args.first == "robot" else (person, ROBOT)
    try:
        return MatchConfig(players, Scoring(args.scoring), target_points=args.points,
                           rounds=args.rounds, options=RuleOptions.with_variants(args.variant))
    except ValueError as exc:
        raise CommandError(str(exc)) from None


def report_dir(args: argparse.Namespace) -> Path:
    if args.report_dir:
        return Path(args.report_dir)
    stamp = datetime.datetime.now().strftime("%Y%m%d-%H%M%S")
    return Path("reports") / f"match-{stamp}"


def run_match(args: argparse.Namespace) -> int:
    from controller.cell_link import CellLink, CellLinkError, SimulatedCell
    from controller.commands.play_cmd import SIM_STALL_S
    from controller.match_log import MatchLog, MatchLogError
    from controller.match_progress import MatchProgress
    from controller.match_runner import MatchError, MatchRunner
    from controller.opponents import ConsolePerson, OpponentError, SimulatedPerson
    from firmware_bridge.errors import ArmError

    person_kind = args.person or ("console" if args.serial else "simulated")
    if person_kind == "simulated" and args.serial:
        raise CommandError("a simulated person plays only in the simulated cell: leave out --serial")
    if not 0.0 <= args.person_skill <= 1.0:
        raise CommandError(f"--person-skill must be within 0..1, got {args.person_skill}")
    cell = load(args.cell)
    config = match_config(args, "person")
    folder = report_dir(args)
    log_path = folder / "match.jsonl"
    sim = None
    try:
        log = MatchLog.create(log_path, {"config": config.to_json(), "cell": cell.name,
                                         "seed": None if args.serial else args.seed,
                                         "opponent": person_kind,
                                         "person_skill": args.person_skill})
    except MatchLogError as exc:
        raise CommandError(str(exc)) from None
    progress = MatchProgress(config)
    cameras = dict(item.split("=", 1) for item in args.camera if "=" in item)
    try:
        if args.serial:
            serial = args.serial
        else:
            print(f"starting the simulated cell (seed {args.seed}, person skill "
                  f"{args.person_skill:g})", flush=True)
            sim = SimulatedCell(args.seed, args.cell, args.person_skill)
            serial, cameras = sim.serial, sim.camera_urls
        with CellLink(cell, serial, cameras, stall_s=None if args.serial else SIM_STALL_S) as link:
            person = SimulatedPerson(sim.base_url) if sim else ConsolePerson(on_stop=link.arm.estop)
            runner = MatchRunner(link, log, progress, person,
                                 on_line=lambda line: print(line, flush=True))
            winner = runner.run()
    except (CellLinkError, ArmError, MatchError, OpponentError, MatchLogError) as exc:
        log.append("note", text=f"stopped: {exc}")
        log.close()
        raise CommandError(f"{exc} (the match so far is in {log_path})", EXIT_FAILED) from None
    finally:
        if sim is not None:
            sim.close()
    log.close()
    summary = write_summary(folder, progress, runner)
    print(summary, flush=True)
    return 0 if winner is not None else EXIT_FAILED


def write_summary(folder: Path, progress, runner) -> str:
    match = progress.match
    lines = [f"winner: {match.winner}",
             "score: " + ", ".join(f"{side} {points}" for side, points in match.standings()),
             f"rounds: {len(match.results)}"]
    for n, result in enumerate(match.results, start=1):
        lines.append(f"  round {n}: {result.status.value}, loser {result.loser}, winner {result.winner}"
                     f" ({result.reason})")
    turns = runner.reports
    if turns:
        times = sorted(r.duration_s for r in turns)
        lines.append(f"robot turns: {len(turns)}, median {times[len(times) // 2]:.1f} s")
    lines.append(f"log: {folder / 'match.jsonl'}")
    text = "\n".join(lines)
    (folder / "summary.txt").write_text(text + "\n")
    return text
