"""Gymnasium environments, one per paper's formulation: Deepk8s-v0 on the engine's stepping API
(`SchedulingEnv`), DeepRM-v0 and RLSK-v0 on their papers' own simulators.

``import cloudsim`` registers them under ``cloudsim/<Name>-v0`` (`cloudsim.ENVIRONMENTS`), so the engine imports
neither the agents nor the trace loaders; the entry points of two of them (in `cloudsim.run.environments`)
supply each paper's default workload::

    import gymnasium, cloudsim
    env = gymnasium.make("cloudsim/Deepk8s-v0")
"""

from __future__ import annotations

from cloudsim.engine.envs.base import TRAINING_SEEDS, SchedulingEnv
from cloudsim.engine.envs.deepk8s import Deepk8sEncoding, Deepk8sEnv, deepk8s_cluster
from cloudsim.engine.envs.deeprm import DeepRMBatch, DeepRMEnv, DeepRMParams, deeprm_jobsets
from cloudsim.engine.envs.rlsk import Federation, RLSKEnv, RLSKWeights, federation_cluster, federation_metrics

__all__ = ["DeepRMBatch", "DeepRMEnv", "DeepRMParams", "Deepk8sEncoding", "Deepk8sEnv",
           "deeprm_jobsets", "Federation", "RLSKEnv", "RLSKWeights", "SchedulingEnv", "TRAINING_SEEDS",
           "deepk8s_cluster", "federation_cluster", "federation_metrics"]
