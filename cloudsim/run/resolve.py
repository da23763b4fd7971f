"""The one step from options to runs: `resolve` turns a checked config into what the runner executes.

A command's data flows one way::

    options (cloudsim.run.config) -> resolve -> ResolvedRun -> RunSpec per run -> Runner -> rows -> report

The configs declare and check options; this module is where they meet the
workload (`cloudsim.run.workload` loads or generates it and slices its
episodes), the cluster the brokers place on, and the brokers themselves
(`BrokerPlan`: how each run builds its broker; FGD also gets the workload's target shapes).
Everything that can refuse a run (a missing file, a task no machine holds, a checkpoint that does not load) is
met here, before the first simulation. What runs after, `cloudsim.run.episode`,
reads only what this step made, never the config.
"""

from __future__ import annotations

import dataclasses
import warnings
from dataclasses import dataclass
from typing import Any

from agents import LEARNED, Windowed, make_broker, make_federated_broker
from agents.heuristics.gpu import target_options
from cloudsim.engine.envs.rlsk import federation_cluster
from cloudsim.engine.foreign import check_cluster
from cloudsim.engine.fragmentation import TargetWorkload
from cloudsim.run.config import GENERATOR_WINDOWS, RunConfig, SimulationConfig
from cloudsim.run.workload import (Episode, ResolvedWorkload, check_episodes, cluster_option_of, episodes,
                                   resolve_workload)
from cloudsim.engine.specs import ClusterSpec

__all__ = ["BrokerPlan", "ResolvedRun", "RunWarning", "Workplace", "broker_plans", "resolve", "workplace"]


class RunWarning(UserWarning):
    """Something about a run that works but may not be what was meant (printed, never fatal)."""


@dataclass(frozen=True)
class BrokerPlan:
    """How every run builds the broker ``name``; small and picklable, so it travels to workers.

    ``options``: `agents.make_broker`'s keyword options (a checkpoint);
    ``window``: heuristics see only the first ``window`` waiting tasks (learned
    brokers bring their own); ``federated``: ``name`` is one of RLSK's
    dispatchers over a federation's clusters (`compare --env rlsk`).
    """

    name: str
    options: tuple[tuple[str, Any], ...] = ()
    window: int | None = None
    federated: bool = False

    def build(self, seed: int, clusters: int) -> object:
        """A fresh broker seeded with ``seed``; ``clusters``: the federation's clusters when federated."""
        if self.federated:
            return make_federated_broker(self.name, clusters=clusters, seed=seed, **dict(self.options))
        broker = make_broker(self.name, seed=seed, **dict(self.options))
        return Windowed(broker, self.window) if self.window is not None and self.name not in LEARNED else broker


@dataclass(frozen=True)
class Workplace:
    """Where a workload's runs place their work.

    ``cluster``: the machines brokers place on (under --env rlsk, every cluster
    split into its --nodes); ``clusters``: the workload's machines, which RLSK's
    federation treats as its clusters; ``cluster_option``: the option and value
    that set the machines, named when a task fits none of them; ``target``: on a
    cluster with devices, the workload's target shapes, which FGD places against
    and every run's fragmentation is measured against (`cloudsim.engine.fragmentation`).
    """

    cluster: ClusterSpec
    clusters: int
    cluster_option: tuple[str, str]
    target: TargetWorkload | None = None


@dataclass
class ResolvedRun:
    """A command's workload, episodes, brokers and settings, checked and ready for the runner.

    What the checks found that works but may not be what was meant is issued as a `RunWarning`.
    """

    workload: ResolvedWorkload
    episodes: list[Episode]
    place: Workplace
    brokers: tuple[BrokerPlan, ...]
    simulation: SimulationConfig


def broker_plans(config: RunConfig) -> tuple[BrokerPlan, ...]:
    """One `BrokerPlan` per broker of ``config``: its checkpoint, and the task window heuristics see
    (--task-window, else the generator's own, `GENERATOR_WINDOWS`)."""
    window = config.chosen_brokers.window
    if window is None and config.workload.is_generator:
        window = GENERATOR_WINDOWS.get(config.workload.generator_name)
    checkpoints = dict(config.chosen_brokers.checkpoint)
    options = {name: [(key, value) for n, key, value in config.chosen_brokers.options if n == name]
               for name in config.chosen_brokers.brokers}
    return tuple(BrokerPlan(name, ((("checkpoint", checkpoints[name]),) if name in checkpoints else ())
                            + tuple(options[name]), window, config.federated)
                 for name in config.chosen_brokers.brokers)


def workplace(config: RunConfig, cluster: ClusterSpec, jobs: object = None) -> Workplace:
    """The `Workplace` of a workload of ``jobs`` whose machines are ``cluster``."""
    clusters = cluster.machines
    if config.federated and (config.nodes or 1) > 1:  # compare --env rlsk --nodes
        cluster = federation_cluster(clusters, config.nodes, dict(zip(cluster.resources, cluster.capacities[0])))
    target = TargetWorkload.of(jobs) if cluster.devices and isinstance(jobs, list) and jobs else None
    return Workplace(cluster, clusters, cluster_option_of(config, cluster), target)


def resolve(config: RunConfig, *, load: float | None = None, seed: int | None = None) -> ResolvedRun:
    """Load (or generate, at ``load`` with ``seed`` when given) the workload, slice its episodes, and
    check them and every broker against the cluster; a warning is issued as a `RunWarning`.

    Each broker is built once here, so that a bad checkpoint, or one trained for
    another cluster, is refused before any run.
    """
    resolved = resolve_workload(config, load=load, seed=seed)
    runs = episodes(config, resolved, config.simulation.tick)
    place = workplace(config, resolved.cluster, resolved.workload.jobs)
    messages = check_episodes(config, place.cluster, runs)  # the machines brokers place on (RLSK's --nodes split)
    plans = broker_plans(config)
    if place.target is not None:  # FGD measures against the run's own workload
        plans = tuple(dataclasses.replace(plan, options=(*plan.options,
                                                         *target_options(plan.name, place.target).items()))
                      for plan in plans)
    for plan in plans:  # learned brokers know their cluster; a user's may refuse it too
        messages += check_cluster(plan.build(config.workload.seed, place.clusters), plan.name, place.cluster)
    for message in messages:
        warnings.warn(message, RunWarning, stacklevel=2)
    return ResolvedRun(resolved, runs, place, plans, config.simulation)
