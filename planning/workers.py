"""Work shared out among processes, each holding something built once (a planner, a simulated
world), for commands that are many independent jobs (`cell check`'s layers, `sim check`'s probes).

With one job the work runs in this process. Answers come back in the order asked, whatever order
the processes finish in. A failure to build in a worker is raised here as itself, not as a broken
pool; Ctrl-C and SIGTERM reach this process only, which stops the workers and unwinds.
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable

from planning.processes import leave_signals_to_parent

_HELD: dict[str, Any] = {}


class WorkerDied(RuntimeError):
    """A worker process ended in the middle of a job (killed, out of memory, a crash)."""


class Workers:
    """`build(*build_args)` once per process; `map(job, args)` runs `job(built, *a)` for each."""

    def __init__(self, build: Callable, build_args: tuple, jobs: int):
        self.build, self.build_args, self.jobs = build, build_args, jobs
        self._pool: ProcessPoolExecutor | None = None
        self._local = None

    def __enter__(self) -> Workers:
        if self.jobs > 1:
            self._pool = ProcessPoolExecutor(self.jobs, multiprocessing.get_context("spawn"),
                                             initializer=_start,
                                             initargs=(self.build, self.build_args))
        else:
            self._local = self.build(*self.build_args)
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if self._pool is None:
            if hasattr(self._local, "close"):
                self._local.close()
            return
        if exc_type is None:
            self._pool.shutdown()
            return
        # A job still running is of no use now, and the interpreter would wait for it on exit:
        # the workers are ended (the executor has no public way to do that).
        processes = list((getattr(self._pool, "_processes", None) or {}).values())
        self._pool.shutdown(wait=False, cancel_futures=True)
        for process in processes:
            process.terminate()

    def map(self, job: Callable, args: list[tuple],
            on_done: Callable[[int], None] | None = None) -> list:
        """job(built, *a) for each `a` of `args`, in that order; `on_done(count)` as each ends.
        A job's error is raised as itself; a worker that died, as WorkerDied."""
        if self._pool is None:
            results = []
            for a in args:
                results.append(job(self._local, *a))
                if on_done:
                    on_done(len(results))
            return results
        futures = [self._pool.submit(_run, job, a) for a in args]
        pending = set(futures)
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                if future.exception() is not None:
                    if isinstance(future.exception(), BrokenProcessPool):
                        raise WorkerDied(f"a worker process ended in the middle of a job "
                                         f"({future.exception()}); run again, or with one job")
                    raise future.exception()
            if on_done:
                on_done(len(futures) - len(pending))
        return [f.result() for f in futures]


def _start(build: Callable, build_args: tuple) -> None:
    leave_signals_to_parent()
    try:
        _HELD["built"] = build(*build_args)
    except Exception as exc:            # raised in the parent by the first job
        _HELD["error"] = exc


def _run(job: Callable, args: tuple):
    if "error" in _HELD:
        raise _HELD["error"]
    return job(_HELD["built"], *args)
