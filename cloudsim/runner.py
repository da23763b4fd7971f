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
"""

from __future__ import annotations

import multiprocessing
import multiprocessing.pool
import os
import signal
import socket
import sys
from typing import Any, Callable, Iterator, Sequence

from tqdm.auto import tqdm

__all__ = ["EXECUTORS", "Runner", "RunnerError", "default_workers"]

EXECUTORS = ("local", "ray")


class RunnerError(RuntimeError):
    """The executor could not be started (Ray missing or its cluster unreachable)."""


def default_workers() -> int:
    """Worker processes used when none are asked for: every core this process may use."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _ignore_interrupts() -> None:
    # Ctrl-C reaches every process of the terminal's group: the parent handles it once
    # and stops the pool; workers that also raised KeyboardInterrupt would print tracebacks.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's handler is not theirs: it stops them


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
    """

    def __init__(self, executor: str = "local", workers: int | None = None, address: str | None = None,
                 progress: bool | None = None) -> None:
        if executor not in EXECUTORS:
            raise ValueError(f"executor must be one of {EXECUTORS}, got {executor!r}")
        if workers is not None and (isinstance(workers, bool) or not isinstance(workers, int) or workers < 1):
            raise ValueError(f"workers must be a whole number >= 1, got {workers!r}")
        if address is not None and executor != "ray":
            raise ValueError("address applies to the ray executor only")
        self.executor = executor
        self.workers = workers if workers is not None else default_workers()
        self.address = address
        self.progress = progress
        self._pool: multiprocessing.pool.Pool | None = None
        self._pool_size = 0
        self._ray = None
        self._owns_ray = False

    # ------------------------------------------------------------------ use
    def map(self, function: Callable[[Any], Any], items: Sequence[Any], *, desc: str = "runs",
            unit: str = "run") -> Iterator[Any]:
        """Yield ``function(item)`` for each item, in order, as soon as each is ready in turn.

        An exception raised by the function ends the map with that exception
        (its original type, from any executor); work not yet started is cancelled.
        """
        items = list(items)
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
        elif min(self.workers, len(items)) <= 1:
            yield from map(function, items)
        else:
            pool = self._local_pool(min(self.workers, len(items)))
            pending = [pool.apply_async(function, (item,)) for item in items]
            finished = False
            try:
                for result in pending:
                    yield result.get()
                finished = True
            finally:
                if not finished:  # an error, Ctrl-C or an abandoned map: stop the work still running
                    self._stop_pool()

    def _local_pool(self, size: int) -> multiprocessing.pool.Pool:
        if self._pool is None or self._pool_size < size:
            self.close()
            self._pool = multiprocessing.Pool(processes=size, initializer=_ignore_interrupts)
            self._pool_size = size
        return self._pool

    def _stop_pool(self) -> None:
        if self._pool is not None:
            self._pool.terminate()
            self._pool.join()
            self._pool = None
            self._pool_size = 0

    def _ray_results(self, function: Callable, items: list) -> Iterator[Any]:
        ray = self._start_ray()
        remote = ray.remote(num_cpus=1)(function)
        refs = [remote.remote(item) for item in items]
        received = 0
        try:
            for ref in refs:
                try:
                    result = ray.get(ref)
                except ray.exceptions.RayTaskError as err:
                    # Ray wraps the function's exception; hand the caller the original one.
                    cause = getattr(err, "cause", None)
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
            self._pool.close()
            self._pool.join()
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
        return f"Runner(executor={self.executor!r}, workers={self.workers}{where})"

