"""`jenga-robot sim check|serve`: the simulated cell's realism figures, and the cell as hardware."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path

from controller.commands import calibrate_cmd
from controller.commands.cell_cmd import load, parse_layers
from controller.commands.common import EXIT_FAILED, CommandError
from controller.commands.progress import Progress
from controller.commands.viewing import add_viewer_options, close_recorder, open_recorder
from hardware.cells import DEFAULT_CELL


def register(commands: argparse._SubParsersAction) -> None:
    sim = commands.add_parser("sim", help="the simulated cell")
    sub = sim.add_subparsers(dest="sim_command", required=True, metavar="{check,serve,capture}")
    check = sub.add_parser("check", help="measure the simulator's realism figures")
    check.add_argument("--cell", default=str(DEFAULT_CELL), metavar="FILE")
    check.add_argument("--seed", type=int, default=1, help="tower seed (default %(default)s)")
    check.add_argument("--json", metavar="FILE", help="also write the figures as JSON")
    check.add_argument("--layers", default="1-17", metavar="A-B",
                       help="layers to probe (default %(default)s; fewer for a quick look)")
    check.add_argument("--drift-s", type=float, default=120.0,
                       help="simulated seconds of the drift test (default %(default)s)")
    check.add_argument("--rtf-s", type=float, default=5.0,
                       help="simulated seconds the real-time factor is measured over, awake and "
                            "asleep (default %(default)s)")
    check.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                       help="processes to measure in (default: one per core); the figures do not "
                            "depend on it")
    check.set_defaults(run=run_check)

    serve = sub.add_parser("serve", help="run the simulated cell as hardware: a serial pty for the "
                                         "arm, an MJPEG URL per camera")
    serve.add_argument("--cell", default=str(DEFAULT_CELL), metavar="FILE")
    serve.add_argument("--seed", type=int, default=1, help="tower seed (default %(default)s)")
    serve.add_argument("--no-cameras", action="store_true", help="serve the arm only")
    serve.add_argument("--firmware", choices=("python", "c"), default="python",
                       help="the arm's firmware: the reference engine, or the C firmware's "
                            "(hardware/firmware, built by `make firmware`), ticked against the "
                            "simulated arm (default %(default)s)")
    serve.add_argument("--person-skill", type=float, default=0.7, metavar="0..1",
                       help="the simulated person's skill, 0 (first game) to 1 (practised); "
                            "they play when POST /person/turn tells them to (default %(default)s)")
    serve.add_argument("--exit-with-stdin", action="store_true",
                       help="stop when standard input closes: the program that started the cell "
                            "has gone, killed or not")
    add_viewer_options(serve)
    serve.set_defaults(run=run_serve)
    calibrate_cmd.register_capture(sub)


def run_serve(args: argparse.Namespace) -> int:
    import os
    import signal
    import sys
    import threading

    from hardware.sim.server import SimServer
    from hardware.sim.world import SimBuildError

    cell = load(args.cell)
    if not 0.0 <= args.person_skill <= 1.0:
        raise CommandError(f"--person-skill must be within 0..1, got {args.person_skill}")
    from hardware.firmware.c_engine import FirmwareNotBuilt, engine_for
    try:
        engine = engine_for(args.firmware)
    except FirmwareNotBuilt as exc:
        raise CommandError(str(exc)) from None
    try:
        server = SimServer(cell, args.seed, cameras=not args.no_cameras,
                           person_skill=args.person_skill, engine=engine)
    except SimBuildError as exc:
        raise CommandError(str(exc)) from None
    done = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: done.set())
    if args.exit_with_stdin:
        def wait_for_eof():
            # os.read on the descriptor, not sys.stdin's buffered reader: a daemon thread
            # blocked in the reader holds its lock, and the interpreter's shutdown after SIGTERM
            # then died with "Fatal Python error: _enter_buffered_busy".
            while os.read(sys.stdin.fileno(), 4096):
                pass
            done.set()
        threading.Thread(target=wait_for_eof, name="stdin-watch", daemon=True).start()
    recorder = open_recorder(args)
    try:
        watch = None
        if recorder is not None:
            from controller.viewer.sim_watch import SimWatch
            watch = SimWatch(recorder, server)
        _serve(server, cell, args, done, watch)
    finally:
        close_recorder(recorder, args)
    print("stopped", flush=True)
    return 0


def _serve(server, cell, args: argparse.Namespace, done, watch) -> None:
    """Serve until `done` (SIGTERM, stdin closed) or Ctrl-C; say what goes wrong."""
    with server:
        print(f"serial: {server.serial_path}", flush=True)
        for name, url in server.camera_urls().items():
            print(f"camera {name}: {url}", flush=True)
        print(f"simulated cell {cell.name!r}, seed {args.seed}: serving until interrupted", flush=True)
        told = 0
        try:
            while not done.wait(0.25 if watch else 0.5):
                if watch is not None and watch.failed is None:
                    watch.sample_safely()
                errors = server.engine.stats.internal_errors
                for error in errors[told:]:
                    # the arm stopped on INTERNAL: say why where the cell's operator looks
                    print(f"firmware error (the arm stopped, fault INTERNAL): {error}", flush=True)
                told = len(errors)
                if server.failure is not None:
                    # the loop stopped: say so and go, rather than print that it serves
                    raise CommandError(f"the simulated cell stopped: {server.failure}; start it "
                                       f"again (and report this with its seed)")
        except KeyboardInterrupt:
            pass


def run_check(args: argparse.Namespace) -> int:
    from hardware.sim.realism import measure  # mujoco loads only for sim commands
    from hardware.sim.world import SimBuildError

    cell = load(args.cell)
    layers = parse_layers(args.layers)
    if layers.stop - 1 >= cell.blocks.layers:
        raise CommandError(f"--layers {args.layers}: probe layers 1 to {cell.blocks.layers - 1} "
                           f"(the top layer of a fresh tower is not a source)")
    if not args.drift_s > 0:
        raise CommandError("--drift-s must be positive")
    if not args.rtf_s > 0:
        raise CommandError("--rtf-s must be positive")
    if args.jobs < 1:
        raise CommandError("--jobs must be at least 1")
    progress = Progress("sim check")
    try:
        figures = measure(cell, args.seed, drift_s=args.drift_s, layers=layers, rtf_s=args.rtf_s,
                          jobs=args.jobs, progress=lambda what, done, total: progress(done, total))
    except SimBuildError as exc:
        raise CommandError(str(exc)) from None
    report = figures.to_json()
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    print(render(report))
    return 0 if all(report["meets_targets"].values()) else EXIT_FAILED


def render(report: dict) -> str:
    ok = report["meets_targets"]
    mark = {True: "ok", False: "MISSED"}
    lines = [f"sim check, seed {report['seed']}",
             f"  drift_mm_max          {report['drift_mm_max']:.4f}   target <= 0.2   {mark[ok['drift_mm_max']]}"
             f"   (over {report['drift_s']:g} s; kept awake: {report['drift_mm_max_awake']:.4f})",
             f"  loose_fraction        {report['loose_fraction']:.3f}    target 0.2-0.7  "
             f"{mark[ok['loose_fraction']]}   (peak < 0.3 N on a 5 mm push at 2 mm/s)",
             f"  tight_fraction        {report['tight_fraction']:.3f}             (peak > 1 N)",
             f"  forced_push_disturbs  {str(report['forced_push_disturbs']).lower():5s}    target true     "
             f"{mark[ok['forced_push_disturbs']]}   (layer 2 slot {report['forced_push_block'][1]} pushed "
             f"20 mm: another block moved {report['forced_push_others_mm']:.1f} mm"
             f"{', tower toppled' if report['forced_push_toppled'] else ''})",
             f"  rtf                   {report['rtf']:.2f}                     "
             f"(tower awake, arm moving; with sleeping: {report['rtf_sleeping']:.1f}; "
             f"{report['rtf_note']})",
             "  probe_peak_n by layer (slot 0, 1, 2):"]
    for layer, row in enumerate(report["probe_peak_n"], start=report["first_layer"]):
        lines.append(f"    layer {layer:2d}  " + "  ".join(f"{f:5.2f}" for f in row))
    return "\n".join(lines)
