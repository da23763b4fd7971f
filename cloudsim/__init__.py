"""cloudsim: an event-driven discrete-event simulator of a datacenter for studying job schedulers.

A workload of `JobSpec` (jobs -> tasks -> instances) runs on a `ClusterSpec`
under a broker, any object whose ``decide(view)`` returns a `Decision` or None::

    from cloudsim import ClusterSpec, simulate
    from agents import FirstFit
    result = simulate(ClusterSpec.uniform(5, {"cpu": 64, "memory": 1}), jobs, FirstFit(), tick=1)
    result.summary["makespan"], result.tasks, result.utilisation()
"""

from cloudsim.broker import Broker, ClusterView, Decision, InvalidDecisionError, sequential_fit_count
from cloudsim.metrics import EpisodeResult
from cloudsim.simulation import MachineEvent, Simulation, SimulationStalledError, UnschedulableTaskError, simulate
from cloudsim.specs import ClusterSpec, JobSpec, TaskSpec, parse_capacity

__all__ = [
    "Broker",
    "ClusterSpec",
    "ClusterView",
    "Decision",
    "EpisodeResult",
    "InvalidDecisionError",
    "MachineEvent",
    "JobSpec",
    "Simulation",
    "SimulationStalledError",
    "TaskSpec",
    "UnschedulableTaskError",
    "parse_capacity",
    "sequential_fit_count",
    "simulate",
]

__version__ = "0.1.0"
