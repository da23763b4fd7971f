"""`cloudsim check-broker`: a broker run on small, hostile workloads, each broken rule of the protocol named.

What Gymnasium's ``check_env`` is for an environment: before a user's broker meets a trace, it meets
the cases that break brokers, smallest first: one machine, a tick, a DAG, a machine that fails with
work on it, a cluster too small for the queue, a task that fits nowhere until a machine comes up, two
thousand machines, and a GPU cluster with model constraints. Each case runs twice with the same seed.

The rules (`RULES`), each reported once, with the smallest case that breaks it:

* **answers**: ``decide`` returns a `cloudsim.Decision`, a ``(machine, task[, count])`` tuple, a plan
  (a list, a `cloudsim.Plan`, a `cloudsim.ArrayPlan`) or None, about the view it was given, possible now;
* **raises**: ``decide`` raises nothing (writing into a view's read-only arrays raises);
* **answers in time**: one call answers within ``--timeout`` seconds;
* **finishes**: the run ends with every job done (a broker that keeps answering None while work waits
  and nothing runs is stalled);
* **reproducible**: two runs with the same seed make the same decisions;
* **accepts a workload**: the broker runs on at least one of the workloads. A broker may refuse a
  cluster it cannot schedule (its ``check_cluster`` raises ValueError, as the learned brokers do on GPU
  clusters): that case is reported as refused, not failed; but a broker that refuses every one was
  checked on nothing.

Anything else the broker's code raises, in ``check_cluster``, ``decide`` or when it is made, and any exit
(``sys.exit``), breaks **raises** (`cloudsim.engine.foreign`).
"""

from __future__ import annotations

import functools
import math
import signal
from dataclasses import dataclass, field
from typing import Callable

from agents.plugins import BrokerReferenceError
from cloudsim import (ClusterSpec, InvalidDecisionError, JobSpec, MachineEvent, Simulation, SimulationStalledError,
                      TaskSpec)
from cloudsim.engine.carbon import GridSignal
from cloudsim.engine.foreign import BrokerError, ClusterRefused, check_cluster, describe
from cloudsim.engine.runner import Runner, WorkerDied
from cloudsim.engine.specs import DeviceRequest

__all__ = ["CASES", "RULES", "CheckReport", "check_broker", "check_named_broker"]

RULES = ("answers", "raises", "answers in time", "finishes", "reproducible", "accepts a workload")


@dataclass(frozen=True)
class Case:
    """A workload the broker must get through: a cluster, jobs, machine events and a tick."""

    name: str
    cluster: ClusterSpec
    jobs: tuple[JobSpec, ...]
    events: tuple[MachineEvent, ...] = ()
    tick: float | None = None


def _job(name, at, *tasks) -> JobSpec:
    return JobSpec(name, float(at), tuple(tasks))


