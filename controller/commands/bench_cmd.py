"""`jenga-robot bench --suite ...`: speed and accuracy, measured. JSON plus a markdown table."""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import platform
import sys
import time
from pathlib import Path

from controller.bench.oracle import BENCH_POLICIES, TABLE_NAMES, check_mode
from controller.bench.person import SKILLS as PERSON_SKILLS
from controller.commands.cell_cmd import load
from controller.commands.common import CommandError
from controller.commands.game_tables import GAME_COLUMNS, PERSON_COLUMNS, games_table
from controller.commands.progress import Progress
from hardware.cells import DEFAULT_CELL
from planning.policies import POLICIES

SUITES = ("game", "person", "link", "sim", "perception", "safety")
# run on its own: it loads the machine on purpose
LOAD = "load"
# run on its own: ten full-pipeline turns for each kind of surprise take hours
SURPRISES = "surprises"


def register(commands: argparse._SubParsersAction) -> None:
    bench = commands.add_parser("bench", help="benchmarks: game, person, link, sim, perception, safety, load")
    bench.add_argument("--suite", required=True, choices=SUITES + (LOAD, SURPRISES, "all"),
                       help="`all` is every suite but load, which busies the machine on purpose, "
                       "and surprises, which takes hours")
    bench.add_argument("--json", metavar="FILE", help="write the figures as JSON")
    bench.add_argument("--firmware", choices=("python", "c", "qemu"), default="python",
                       help="link suite: the device's firmware: the reference engine, the C "
                            "firmware's engine (host build), or the C firmware's Cortex-M build "
                            "in QEMU (Debian's qemu-system-arm and gcc-arm-none-eabi) (default "
                            "%(default)s)")
    bench.add_argument("--cell", default=str(DEFAULT_CELL), metavar="FILE")
    bench.add_argument("--seeds", type=int, default=3,
                       help="towers for the sim suite, games per policy (or skill) for the game and person "
                       "suites (default 3)")
    bench.add_argument("--first-seed", type=int, default=1)
    bench.add_argument("--scenes", type=int, default=50, help="scenes for the perception suite "
                       "(default %(default)s; every fifth is knocked over)")
    bench.add_argument("--reaches", type=int, default=10,
                       help="hands reaching into the workspace for the safety suite (default %(default)s)")
    bench.add_argument("--max-turns", type=int, default=None,
                       help="game and person suites: a move cap (default: none, every game to its end)")
    bench.add_argument("--policies", default=",".join(POLICIES),
                       help="game suite: which policies, comma-separated (default: the product's "
                       "three; `oracle`, fast mode only, knows each block's true load; "
                       "`oracle-relaxed` also takes any block the stability model says stands)")
    bench.add_argument("--skills", default=",".join(f"{s:g}" for s in PERSON_SKILLS),
                       help="person suite: the simulated person's skills, comma-separated, each 0..1 "
                       "(default %(default)s)")
    bench.add_argument("--full", action="store_true",
                       help="game suite: play through the product's whole pipeline (sim serve, serial "
                       "pty, camera streams), in real time, instead of the fast mode")
    bench.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                       help="game suite (fast mode) and person suite: games played at once (default: one "
                       "per core)")
    bench.add_argument("--ray", metavar="ADDRESS",
                       help="game and person suites (fast mode): play the games on a Ray cluster: "
                       "`local` starts one on this machine (127.0.0.1, --jobs CPUs), `auto` joins "
                       "the one `ray start` started here, or a cluster's address (host:port); "
                       "needs the extra: pip install 'jenga-robot[cluster]'")
    bench.add_argument("--games", metavar="FILE",
                       help="game, person and surprises suites: keep each finished game (each "
                       "trial) in FILE (JSON lines); those FILE already holds, played by this code "
                       "on this cell with this cap, are not played again")
    bench.add_argument("--burners", type=int, default=4,
                       help="load suite: busy processes beside the runs (default %(default)s)")
    bench.add_argument("--trials", type=int, default=10,
                       help="surprises suite: turns for each kind of surprise (default %(default)s)")
    bench.add_argument("--kinds", default=None,
                       help="surprises suite: which kinds, comma-separated (default: every one)")
    bench.add_argument("--turns", type=int, default=3,
                       help="load suite: turns of the solo game (default %(default)s)")
    bench.set_defaults(run=run_bench)


