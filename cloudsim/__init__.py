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
(``gymnasium.make("cloudsim/Deepk8s-v0")``, `ENVIRONMENTS`).

The package has three layers, each a folder: the engine (`cloudsim.engine`), the run layer (`cloudsim.run`)
and the command line (`cloudsim.cli`). The engine's modules were ``cloudsim.<module>`` in cloudsim 0.1.0;
those paths still import, with a `DeprecationWarning`, for one more release (`cloudsim._moved`).
"""

import gymnasium

from cloudsim._moved import install_moved_modules
from cloudsim.engine.broker import (ArrayPlan, Broker, ClusterView, Decision, InvalidDecisionError, Plan,
                                    RunningGroups, Suspend, sequential_fit, sequential_fit_count)
from cloudsim.engine.metrics import EpisodeResult
from cloudsim.engine.simulation import Simulation, SimulationStalledError, simulate
from cloudsim.engine.specs import (ClusterSpec, JobBlock, JobSpec, MachineEvent, TaskSpec, UnschedulableTaskError,
                                   parse_capacity)
from cloudsim.engine.streaming import StreamedResult
from cloudsim.version import __version__

__all__ = [
    "__version__",
    "ENVIRONMENTS",
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
    "RunningGroups",
    "Simulation",
    "SimulationStalledError",
    "StreamedResult",
    "Suspend",
    "TaskSpec",
    "UnschedulableTaskError",
    "parse_capacity",
    "sequential_fit",
    "sequential_fit_count",
    "simulate",
]


ENVIRONMENTS = {
    "cloudsim/Deepk8s-v0": "cloudsim.run.environments:make_deepk8s",
    "cloudsim/DeepRM-v0": "cloudsim.engine.envs.deeprm:DeepRMEnv",
    "cloudsim/RLSK-v0": "cloudsim.run.environments:make_rlsk",
}
"""The Gymnasium environments ``import cloudsim`` registers, by id: each one's entry point, imported only when
``gymnasium.make`` makes it. Deepk8s's and RLSK's come with their papers' default workloads, read by the trace
loaders, which the engine may not import: their entry points are the run layer's (`cloudsim.run.environments`)."""

for _env_id, _entry_point in ENVIRONMENTS.items():
    if _env_id not in gymnasium.registry:
        gymnasium.register(_env_id, entry_point=_entry_point)
del _env_id, _entry_point
install_moved_modules()
