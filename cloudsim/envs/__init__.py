"""Gymnasium environments, one per paper's formulation: Deepk8s-v0 on the engine's stepping API
(`SchedulingEnv`), DeepRM-v0 and RLSK-v0 on their papers' own simulators.

``import cloudsim`` registers them under ``cloudsim/<Name>-v0`` by string entry
point, so the core imports neither the agents nor the trace loaders; the entry
points (in `cloudsim.run.environments`) supply each paper's default workload::

    import gymnasium, cloudsim
    env = gymnasium.make("cloudsim/Deepk8s-v0")
"""

from __future__ import annotations

import gymnasium

from cloudsim.envs.base import TRAINING_SEEDS, SchedulingEnv
from cloudsim.envs.deepk8s import Deepk8sEncoding, Deepk8sEnv, deepk8s_cluster
from cloudsim.envs.deeprm import DeepRMBatch, DeepRMEnv, DeepRMParams, deeprm_jobsets
from cloudsim.envs.rlsk import Federation, RLSKEnv, RLSKWeights, federation_cluster, federation_metrics

__all__ = ["ENVIRONMENTS", "DeepRMBatch", "DeepRMEnv", "DeepRMParams", "Deepk8sEncoding", "Deepk8sEnv",
           "deeprm_jobsets", "Federation", "RLSKEnv", "RLSKWeights", "SchedulingEnv", "TRAINING_SEEDS",
           "deepk8s_cluster", "federation_cluster", "federation_metrics",
           "register_environments"]

# id -> entry point
ENVIRONMENTS = {
    "cloudsim/Deepk8s-v0": "cloudsim.run.environments:make_deepk8s",
    "cloudsim/DeepRM-v0": "cloudsim.envs.deeprm:DeepRMEnv",
    "cloudsim/RLSK-v0": "cloudsim.run.environments:make_rlsk",
}


def register_environments() -> None:
    """Register every environment with Gymnasium (once; importing cloudsim does it)."""
    for env_id, entry_point in ENVIRONMENTS.items():
        if env_id not in gymnasium.registry:
            gymnasium.register(env_id, entry_point=entry_point)
