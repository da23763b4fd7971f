"""One way to run many independent pieces of work (episodes, rollouts): in this process,
in local worker processes, or on a Ray cluster, with identical results.

Replay, compare, bench and training rollouts all hand their work to a `Runner`;
the work is a picklable top-level function and a list of arguments, and the
results come back in the order of the arguments whichever executor ran them, so
a run with 1 worker, 8 workers or Ray gives the same rows in the same order.

    with Runner(workers=2) as runner:                       # local processes
        results = list(runner.map(simulate_one, specs, desc="episodes"))
    with Runner(executor="ray", address="auto") as runner:  # an existing Ray cluster
        ...

Ray is an optional extra (``pip install 'cloudsim[ray]'``) imported only when
asked for, so the core never needs it.

The work may run a user's code (a broker), which may end its process: ``sys.exit`` in it is an error
like any other (`WorkExited`), and a worker process that dies (``os._exit``, a crash, a kill) ends the map
at once with `WorkerDied`, naming the work it was running, instead of waiting for it for ever. The local
pool is `concurrent.futures.ProcessPoolExecutor`, which notices a dead worker (``BrokenProcessPool``);
Ctrl-C, SIGTERM or an error stops every worker within a second or two.
"""

from __future__ import annotations

import multiprocessing
import os
import pickle
import signal
import socket
import sys
import time
from concurrent.futures import Future, ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any, Callable, Iterator, Sequence

from tqdm.auto import tqdm
from cloudsim.engine.checks import is_whole

__all__ = ["EXECUTORS", "Runner", "RunnerError", "WorkExited", "WorkerDied", "default_workers"]

EXECUTORS = ("local", "ray")


class RunnerError(RuntimeError):
    """The executor could not be started (Ray missing or its cluster unreachable)."""


class WorkExited(RuntimeError):
    """A piece of work raised ``SystemExit`` (``sys.exit`` in a user's code): an error, never the run's end."""


class WorkerDied(RuntimeError):
    """A worker process ended without an answer (``os._exit``, a crash, a kill) while it ran a piece of work."""


STOP_GRACE_S = 1.0
"""How long a stopped worker has to end on SIGTERM before it is killed (SIGKILL)."""


