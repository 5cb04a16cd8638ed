"""Work shared out among processes, each holding something built once (a planner, a simulated
world), for commands that are many independent jobs (`cell check`'s layers, `sim check`'s probes).

With one job the work runs in this process. Answers come back in the order asked, whatever order
the processes finish in. A failure to build in a worker is raised here as itself, not as a broken
pool; Ctrl-C and SIGTERM reach this process only, which stops the workers and unwinds.
"""

from __future__ import annotations

import multiprocessing
import signal
from typing import Any, Callable

_HELD: dict[str, Any] = {}


class Workers:
    """`build(*build_args)` once per process; `map(job, args)` runs `job(built, *a)` for each."""

    def __init__(self, build: Callable, build_args: tuple, jobs: int):
        self.build, self.build_args, self.jobs = build, build_args, jobs
        self._pool = None
        self._local = None

    def __enter__(self) -> Workers:
        if self.jobs > 1:
            context = multiprocessing.get_context("spawn")
            self._pool = context.Pool(self.jobs, _start, (self.build, self.build_args))
        else:
            self._local = self.build(*self.build_args)
        return self

    def __exit__(self, exc_type, *exc) -> None:
        if self._pool is not None:
            if exc_type is None:
                self._pool.close()
            else:
                self._pool.terminate()      # a job still running is of no use now
            self._pool.join()
        elif hasattr(self._local, "close"):
            self._local.close()

    def map(self, job: Callable, args: list[tuple],
            on_done: Callable[[int], None] | None = None) -> list:
        """job(built, *a) for each `a` of `args`, in that order; `on_done(count)` as each ends."""
        if self._pool is None:
            results = []
            for a in args:
                results.append(job(self._local, *a))
                if on_done:
                    on_done(len(results))
            return results
        pending = [self._pool.apply_async(_run, (job, a)) for a in args]
        results: list = [None] * len(pending)
        waiting = set(range(len(pending)))
        while waiting:
            for i in sorted(waiting):
                if pending[i].ready():
                    results[i] = pending[i].get()     # raises the job's own error
                    waiting.discard(i)
                    if on_done:
                        on_done(len(args) - len(waiting))
            if waiting:
                pending[min(waiting)].wait(0.05)
        return results


def _start(build: Callable, build_args: tuple) -> None:
    # the parent handles Ctrl-C and SIGTERM and stops the pool; a worker just ends
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    try:
        _HELD["built"] = build(*build_args)
    except Exception as exc:            # raised in the parent by the first job
        _HELD["error"] = exc


def _run(job: Callable, args: tuple):
    if "error" in _HELD:
        raise _HELD["error"]
    return job(_HELD["built"], *args)