def _cases() -> list[Case]:
    cpu = lambda c, m=1.0: {"cpu": float(c), "memory": float(m)}  # noqa: E731
    one = ClusterSpec.uniform(1, cpu(4, 4))
    small = ClusterSpec.uniform(3, cpu(8, 8))
    dag = (_job("dag", 0, TaskSpec("a", 2, cpu(2), 3.0), TaskSpec("b", 1, cpu(4), 2.0, parents=("a",)),
                TaskSpec("c", 3, cpu(1), 1.0, parents=("a",)), TaskSpec("d", 1, cpu(2), 1.0, parents=("b", "c"))),)
    queue = tuple(_job(f"q{j}", j // 3, TaskSpec("t", 1 + j % 4, cpu(1 + j % 3, 0.5), 1.0 + j % 5)) for j in range(24))
    many = ClusterSpec.uniform(2000, cpu(16, 16))
    gpu = ClusterSpec(("cpu", "memory"), ((8.0, 8.0), (8.0, 8.0), (8.0, 8.0)), devices=(2, 2, 1),
                      attributes={"model": ("T4", "V100", "T4")})
    pods = tuple(_job(f"p{j}", j, TaskSpec("t", 1, cpu(1), 2.0 + j % 3,
                                           devices=DeviceRequest(1, 1000 if j % 3 == 0 else 500),
                                           accepts={"model": ("V100",)} if j % 4 == 1 else ()))
                 for j in range(8))
    return [
        Case("one machine, one task", one, (_job("j", 0, TaskSpec("t", 1, cpu(1), 1.0)),)),
        Case("one machine, a scheduler tick", one, (_job("j", 0, TaskSpec("t", 3, cpu(2), 1.5)),
                                                    _job("k", 1, TaskSpec("t", 1, cpu(4), 1.0))), tick=1.0),
        Case("a DAG (children wait for their parents)", small, dag),
        Case("a machine that fails with work on it (re-queued instances)", small, dag,
             (MachineEvent(1.0, 0, "failed"), MachineEvent(4.0, 0, "up"))),
        Case("a queue longer than the cluster holds", ClusterSpec.uniform(5, cpu(8, 8)), queue),
        Case("a task that fits nowhere until a machine comes up", ClusterSpec(("cpu", "memory"),
                                                                            ((2.0, 2.0), (8.0, 8.0))),
             (_job("big", 0, TaskSpec("t", 1, cpu(6), 1.0)), _job("small", 0, TaskSpec("t", 2, cpu(1), 1.0))),
             (MachineEvent(0.0, 1, "down"), MachineEvent(5.0, 1, "up"))),
        Case("2,000 machines", many, queue),
        Case("GPUs, shared and whole, and a GPU model constraint", gpu, pods),
    ]


CASES = tuple(case.name for case in _cases())


@dataclass
class CheckReport:
    """What `check_broker` found: per case "ok", "refused: ..." or the problems; per rule its first failure."""

    broker: str
    cases: dict[str, str] = field(default_factory=dict)
    failures: dict[str, tuple[str, str]] = field(default_factory=dict)  # rule -> (case, message)

    @property
    def passed(self) -> bool:
        return not self.failures


class _Timeout(Exception):
    pass


class _Watched:
    """The broker, each call counted and timed (a call longer than ``timeout`` is interrupted)."""

    def __init__(self, broker, timeout: float) -> None:
        self.broker, self.timeout, self.calls, self.time = broker, timeout, 0, math.nan
        self.name = getattr(broker, "name", type(broker).__name__)
        self.empty_rounds = getattr(broker, "empty_rounds", True)  # the engine reads it from the broker it runs

    @property
    def wake_after(self):
        return getattr(self.broker, "wake_after", None)

    def decide(self, view):
        self.calls += 1
        self.time = view.time
        previous = signal.signal(signal.SIGALRM, _alarm)
        signal.setitimer(signal.ITIMER_REAL, self.timeout)
        try:
            return self.broker.decide(view)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)


def _alarm(signum, frame):
    raise _Timeout()


CHECK_SIGNAL = GridSignal.daily_cycle()
"""The grid signal every case offers (``view.carbon``), so that a broker that plans by the grid is checked too; the
others never read it."""


def _run(make: Callable[[], object], name: str, case: Case, timeout: float) -> tuple[str, str | None, object]:
    """(rule broken or "", message, result) of one run of the case."""
    try:
        broker = make()
        check_cluster(broker, name, case.cluster)
    except ClusterRefused as refusal:
        return "refused", refusal.reason, None
    except (BrokerError, BrokerReferenceError) as error:
        return "raises", str(error), None
    watched = _Watched(broker, timeout)
    sim = Simulation(case.cluster, case.jobs, watched, tick=case.tick, machine_events=case.events, max_idle_ticks=200,
                     carbon_forecast=CHECK_SIGNAL)
    where = lambda: f"decision call {watched.calls} at t={watched.time}"  # noqa: E731
    try:
        result = sim.run()
    except InvalidDecisionError as error:
        return "answers", f"{where()}: {error}", None
    except SimulationStalledError as error:
        return "finishes", str(error), None
    except BrokerError as error:  # the broker's own exception or exit, or the watch's alarm
        cause = error.__cause__
        if isinstance(cause, _Timeout):
            return "answers in time", f"{where()}: no answer within {timeout:g} s", None
        hint = " (a view's arrays are read-only: copy what you change)" if "read-only" in str(cause) else ""
        at = f" ({error.where})" if error.where else ""
        return "raises", f"{where()}: {describe(cause).removeprefix('raised ')}{at}{hint}", None
    jobs = result.summary["jobs"]
    done = int(result.jobs.finish_time.notna().sum())
    if done != jobs:
        return "finishes", f"{jobs - done} of {jobs} job(s) unfinished at the end", None
    return "", None, result


def _case_outcome(item: tuple[Callable[[], object], str, int, float]) -> tuple[str, str | None]:
    """(rule broken or "" or "refused", message) of the broker ``make()`` builds on case ``index``: two runs."""
    make, name, index, timeout = item
    case = _cases()[index]
    rule, message, first = _run(make, name, case, timeout)
    if rule == "":
        rule2, message2, second = _run(make, name, case, timeout)
        if rule2:
            rule, message = rule2, f"the second run: {message2}"
        else:
            columns = ["task", "machine", "first_instance", "instances", "start", "end", "outcome"]
            if not first.groups[columns].equals(second.groups[columns]):
                rule, message = "reproducible", "two runs with the same seed made different decisions"
    return rule, message


def check_broker(make: Callable[[], object], name: str, timeout: float = 60.0,
                 progress: Callable[[str, str], None] | None = None, isolate: bool = False) -> CheckReport:
    """Run the broker ``make()`` builds (a fresh one per run) on every case, twice; the report.

    ``isolate``: run each case in a worker process (``make`` must then be picklable, e.g. a
    ``functools.partial`` of `agents.make_broker`), so that a broker that ends its process (``os._exit``)
    breaks "raises" on that case instead of ending the check with no word (`cloudsim.engine.runner.Runner`)."""
    report = CheckReport(name)
    with Runner(workers=1, progress=False, isolate=isolate) as runner:
        for index, case in enumerate(_cases()):
            try:
                (outcome,) = runner.map(_case_outcome, [(make, name, index, timeout)], name=lambda _: case.name)
                rule, message = outcome
            except WorkerDied:
                rule, message = "raises", "its process ended without an answer (os._exit, a crash or a kill)"
            if rule == "refused":
                report.cases[case.name] = f"refused: {message}"
            elif rule:
                report.cases[case.name] = f"FAIL ({rule}): {message}"
                report.failures.setdefault(rule, (case.name, message))
            else:
                report.cases[case.name] = "ok"
            if progress is not None:
                progress(case.name, report.cases[case.name])
    if all(outcome.startswith("refused: ") for outcome in report.cases.values()):
        report.failures.setdefault("accepts a workload", (
            CASES[0], f"its check_cluster refused all {len(report.cases)} workloads, so nothing was checked; "
                      "accept the clusters it can schedule (raise ValueError only for those it cannot)"))
    return report


def check_named_broker(name: str, options: str | None = None, seed: int = 0, timeout: float = 60.0,
                       progress: Callable[[str, str], None] | None = None) -> CheckReport:
    """`check_broker` of the broker ``name`` (a built-in, an installed one or a reference) with ``options``
    (``KEY=VALUE[,KEY=VALUE]``), seeded with ``seed``; a name or option that cannot work is refused first,
    in one line (`ConfigError`, or the reference's own error)."""
    from agents import builtin_source, make_broker, plugins
    from cloudsim.run.config.brokers import CheckBrokerConfig

    keywords = CheckBrokerConfig(name, options, seed, timeout).keywords  # each option checked, as on the command line
    make_broker(name, seed=seed, **keywords)  # a reference that does not load, an option it does not take: now
    return check_broker(functools.partial(make_broker, name, seed=seed, **keywords), name, timeout, progress,
                        isolate=plugins.foreign((name,), builtin_source))