def machine() -> dict:
    return {"python": platform.python_version(), "platform": platform.platform(),
            "cpus": os.cpu_count()}


def run_bench(args: argparse.Namespace) -> int:
    suites = SUITES if args.suite == "all" else (args.suite,)
    if min(args.seeds, args.scenes, args.reaches, args.jobs, args.burners, args.turns,
           args.trials) < 1:
        raise CommandError("--seeds, --scenes, --reaches, --jobs, --burners, --turns and --trials "
                           "must be at least 1")
    kinds = _kinds(args.kinds)
    if args.max_turns is not None and args.max_turns < 1:
        raise CommandError("--max-turns must be at least 1")
    asked = set(args.policies.split(","))
    unknown = asked - set(BENCH_POLICIES)
    if unknown:
        raise CommandError(f"unknown policy {', '.join(sorted(unknown))}; known: "
                           f"{', '.join(BENCH_POLICIES)}")
    try:
        check_mode(args.full, asked)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    if args.ray and args.full:
        raise CommandError("--ray runs fast games; the full pipeline keeps real time on this "
                           "machine, one game at a time")
    skills = _skills(args.skills)
    report = {"machine": machine(), "suites": {}}
    tables = []
    for suite in suites:
        started = time.monotonic()
        if suite == "game":
            figures, table = _game(args)
        elif suite == "person":
            figures, table = _person(args, skills)
        elif suite == "link":
            figures, table = _link(args.firmware)
        elif suite == "perception":
            figures, table = _perception(args)
        elif suite == "safety":
            figures, table = _safety(args)
        elif suite == LOAD:
            figures, table = _load(args)
        elif suite == SURPRISES:
            figures, table = _surprises(args, kinds)
        else:
            figures, table = _sim(args)
        figures["wall_s"] = round(time.monotonic() - started, 1)
        report["suites"][suite] = figures
        tables.append(table)
    if args.json:
        Path(args.json).write_text(json.dumps(report if args.suite == "all" else
                                              {"machine": report["machine"], **report["suites"][suites[0]]},
                                              indent=2) + "\n")
    print("\n\n".join(tables))
    lost = sum(len(figures.get("lost", ())) for figures in report["suites"].values())
    if lost:
        print(f"jenga-robot bench: {lost} games lost, left out of the figures (see the table); "
              "run again to play them" + (", --games keeps the finished ones" if not args.games
                                          else ""), file=sys.stderr)
        return 1
    return 0


def _game(args: argparse.Namespace) -> tuple[dict, str]:
    from controller.bench.game import measure
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    policies = tuple(p for p in BENCH_POLICIES if p in args.policies.split(","))
    with _engine(args, len(seeds) * len(policies)) as engine:
        figures = measure(args.cell, seeds, args.max_turns, full=args.full, policies=policies,
                          engine=engine, games_path=args.games, progress=Progress("bench game"))
    return figures, games_table(f"game ({figures['mode']} mode", seeds, figures, GAME_COLUMNS,
                                 TABLE_NAMES)


def _person(args: argparse.Namespace, skills: tuple[float, ...]) -> tuple[dict, str]:
    from controller.bench.person import measure
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    with _engine(args, len(seeds) * len(skills)) as engine:
        figures = measure(args.cell, seeds, skills, args.max_turns, engine=engine,
                          games_path=args.games, progress=Progress("bench person"))
    return figures, games_table("person (the simulated person alone", seeds, figures,
                                 PERSON_COLUMNS, {})


@contextlib.contextmanager
def _engine(args: argparse.Namespace, games: int):
    """Where the suite's games run (controller/bench/engines.py), closed after."""
    from controller.bench.engines import EngineError, engine_for
    try:
        engine = engine_for(args.jobs, args.ray, games)
    except EngineError as exc:
        raise CommandError(str(exc)) from None
    try:
        yield engine
    except EngineError as exc:
        raise CommandError(str(exc)) from None
    finally:
        engine.close()


