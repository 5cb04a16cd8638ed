"""Where the benchmark's games run: in this process (`InProcess`, one at a time), in local
processes (`LocalProcesses`, `jobs` at a time) or on a Ray cluster (`RayCluster`, `--ray`).

Every game is an independent task: `play(job)` for a module's function `play`, its result a
`GameRecord`. Whichever engine runs them, results come back as they finish; a game whose worker
process crashed or was lost is played once more; a game that raises, or whose worker is lost a
second time, comes back as `Lost` and the others go on. Every game runs with one thread for
numpy's linear algebra (threadpoolctl): a game is one core's work, and the same thread count
everywhere keeps a game's numbers the same wherever it runs. Every game also reports the
fingerprint of the code that played it: a worker that runs other code (another commit on a node,
or a worker process started after the source changed on disk) stops the run.
"""

from __future__ import annotations

import contextlib
import hashlib
import multiprocessing
import multiprocessing.connection
import os
import platform
import signal
import socket
import sys
import traceback
from dataclasses import dataclass
from functools import lru_cache
from importlib import metadata
from importlib.util import find_spec
from pathlib import Path
from typing import Callable, Iterator, Protocol

from planning.processes import leave_signals_to_parent

# The packages a game's result depends on (with their data files: the cell, the models), and the
# libraries whose version changes the numbers.
CODE_PACKAGES = ("controller", "perception", "planning", "firmware_bridge", "hardware")
NUMERIC_LIBRARIES = ("mujoco", "numpy", "scipy", "roboticstoolbox-python", "spatialmath-python")
CODE_SUFFIXES = (".py", ".toml", ".xml", ".json")
# Linear algebra on one thread in a worker process from its start, for the libraries a game loads
# after threadpoolctl's limit was set (SciPy brings an OpenBLAS of its own).
ONE_THREAD = {"OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
TOKEN_HINT = "~/.ray/auth_token copied to this machine, or RAY_AUTH_TOKEN set"
ATTEMPTS = 2                     # a game whose worker dies is played once more


class EngineError(RuntimeError):
    """The engine cannot run games (Ray missing, no cluster at the address, other code or no
    code on a worker); the message says what to do."""


@dataclass(frozen=True)
class Lost:
    """A game that did not come back: `job` as given, `reason` in words."""
    job: tuple
    reason: str


class Engine(Protocol):
    description: str

    def run(self, play: Callable, work: list[tuple]) -> Iterator:
        """`play(job)` for each job of `work`; yields each result (or `Lost`) as it finishes."""

    def close(self) -> None: ...


@lru_cache(maxsize=1)
def code_fingerprint() -> str:
    """A digest of the source and data of the product's packages as this process sees them, with
    Python's and the numeric libraries' versions: two processes with the same fingerprint play
    the same game from the same seed (on the same kind of processor)."""
    digest = hashlib.sha256(f"python {platform.python_version()}\0".encode())
    for library in NUMERIC_LIBRARIES:
        try:
            digest.update(f"{library} {metadata.version(library)}\0".encode())
        except metadata.PackageNotFoundError:
            digest.update(f"{library} none\0".encode())
    for package in CODE_PACKAGES:
        spec = find_spec(package)
        if spec is not None and spec.submodule_search_locations:
            tree_digest(Path(list(spec.submodule_search_locations)[0]), package, digest)
    return digest.hexdigest()[:16]


def tree_digest(root: Path, name: str, digest=None):
    """`digest` updated with a package's source and data under `root`: regular files of
    CODE_SUFFIXES, by their path below `root`. Left out: caches, hidden files (an editor's lock
    link), and calibrations a lab writes next to a cell file (`*.calib/`), which no game reads."""
    digest = digest or hashlib.sha256()
    for path in sorted(root.rglob("*")):
        parts = path.relative_to(root).parts
        if (path.suffix not in CODE_SUFFIXES or not path.is_file() or path.is_symlink()
                or any(p == "__pycache__" or p.startswith(".") or p.endswith(".calib")
                       for p in parts)):
            continue
        digest.update(f"{name}/{'/'.join(parts)}\0".encode())
        digest.update(path.read_bytes())
    return digest


def attempt(play: Callable, job: tuple) -> tuple[str, str, object]:
    """What every engine runs for a game: (the code's fingerprint, "done", the game) or (the
    fingerprint, "failed", the game's error in words)."""
    import scipy.linalg  # noqa: F401  (its OpenBLAS loaded now, so that the limit reaches it)
    from threadpoolctl import threadpool_limits
    try:
        with threadpool_limits(limits=1):
            return code_fingerprint(), "done", play(job)
    except Exception as exc:            # the game's own error: it would happen again
        return code_fingerprint(), "failed", game_error(exc)


def outcome(job: tuple, answer: tuple[str, str, object], here: str):
    """A game's attempt as an engine yields it: the game, or Lost; other code stops the run."""
    fingerprint, kind, value = answer
    if fingerprint != here:
        raise EngineError(f"a worker ran other code (fingerprint {fingerprint}, here {here}): "
                          "keep the source as it is while a sweep runs, and install this commit "
                          "on every node of a cluster")
    return value if kind == "done" else Lost(job, value)


# --- here, one at a time ---------------------------------------------------------------------------

class InProcess:
    """Every game in this process, in turn (one job; the full pipeline, which keeps real time)."""

    description = "this process"

    def run(self, play: Callable, work: list[tuple]) -> Iterator:
        here = code_fingerprint()
        for job in work:
            yield outcome(job, attempt(play, job), here)

    def close(self) -> None:
        pass


# --- local processes -------------------------------------------------------------------------------

class LocalProcesses:
    """Each game in a process of its own, started for it (spawned: no MuJoCo state shared by a
    fork), `jobs` at a time. A process that ends without an answer (killed, out of memory, a
    crash in native code) is a lost worker: its game is played once more."""

    def __init__(self, jobs: int):
        self.jobs = jobs
        self.description = f"{jobs} local processes"

    def run(self, play: Callable, work: list[tuple]) -> Iterator:
        here = code_fingerprint()
        context = multiprocessing.get_context("spawn")
        waiting = list(enumerate(work))
        tries: dict[int, int] = {}
        running: dict = {}              # the answer's pipe -> (index, job, process)
        try:
            while waiting or running:
                while waiting and len(running) < self.jobs:
                    index, job = waiting.pop(0)
                    receive, send = context.Pipe(duplex=False)
                    process = context.Process(target=_child, args=(play, job, send), daemon=True)
                    # the child starts with Ctrl-C ignored and one thread of linear algebra; it
                    # is ours to end from the moment it runs
                    with _no_ctrl_c(), _environment(ONE_THREAD):
                        process.start()
                        running[receive] = (index, job, process)
                    send.close()        # the child's end: EOF here when the child is gone
                    tries[index] = tries.get(index, 0) + 1
                for receive in multiprocessing.connection.wait(list(running)):
                    index, job, process = running.pop(receive)
                    try:
                        answer = receive.recv()
                    except EOFError:
                        answer = None
                    receive.close()
                    process.join()
                    if answer is None:
                        if tries[index] < ATTEMPTS:
                            waiting.insert(0, (index, job))
                            continue
                        yield Lost(job, f"its worker process died {ATTEMPTS} times (exit code "
                                        f"{process.exitcode})")
                    else:
                        yield outcome(job, answer, here)
        finally:                        # Ctrl-C, an error, or the caller stopped reading
            for receive, (_, _, process) in running.items():
                process.terminate()
                process.join()
                receive.close()

    def close(self) -> None:
        pass


def _child(play: Callable, job: tuple, send) -> None:
    leave_signals_to_parent()
    send.send(attempt(play, job))
    send.close()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(0)             # nothing left to do: no exit handler or stray thread may hold it


def game_error(exc: BaseException) -> str:
    """A game's exception in one line, with where it was raised."""
    frame = traceback.extract_tb(exc.__traceback__)[-1] if exc.__traceback__ else None
    where = f" ({Path(frame.filename).name}:{frame.lineno})" if frame else ""
    return f"the game raised {type(exc).__name__}: {exc}{where}"


@contextlib.contextmanager
def _environment(values: dict[str, str]):
    """`values` in os.environ while a child is started (it inherits them), as they were after."""
    before = {key: os.environ.get(key) for key in values}
    os.environ.update(values)
    try:
        yield
    finally:
        for key, value in before.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


@contextlib.contextmanager
def _no_ctrl_c():
    """SIGINT ignored while a child is started: an ignored signal stays ignored in the new
    program, so Ctrl-C during the child's imports reaches only this process, which ends it.
    (A Ctrl-C in the few milliseconds of the start itself is lost: press it again.)"""
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


# --- a Ray cluster ---------------------------------------------------------------------------------

class RayCluster:
    """Games as Ray tasks, one CPU each. `address`: "local" starts a Ray instance on this machine
    (bound to 127.0.0.1, `cpus` CPUs) and stops it at close; "auto" joins the cluster started on
    this machine with `ray start`; anything else is a cluster's address (host:port or
    ray://host:port). Every worker must have this same code installed: each result carries the
    fingerprint of the code that played it, and other code stops the run."""

    def __init__(self, address: str, cpus: int | None = None):
        host = None
        if address not in ("local", "auto"):
            host, port = _host_port(address)
            _check_reachable(address, host, port)   # Ray itself would wait minutes for a wrong one
            if "RAY_AUTH_MODE" not in os.environ and (
                    "RAY_AUTH_TOKEN" in os.environ or (Path.home() / ".ray/auth_token").exists()):
                # a driver joining a cluster sends the token only when told to (read as Ray is
                # imported); it has one here
                os.environ["RAY_AUTH_MODE"] = "token"
        if address == "local" or _loopback(host):
            # Ray gives a node, and turns 127.0.0.1 into, the machine's network address unless
            # told there is no cluster; a local instance serves this machine only. Read when Ray
            # is imported, and by the processes it starts, so it stays set for this process.
            os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
            # Ray reports its use to its makers unless told not to; off unless the user says so
            os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
        try:
            import ray
        except ImportError:
            raise EngineError("--ray needs Ray, an optional extra: pip install "
                              "'jenga-robot[cluster]'") from None
        self._ray = ray
        options = dict(configure_logging=False, log_to_driver=False)
        try:
            if address == "local":          # a new instance, whatever cluster runs here
                ray.init(address="local", num_cpus=cpus, include_dashboard=False, **options)
            else:
                ray.init(address=address, **options)
        except ImportError as exc:          # ray:// needs Ray's client (grpcio)
            raise EngineError(f"--ray {address}: {exc}; pip install 'jenga-robot[cluster]'") \
                from None
        except (ConnectionError, RuntimeError, ValueError, ray.exceptions.RayError) as exc:
            if "token" in str(exc).lower():
                raise EngineError(f"the Ray cluster at {address!r} wants its token ({exc}): copy "
                                  f"the head's {TOKEN_HINT}") from None
            raise EngineError(f"no Ray cluster at {address!r} ({exc}); start one (`ray start "
                              "--head` on this machine, then --ray auto) or use --ray local; a "
                              f"cluster that wants a token needs the head's {TOKEN_HINT}") \
                from None
        self.address = ray.get_runtime_context().gcs_address
        self.cpus = int(ray.cluster_resources().get("CPU", 0))
        self.description = f"Ray at {self.address} ({self.cpus} CPUs)"
        if address == "local" and not self.address.startswith("127.0.0.1:"):
            self.close()        # Ray was imported before the setting above could take effect
            raise EngineError(f"the local Ray instance came up at {self.address}, not 127.0.0.1; "
                              "run the bench in a new process")
        if self.cpus < 1:
            self.close()
            raise EngineError(f"the Ray cluster at {self.address} has no CPU for a game yet; "
                              "add a node (`ray start --address ...`) and run again")
        # max_retries: Ray plays a task again when its worker or node is lost
        self._game = ray.remote(num_cpus=1, max_retries=ATTEMPTS - 1,
                                runtime_env={"env_vars": ONE_THREAD})(attempt)

    def run(self, play: Callable, work: list[tuple]) -> Iterator:
        ray = self._ray
        here, lost_worker = code_fingerprint(), _lost_worker_errors()
        pending = {self._game.remote(play, job): job for job in work}
        try:
            while pending:
                # the games finished by now, looked for at least once a second
                done, _ = ray.wait(list(pending), num_returns=len(pending), timeout=1.0)
                for ref in done:
                    job = pending.pop(ref)
                    try:
                        answer = ray.get(ref)
                    except lost_worker as exc:
                        yield Lost(job, f"its worker was lost {ATTEMPTS} times "
                                        f"({type(exc).__name__})")
                        continue
                    except ray.exceptions.RayError as exc:
                        # not the game's error (attempt() returns those): the task could not
                        # run, such as a node without the project installed
                        raise EngineError(f"a Ray worker could not play a game: "
                                          f"{_last_line(exc)}; install this commit, with "
                                          "'jenga-robot[cluster]', on every node") from None
                    yield outcome(job, answer, here)
        finally:
            for ref in pending:           # the run was stopped: its games are of no use now
                with contextlib.suppress(Exception):
                    ray.cancel(ref, force=True)

    def close(self) -> None:
        self._ray.shutdown()        # a local instance stops; a cluster keeps running


def _lost_worker_errors() -> tuple:
    from ray import exceptions
    return tuple(getattr(exceptions, name) for name in (
        "WorkerCrashedError", "NodeDiedError", "ObjectLostError", "OwnerDiedError",
        "LocalRayletDiedError", "OutOfMemoryError") if hasattr(exceptions, name))


def _last_line(exc: BaseException) -> str:
    lines = [line for line in str(exc).splitlines() if line.strip()]
    return lines[-1].strip() if lines else type(exc).__name__


def _host_port(address: str) -> tuple[str, int]:
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise EngineError(f"--ray {address}: give a cluster's address as host:port (or "
                          "ray://host:port), `auto` or `local`")
    return host.strip("[]"), int(port)


def _loopback(host: str | None) -> bool:
    return host is not None and (host in ("localhost", "::1") or host.startswith("127."))


def _check_reachable(address: str, host: str, port: int, timeout_s: float = 5.0) -> None:
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as exc:
        raise EngineError(f"no Ray cluster answers at {address} ({exc.strerror or exc}); check "
                          "the address `ray start --head` printed, or use --ray local") from None


def engine_for(jobs: int, ray_address: str | None, work: int) -> Engine:
    """The engine for `work` games: Ray if asked, local processes for more than one job and
    game, else this process."""
    if ray_address:
        return RayCluster(ray_address, cpus=jobs)
    if jobs > 1 and work > 1:
        return LocalProcesses(jobs)
    return InProcess()
