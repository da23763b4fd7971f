"""`evaluate`: episodes of a policy on several workloads, through a runner when given one."""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Iterable, Sequence

from cloudsim import ClusterSpec, JobSpec, Simulation

if TYPE_CHECKING:
    from cloudsim.engine.runner import Runner


def _episode_summary(args: tuple) -> dict:
    broker_factory, cluster, jobs, tick = args
    return Simulation(cluster, jobs, broker_factory(), tick=tick).run().summary


def evaluate(broker_factory: Callable[[], object], cluster: ClusterSpec, workloads: Iterable[Sequence[JobSpec]],
             *, runner: "Runner | None" = None, tick: float | None = None) -> list[dict]:
    """One episode per workload with a fresh broker each, and each episode's summary, in workload order.

    For an agent's evaluation during training (its greedy policy on held-out workloads): every episode gets
    its own broker from ``broker_factory`` (a learned broker keeps state: its random generator, its recorded
    trajectory), so episodes do not depend on one another nor on the order they run in.

    Args:
        broker_factory: makes the broker, e.g. ``functools.partial(DeepJS, policy)``; with a runner of several
            processes it must pickle (a top-level function, class or partial of them).
        cluster: the cluster every episode runs on.
        workloads: the episodes' jobs, one list per episode.
        runner: runs the episodes (`cloudsim.engine.runner.Runner`: worker processes or Ray); None runs them here, one
            after another. The caller closes it.
        tick: the scheduler tick (None: event-driven), as `cloudsim.Simulation` takes it.

    Returns:
        each episode's `EpisodeResult.summary` (makespan, averages, counts).
    """
    items = [(broker_factory, cluster, list(jobs), tick) for jobs in workloads]
    if runner is None:
        return [_episode_summary(item) for item in items]
    return list(runner.map(_episode_summary, items, desc="evaluation", unit="episode"))