def _skills(text: str) -> tuple[float, ...]:
    try:
        skills = tuple(float(s) for s in text.split(","))
    except ValueError:
        raise CommandError(f"--skills takes numbers 0..1 separated by commas, got {text!r}") from None
    from hardware.sim.skill import Skill
    try:
        for skill in skills:
            Skill(skill)
    except ValueError as exc:
        raise CommandError(f"--skills {text}: {exc}") from None
    return tuple(dict.fromkeys(skills))            # each once, in the order given


def _link(firmware: str) -> tuple[dict, str]:
    from controller.bench.link import device_for, measure
    from hardware.firmware.build import BuildError
    from hardware.firmware.c_engine import FirmwareNotBuilt, engine_for
    from hardware.firmware.qemu import QemuError
    try:
        device = device_for(firmware, engine_for("python" if firmware == "qemu" else firmware))
        figures = dataclasses.asdict(measure(progress=Progress(f"bench link ({firmware})"),
                                             device=device))
    except (FirmwareNotBuilt, BuildError, QemuError) as exc:   # a tool missing, QEMU not up
        raise CommandError(str(exc)) from None
    figures["firmware"] = firmware
    clock = "device time" if figures["clock"] == "device" else "wall time"
    rows = [("rtt_ms_median", figures["rtt_ms_median"], "command to ACK over a pty"),
            ("rtt_ms_p99", figures["rtt_ms_p99"], ""),
            ("telemetry_hz", figures["telemetry_hz"], "sustained, per second of device time"),
            ("guard_stop_ms", figures["guard_stop_ms"],
             f"threshold crossing to zero commanded velocity (worst {figures['guard_stop_ms_max']})"),
            ("frames_corrupt_detected", figures["frames_corrupt_detected"],
             f"of {figures['frames_corrupt_injected']} injected")]
    for kind, stats in figures["fault_detect_ms"].items():
        rows.append((f"fault_detect_ms.{kind}", stats["median"],
                     f"worst {stats['max']} over {stats['runs']} runs, {clock}"))
    board = figures["board"]
    if board:
        rows += [("worst_tick_instructions", board["worst_tick_instructions"],
                  f"one control tick, counted by QEMU; {board['late_ticks']} ticks late"),
                 ("flash_bytes", board["flash_bytes"], "of 131072 (arm-none-eabi-size)"),
                 ("ram_bytes", board["ram_bytes"], "of 32768, stack included")]
    return figures, _table(f"link, firmware {firmware}", rows)


def _sim(args: argparse.Namespace) -> tuple[dict, str]:
    from hardware.sim.realism import measure
    cell = load(args.cell)
    seeds = list(range(args.first_seed, args.first_seed + args.seeds))
    per_seed = {}
    progress = Progress("bench sim")
    for i, seed in enumerate(seeds):
        per_seed[str(seed)] = measure(cell, seed).to_json()
        progress(i + 1, len(seeds))
    keys = ("drift_mm_max", "drift_mm_max_awake", "loose_fraction", "tight_fraction",
            "forced_push_disturbs", "rtf", "rtf_sleeping")
    rows = [(key, " / ".join(str(per_seed[str(s)][key]) for s in seeds), f"seeds {seeds[0]}-{seeds[-1]}")
            for key in keys]
    return {"seeds": per_seed}, _table("sim", rows)


def _perception(args: argparse.Namespace) -> tuple[dict, str]:
    import hardware.sim  # noqa: F401  (offscreen rendering set up before OpenCV and MuJoCo load)
    from controller.bench.perception import TARGETS, measure
    cell = load(args.cell)
    result = measure(cell, args.scenes, args.first_seed, progress=Progress("bench perception"))
    figures = dataclasses.asdict(result)
    figures["targets"] = TARGETS
    figures["meets_targets"] = result.meets_targets()
    keys = ("occupancy_accuracy", "scenes_all_slots_right", "position_err_mm_median",
            "yaw_err_deg_median", "protrusion_err_mm_median", "protrusion_err_mm_p95",
            "fall_detected_rate", "false_fall_rate", "latency_ms_median")
    rows = [(key, figures[key], TARGETS.get(key, "")) for key in keys]
    rows.append(("scenes", f"{result.scenes} ({result.fallen_scenes} knocked over)",
                 f"{result.blocks_measured} blocks measured"))
    return figures, _table("perception", rows)