def default_workers() -> int:
    """Worker processes used when none are asked for: every core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


_worker_slots = None  # in a worker: the pool's shared table of (pid, running item + 1), one row a worker
_worker_row = 0


def _start_worker(slots, rows) -> None:
    """A local worker's start: take a row of the pool's table, and leave Ctrl-C to the parent.

    Ctrl-C reaches every process of the terminal's group: the parent handles it once and stops the
    pool; workers that also raised KeyboardInterrupt would print tracebacks. SIGTERM ends a worker at once
    (the parent's handler is not theirs), after it clears its row: the pool's other workers are stopped so
    when one dies, and the row left holding an item is then the dead worker's.
    """
    global _worker_slots, _worker_row
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, _stopped)
    if hasattr(signal, "SIGALRM"):
        signal.signal(signal.SIGALRM, _stopped)
    _end_with_parent()
    with rows.get_lock():
        _worker_row = rows.value % (len(slots) // 2)
        rows.value += 1
    _worker_slots = slots
    slots[2 * _worker_row] = os.getpid()


_ending = 0  # in a worker: the signal that asked it to end, while it finishes writing an answer


class _Recorded:
    """The default multiprocessing context, recording each process it makes into ``spawned``: the pool's own
    list of its workers is private to it."""

    def __init__(self, spawned: list) -> None:
        self._context = multiprocessing.get_context()
        self._spawned = spawned

    def __getattr__(self, name: str) -> Any:
        return getattr(self._context, name)

    def Process(self, *args: Any, **kwargs: Any) -> Any:  # noqa: N802 (multiprocessing's name)
        process = self._context.Process(*args, **kwargs)
        self._spawned.append(process)
        return process


def _stopped(signum, frame) -> None:
    """SIGTERM in a worker: clear its row (it did not die of its work), then end; but never halfway through
    writing an answer to the pool. A worker ended there leaves part of a message in the pool's pipe, and the
    pool's thread that reads it waits for the rest forever, so that its process cannot end. The worker then
    finishes the answer and looks again a few milliseconds later (SIGALRM, handled here too)."""
    global _ending
    if signum == signal.SIGTERM:
        _ending = signum
    if not _ending:  # an alarm this module did not set
        return
    if _writing_answer(frame) and hasattr(signal, "setitimer"):
        signal.setitimer(signal.ITIMER_REAL, 0.005)
        return
    if _worker_slots is not None:  # (None: stopped while it starts, before it took a row)
        _worker_slots[2 * _worker_row + 1] = 0
    os._exit(128 + _ending)


def _writing_answer(frame) -> bool:
    """Whether a frame runs inside a multiprocessing queue's ``put``, which writes the answer to the pool."""
    while frame is not None:
        if frame.f_code.co_name == "put" and frame.f_globals.get("__name__") == "multiprocessing.queues":
            return True
        frame = frame.f_back
    return False


def _end_with_parent() -> None:
    """On Linux, have the kernel end this worker when its parent ends, however it ends (SIGKILL included):
    a worker never runs on alone. Elsewhere the worker ends when it next asks its parent for work."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        PR_SET_PDEATHSIG = 1
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
    except (OSError, AttributeError):  # no prctl here: as elsewhere
        return
    if os.getppid() == 1:  # the parent ended before the request was made
        os._exit(1)


def _call(function: Callable[[Any], Any], item: Any) -> Any:
    """``function(item)``, with ``SystemExit`` (and any other exit that is no Exception, Ctrl-C aside)
    turned into `WorkExited`: in a worker it would otherwise travel back and end the parent as a success."""
    try:
        return function(item)
    except (KeyboardInterrupt, Exception):
        raise
    except BaseException as error:
        raise WorkExited(f"it exited ({type(error).__name__}{_exit_code(error)}) instead of returning or "
                         "raising an error") from error


def _exit_code(error: BaseException) -> str:
    return f": code {error.code!r}" if isinstance(error, SystemExit) else ""


def _call_in_worker(function: Callable[[Any], Any], serial: int, item: Any) -> Any:
    """`_call` in a local worker, with the item's serial number in the worker's row while it runs; an error
    that would not arrive whole in the parent (its class cannot be rebuilt there) is sent as its text."""
    _worker_slots[2 * _worker_row + 1] = serial + 1
    try:
        return _call(function, item)
    except Exception as error:
        try:
            pickle.loads(pickle.dumps(error))
        except Exception:
            raise RuntimeError(f"{type(error).__name__}: {error}") from None
        raise
    finally:
        _worker_slots[2 * _worker_row + 1] = 0


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a Ray address nobody answers at: ray.init would retry for minutes."""
    if address == "auto":
        return
    host, sep, port = address.removeprefix("ray://").rpartition(":")
    if not sep or not port.isdigit():
        raise RunnerError(f"--address {address}: write HOST:PORT (e.g. 10.0.0.5:6379), ray://HOST:10001 or auto")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as err:
        raise RunnerError(f"--address {address}: no Ray cluster answers there ({err.strerror or err}); start one "
                          "(ray start --head) or check the address, or use --executor local") from None


def _running_child(pid: int) -> bool:
    """Whether ``pid`` is a child of this process that has not ended (an ended, unreaped child has; a pid
    that another process took after ours was reaped is no child of ours)."""
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state, parent = stat.read().rpartition(")")[2].split()[:2]
    except FileNotFoundError:
        return False
    except OSError:  # no /proc (not Linux): ask the process itself
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True
    return state != "Z" and int(parent) == os.getpid()


class Runner:
    """Runs ``function(item)`` for every item and yields the results in item order.

    Args:
        executor: "local" (this machine: in-process with one worker, else a pool
            of worker processes) or "ray" (tasks on a Ray cluster).
        workers: the most processes at once (local) or CPUs asked of a new local
            Ray instance; default `default_workers()`. Never more than the items.
        address: Ray only: the address of an existing cluster ("auto", or
            "ray://host:10001"); None starts a private local Ray instance.
        progress: show one progress bar per `map` on stderr (None: only when
            stderr is a terminal).
        isolate: local only: run the work in worker processes even when one
            would do, never in this process: work that may end its process (a
            user's broker calling ``os._exit``) then ends a worker, which the
            pool notices (`WorkerDied`), instead of this process with no word.
    """

    def __init__(self, executor: str = "local", workers: int | None = None, address: str | None = None,
                 progress: bool | None = None, isolate: bool = False) -> None:
        if executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {EXECUTORS}, got {executor!r}")
        if workers is not None and not (is_whole(workers) and workers >= 1):
            raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
        if address is not None and executor != "ray":
            raise ValueError("address applies to the ray executor only")
        self.executor = executor
        self.workers = workers if workers is not None else default_workers()
        self.address = address
        self.progress = progress
        self.isolate = isolate
        self._pool: ProcessPoolExecutor | None = None
        self._pool_size = 0
        self._slots: Any = None
        self._spawned: list[Any] = []  # every worker process the pool started, as the parent saw it start
        self._serial = 0  # serial numbers of the items given to the local pool, across maps
        self._name: Callable[[Any], str] = str
        self._ray = None
        self._owns_ray = False

    # ------------------------------------------------------------------ use
    def map(self, function: Callable[[Any], Any], items: Sequence[Any], *, desc: str = "runs",
            unit: str = "run", name: Callable[[Any], str] | None = None) -> Iterator[Any]:
        """Yield ``function(item)`` for each item, in order, as soon as each is ready in turn.

        An exception raised by the function ends the map with that exception
        (its original type, from any executor); work not yet started is cancelled and work
        running is stopped. ``SystemExit`` raised by the function is `WorkExited`; a local
        worker that dies is `WorkerDied`; both name the item by ``name(item)`` (default: "``unit`` K of N").
        """
        items = list(items)
        self._name = name if name is not None else (
            lambda item: f"{unit} {next(k for k, x in enumerate(items) if x is item) + 1} of {len(items)}")
        # disable=None: tqdm shows the bar only when stderr is a terminal.
        disable = True if len(items) <= 1 else (None if self.progress is None else not self.progress)
        bar = tqdm(total=len(items), unit=unit, desc=desc, file=sys.stderr, leave=False, disable=disable)
        try:
            for result in self._results(function, items):
                bar.update()
                yield result
        finally:
            bar.close()

    def _results(self, function: Callable, items: list) -> Iterator[Any]:
        if self.executor == "ray":
            yield from self._ray_results(function, items)
        elif min(self.workers, len(items)) <= 1 and not (self.isolate and items):
            for item in items:
                yield self._named(function, item)
        else:
            yield from self._local_results(function, items)

    def _named(self, function: Callable, item: Any) -> Any:
        try:
            return _call(function, item)
        except WorkExited as error:
            raise WorkExited(f"{self._name(item)}: {error}") from error.__cause__

    def _local_results(self, function: Callable, items: list) -> Iterator[Any]:
        pool = self._local_pool(max(1, min(self.workers, len(items))))
        first = self._serial
        self._serial += len(items)
        pending: list[Future] = [pool.submit(_call_in_worker, function, first + k, item)
                                 for k, item in enumerate(items)]
        finished = False
        try:
            for k, future in enumerate(pending):
                try:
                    yield future.result()
                except BrokenProcessPool as broken:
                    if broken.__cause__ is not None:  # the pool broke reading an answer, no worker died
                        raise RuntimeError(f"the answer to {self._name(items[k])} could not be read back from its "
                                           f"worker: {str(broken.__cause__).strip().splitlines()[-1]}") from None
                    raise self._died(items, first) from None
                except WorkExited as error:
                    raise WorkExited(f"{self._name(items[k])}: {error}") from None
            finished = True
        finally:
            if not finished:  # an error, Ctrl-C or an abandoned map: stop the work still running
                for future in pending:
                    future.cancel()
                self._stop_pool()

    def _died(self, items: list, first: int) -> WorkerDied:
        """The error for a pool one of whose workers died: the work the dead worker was running (the pool
        stops the others, which clear their rows as they end; all that still show work are named)."""
        slots = self._slots
        pids = {slots[2 * row] for row in range(len(slots) // 2)} - {0}
        deadline = time.monotonic() + 2 * STOP_GRACE_S
        while any(map(_running_child, pids)) and time.monotonic() < deadline:
            time.sleep(0.01)
        running = sorted(slots[2 * row + 1] - 1 - first for row in range(len(slots) // 2)
                         if first < slots[2 * row + 1] <= first + len(items))
        names = [self._name(items[k]) for k in running]
        what = (names[0] if len(names) == 1 else
                f"one of {' and '.join(names)} (each on its own worker)" if names else "a piece of work")
        return WorkerDied(f"a worker process died while running {what}: it ended without an answer (os._exit, a "
                          "crash, or a kill such as out of memory), and the run is stopped. Code that a run calls, "
                          "a broker's included, must return or raise, never end its process")

    def _local_pool(self, size: int) -> ProcessPoolExecutor:
        if self._pool is None or self._pool_size < size:
            self.close()
            self._slots = multiprocessing.Array("q", 2 * size, lock=False)  # per worker: pid, running serial + 1
            self._spawned = []
            rows = multiprocessing.Value("i", 0)
            self._pool = ProcessPoolExecutor(max_workers=size, mp_context=_Recorded(self._spawned),
                                             initializer=_start_worker, initargs=(self._slots, rows))
            self._pool_size = size
        return self._pool

    def _stop_pool(self) -> None:
        """End every worker now (SIGTERM, then SIGKILL after `STOP_GRACE_S`) and forget the pool."""
        if self._pool is None:
            return
        pool, slots = self._pool, self._slots
        self._pool, self._pool_size = None, 0
        pool.shutdown(wait=False, cancel_futures=True)
        # The rows name the workers that started; a worker forked but not yet in its row is one of those the
        # pool spawned. Left running, it would wait forever for the call queue's lock, held by a worker ended
        # here, and keep this process from ending.
        pids = ({slots[2 * row] for row in range(len(slots) // 2)} | {p.pid for p in self._spawned}) - {0, None}
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for pid in [pid for pid in pids if _running_child(pid)]:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:  # it ended meanwhile
                    pass
            deadline = time.monotonic() + STOP_GRACE_S
            while sig == signal.SIGTERM and time.monotonic() < deadline and any(map(_running_child, pids)):
                time.sleep(0.02)
        pool.shutdown(wait=True)  # reaps the ended workers

    def _ray_results(self, function: Callable, items: list) -> Iterator[Any]:
        ray = self._start_ray()
        remote = ray.remote(num_cpus=1)(_call)
        refs = [remote.remote(function, item) for item in items]
        received = 0
        try:
            for ref in refs:
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as err:
                    # Ray wraps the function's exception; hand the caller the original one.
                    cause = getattr(err, "cause", None)
                    if isinstance(cause, WorkExited):
                        raise WorkExited(f"{self._name(items[received])}: {cause}") from None
                    raise (cause if isinstance(cause, BaseException) else err) from None
                received += 1
                yield result
        finally:
            # Cancel only the work still pending: Ray 2.60 aborts the whole process ("Tried to
            # complete task that was not pending") when a task is cancelled as it completes.
            rest = refs[received:]
            if rest:
                _, pending = ray.wait(rest, num_returns=len(rest), timeout=0)
                for ref in pending:
                    ray.cancel(ref)

    def _start_ray(self):
        if self._ray is not None:
            return self._ray
        try:
            import ray  # optional extra: imported only when the ray executor is asked for
        except ImportError:
            raise RunnerError("the ray executor needs Ray: pip install 'cloudsim[ray]' "
                              "(or use the default local executor)") from None
        if not ray.is_initialized():
            options: dict[str, Any] = {"ignore_reinit_error": True, "log_to_driver": False,
                                       "include_dashboard": False, "configure_logging": False}
            if self.address is None:
                options["num_cpus"] = self.workers
            else:
                _check_reachable(self.address)
                options["address"] = self.address
            try:
                ray.init(**options)
            except (ConnectionError, RuntimeError, ValueError) as err:
                where = self.address or "a new local instance"
                raise RunnerError(f"could not start Ray on {where}: {err}; check --address "
                                  "(e.g. auto, or ray://HOST:10001) or use --executor local") from None
            self._owns_ray = True
        self._ray = ray
        return ray

    # ------------------------------------------------------------------ life
    def close(self) -> None:
        """Stop the worker processes (and a Ray instance this runner started)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
            self._pool_size = 0
        if self._ray is not None:
            if self._owns_ray:
                self._ray.shutdown()
            self._ray = None

    def __enter__(self) -> "Runner":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        where = f", address={self.address!r}" if self.address else ""
        isolated = ", isolate=True" if self.isolate else ""
        return f"Runner(executor={self.executor!r}, workers={self.workers}{where}{isolated})"

