"""RLSK's numbers for a finished run of the core on a federation: eq. 4's reward integrated over the run, the
clusters' utilisation over time, and the imbalance measures."""

from __future__ import annotations

from typing import Any

import numpy as np

from cloudsim.engine import arithmetic
from cloudsim.engine.envs.rlsk.federation import RLSKWeights, cluster_bounds, reward_rate

__all__ = ["cluster_utilisation", "federation_metrics"]


def federation_metrics(result: Any, clusters: int, weights: RLSKWeights = RLSKWeights()) -> dict[str, float]:
    """RLSK's numbers for a finished run (an `EpisodeResult`) on ``clusters`` clusters (as `cluster_bounds` splits
    the machines).

    * ``total_reward``: the integral of eq. 4 over [0, makespan] (what
      `RLSKEnv`'s rewards of the episode add up to);
    * ``imbalance_resources`` (eq. 7) and ``imbalance_machines`` (eq. 8, between
      clusters): time averages over [0, makespan] with each cluster's usage
      pooled over its nodes (with one node per cluster, the summary's own numbers);
    * ``mean_utilisation``: the clusters' mean U_m averaged over time;
    * ``utilisation_cluster_<m>``: each cluster's mean U_m over time;
    * ``diff_within_cluster``: section IV-A's (cpu/mean - 1)^2 + (memory/mean - 1)^2
      (summed over resources; 0 while a cluster is idle), averaged over time, then over clusters.
    """
    times, util = cluster_utilisation(result, clusters)
    makespan = float(result.makespan)
    span = np.diff(np.append(times, makespan)) if len(times) else np.zeros(0)
    rate = reward_rate(util, weights)
    # Eq. 7 and 8 alone: eq. 4 with one weight at 1 and the others 0, negated.
    within = -reward_rate(util, RLSKWeights(0.0, 1.0, 0.0))
    between = -reward_rate(util, RLSKWeights(0.0, 0.0, 1.0))
    average = (lambda x: arithmetic.dot(x, span) / makespan) if makespan > 0 else (lambda x: float("nan"))
    per_cluster = util.mean(axis=-1)
    means = [average(per_cluster[:, m]) for m in range(clusters)]
    with np.errstate(divide="ignore", invalid="ignore"):  # an idle cluster (mean 0) has no difference
        spread = np.where(per_cluster[..., None] > 0, (util / per_cluster[..., None] - 1.0) ** 2, 0.0).sum(axis=-1)
    return {"total_reward": float(np.dot(rate, span)),
            "imbalance_resources": average(within), "imbalance_machines": average(between),
            "mean_utilisation": float(np.mean(means)) if means else float("nan"),
            **{f"utilisation_cluster_{m}": means[m] for m in range(clusters)},
            "diff_within_cluster": float(np.mean([average(spread[:, m]) for m in range(clusters)]))}


def cluster_utilisation(result: Any, clusters: int) -> tuple[np.ndarray, np.ndarray]:
    """(times[T], util[T, clusters, resources]): each cluster's utilisation from each change onward,
    its nodes' usage pooled, from a finished run's usage changes (`EpisodeResult.usage_changes`)."""
    resources = list(result.resources)
    capacity = result.capacity[resources].to_numpy(dtype=float)
    bounds = cluster_bounds(len(capacity), clusters)
    cluster_of = np.repeat(np.arange(clusters), np.diff(bounds))
    changes = result.usage_changes()
    times, instant = np.unique(changes["time"].to_numpy(dtype=float), return_inverse=True)
    change = np.zeros((len(times), clusters, len(resources)))
    np.add.at(change, (instant, cluster_of[changes["machine"].to_numpy()]), changes[resources].to_numpy(dtype=float))
    cluster_capacity = np.add.reduceat(capacity, bounds[:-1], axis=0)
    return times, np.clip(np.cumsum(change, axis=0) / cluster_capacity, 0.0, 1.0)
