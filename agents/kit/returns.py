"""The policy-gradient arithmetic: returns to go and DeepJS's zero-padded per-decision baseline."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def returns_to_go(rewards: Sequence[float], gamma: float = 1.0) -> np.ndarray:
    """The discounted return from each step of one trajectory to its end.

    q_t = sum_{t' >= t} gamma^(t' - t) r_t', computed backwards in one pass.

    Args:
        rewards: the trajectory's rewards r_0 .. r_{T-1}.
        gamma: the discount factor (1: undiscounted, as DeepJS trains).

    Returns:
        float64 array of length T (empty for an empty trajectory). For example
        rewards [1, 2, 3] with gamma 0.5 give [1 + 0.5*2 + 0.25*3, 2 + 0.5*3, 3]
        = [2.75, 3.5, 3].
    """
    q = np.zeros(len(rewards))
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + gamma * running
        q[t] = running
    return q


def baselines(returns: Sequence[np.ndarray]) -> np.ndarray:
    """The baseline of DeepJS's Algorithm 2: at each decision index, the mean return over N trajectories.

    b_t = (1/N) sum_i q_t^i, where a trajectory shorter than t contributes 0
    (shorter ones are padded with zeros, and still count in N).

    Args:
        returns: the N trajectories' returns-to-go (`returns_to_go`), of any lengths.

    Returns:
        float64 array as long as the longest trajectory. For example [-2, -2, -1, -1]
        and [-1, -1] give [-1.5, -1.5, -0.5, -0.5].

    Raises:
        ValueError: no trajectories (the mean of nothing).
    """
    if len(returns) == 0:
        raise ValueError("baselines: no trajectories to average; pass the returns of at least one trajectory")
    length = max(len(q) for q in returns)
    padded = np.zeros((len(returns), length))
    for i, q in enumerate(returns):
        padded[i, : len(q)] = q
    return padded.mean(axis=0)
