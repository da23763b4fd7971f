"""RLSK's federation of clusters (Huang, Xiao & Wu): each arriving job is sent to a cluster, or postponed.

The federation model (`federation`), its metrics over a finished run (`metrics`) and the Gymnasium environment
(`env`), each a module of this package.

RLSK decides which cluster's queue a job joins, not which machine a task
starts on, so its formulation needs a layer between the agent and the core:
the `Federation` groups the core's machines into M clusters (the paper's
resource pools; here each may hold several nodes), keeps one queue per
cluster, holds postponed jobs until they come back, and places each queued job
on a node of its cluster with the least-allocated score of kube-scheduler.
`RLSKEnv` (the Gymnasium environment) and the brokers of `agents.rlsk.federation`
(RLSK's baselines and the trained agent, run by the core) drive the same
`Federation`, so an agent acts in evaluation exactly as it did in training.

The reward of eq. 4 is written once, `reward_rate`, and integrated over time
both step by step in the environment and over a finished run
(`federation_metrics`), so every broker's total reward is the same number.

A "job" here is a ready task with all its waiting instances (RLSK's jobs are
single tasks of one instance); it is dispatched as a whole and its instances
start on the nodes of that cluster one at a time.
"""

from cloudsim.engine.envs.rlsk.env import RLSKEnv
from cloudsim.engine.envs.rlsk.federation import (DEFAULT_MAX_POSTPONES, DEFAULT_POSTPONE, POSTPONE, Dispatch,
                                                  Federation, RLSKWeights, cluster_bounds, federation_cluster,
                                                  postpone_range, reward_rate)
from cloudsim.engine.envs.rlsk.metrics import cluster_utilisation, federation_metrics

__all__ = [
    "DEFAULT_MAX_POSTPONES",
    "DEFAULT_POSTPONE",
    "POSTPONE",
    "Dispatch",
    "Federation",
    "RLSKEnv",
    "RLSKWeights",
    "cluster_bounds",
    "cluster_utilisation",
    "federation_cluster",
    "federation_metrics",
    "postpone_range",
    "reward_rate",
]