def _safety(args: argparse.Namespace) -> tuple[dict, str]:
    import hardware.sim  # noqa: F401  (offscreen rendering set up before OpenCV and MuJoCo load)
    from controller.bench.safety import measure
    result = measure(load(args.cell), args.reaches, args.first_seed, progress=Progress("bench safety"))
    figures = dataclasses.asdict(result)
    rows = [("pause_ms_median", result.pause_ms_median,
             "hand in the workspace to the arm held (device); negative: held before it got there"),
            ("pause_ms_p95", result.pause_ms_p95, f"worst {result.pause_ms_max}"),
            ("curtain_ms_median", result.curtain_ms_median,
             "hand in the workspace to the arm held by the light curtain"),
            ("camera_pause_ms_median", result.camera_pause_ms_median,
             "hand in the workspace to the arm paused by the cameras' monitor"),
            ("seen_to_pause_ms_median", result.seen_to_pause_ms_median,
             "frame that showed the hand to the arm paused"),
            ("resumed", f"{result.resumed} of {result.runs}", "full pace again once the hand had gone"),
            ("missed", result.missed, "reaches that never paused the arm"),
            ("false_pauses", result.false_pauses, "while the arm alone moved in and out of the workspace")]
    return figures, _table("safety", rows)


def _load(args: argparse.Namespace) -> tuple[dict, str]:
    from controller.bench.load import measure
    load(args.cell)                     # a bad cell file fails here, not in four runs
    result = measure(args.cell, args.first_seed, args.turns, args.burners,
                     progress=Progress("bench load"))
    rows = []
    for condition, runs in result.runs.items():
        for kind, run in runs.items():
            rows.append((f"{condition}.{kind}.finished", run.finished,
                         f"exit {run.exit_code}: {run.last_line[:90]}"))
            rows.append((f"{condition}.{kind}.pace", round(run.pace, 3),
                         f"{run.world_s:.0f} s of world time in {run.wall_s:.0f} s"))
    rows.append(("same_game", result.same_game, "the solo game took the same blocks under load"))
    rows.append(("loadavg_loaded", round(result.loadavg_loaded, 2),
                 f"{result.burners} busy processes on {result.cpus} cores"))
    return result.to_json(), _table("load", rows)


def _kinds(text: str | None) -> list[str]:
    from hardware.sim.surprises import Kind
    if text is None:
        return list(Kind)
    asked = [k.strip() for k in text.split(",") if k.strip()]
    unknown = [k for k in asked if k not in set(Kind)]
    if unknown or not asked:
        raise CommandError(f"unknown surprise {', '.join(unknown) or '(none)'}; known: "
                           f"{', '.join(Kind)}")
    return asked


def _surprises(args: argparse.Namespace, kinds: list[str]) -> tuple[dict, str]:
    from controller.bench.surprises import FIRST_SEED, OUTCOMES, measure
    from controller.cell_http import CellHttpError
    load(args.cell)
    try:
        result = measure(args.cell, kinds, args.trials, FIRST_SEED + args.first_seed - 1,
                         progress=Progress("bench surprises"), trials_path=args.games)
    except CellHttpError as exc:
        kept = (f"; the trials that finished are kept in {args.games}" if args.games else
                "; --games FILE would keep the trials that finish")
        raise CommandError(f"the simulated cell did not take the bench's surprise: {exc}{kept}") \
            from None
    columns = ["surprise", "trials", "met", *OUTCOMES]
    lines = ["### surprises", "", "| " + " | ".join(columns) + " |",
             "|" + " --- |" * len(columns)]
    lines += ["| " + " | ".join(str(row[c]) for c in columns) + " |" for row in result.table()]
    lines += ["", "met: the surprise happened in the turn; the outcomes count those turns "
              "(handled: the turn went on and ended legal, the tower standing)"]
    kept = result.trials_file
    if kept:
        lines += [f"{kept['trials_taken']} trials taken from {kept['path']}"
                  + (f"; {kept['lines_unused']} of its lines were run by other code or on another "
                     f"cell, not used" if kept["lines_unused"] else "")]
    return result.to_json(), "\n".join(lines)


def _table(suite: str, rows) -> str:
    lines = [f"### {suite}", "", "| figure | value | note |", "| --- | --- | --- |"]
    lines += [f"| {name} | {value} | {note} |" for name, value, note in rows]
    return "\n".join(lines)
