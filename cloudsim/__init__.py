"""cloudsim: an event-driven discrete-event simulator of a datacenter for studying job schedulers.

A workload of `JobSpec` (jobs -> tasks -> instances) runs on a `ClusterSpec`
under a broker, any object whose ``decide(view)`` returns a `Decision`, a `Plan`
(a list of decisions) or None::

    from cloudsim import ClusterSpec, simulate
    from agents import FirstFit
    result = simulate(ClusterSpec.uniform(5, {"cpu": 64, "memory": 1}), jobs, FirstFit(), tick=1)
    result.summary["makespan"], result.tasks, result.utilisation()

The same engine steps one decision at a time (`Simulation.next_decision` and
`Simulation.apply`), and its Gymnasium environments are registered on import
(``gymnasium.make("cloudsim/Deepk8s-v0")``).
"""

from cloudsim.broker import (ArrayPlan, Broker, ClusterView, Decision, InvalidDecisionError, Plan, sequential_fit,
                             sequential_fit_count)
from cloudsim.metrics import EpisodeResult
from cloudsim.simulation import Simulation, SimulationStalledError, simulate
from cloudsim.specs import MachineEvent, UnschedulableTaskError
from cloudsim.streaming import StreamedResult
from cloudsim.specs import ClusterSpec, JobBlock, JobSpec, TaskSpec, parse_capacity
from cloudsim.envs import register_environments
from cloudsim.version import __version__

__all__ = [
    "__version__",
    "ArrayPlan",
    "Broker",
    "ClusterSpec",
    "ClusterView",
    "Decision",
    "EpisodeResult",
    "InvalidDecisionError",
    "MachineEvent",
    "JobBlock",
    "JobSpec",
    "Plan",
    "Simulation",
    "SimulationStalledError",
    "StreamedResult",
    "TaskSpec",
    "UnschedulableTaskError",
    "parse_capacity",
    "sequential_fit",
    "sequential_fit_count",
    "simulate",
]


register_environments()
