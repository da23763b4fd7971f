"""Two brokers compared episode by episode: wins, ties and losses, and how sure the mean difference is.

A comparison of means over a few episodes says little when the episodes differ more than the brokers
do. Paired on the same episodes, the difference of each episode's measure removes what the episodes
share. `paired` counts the episodes where the candidate is better, equal or worse than the baseline
(as DeepJS's Table 2 counts its chunks) and gives the mean difference with its 95 % confidence interval
from Student's t distribution on the paired differences, in the measure's units and as a percentage of
the baseline's mean. Two values are a tie when they differ by no more than rounding (`TIE`).

The t quantile is computed here (the density integrated by Simpson's rule, the quantile found by
bisection) rather than taken from SciPy, which cloudsim does not otherwise need.
"""

from __future__ import annotations

import math
from functools import lru_cache
from typing import NamedTuple, Sequence

import numpy as np

__all__ = ["Paired", "paired", "t_quantile", "TIE"]

TIE = 1e-9
"""Two values are a tie when they differ by at most this fraction of the larger magnitude."""


@lru_cache(maxsize=None)
def t_quantile(probability: float, df: int) -> float:
    """The ``probability`` quantile (above 0.5) of Student's t distribution with ``df`` degrees of freedom."""
    if not 0.5 <= probability < 1 or df < 1:
        raise ValueError(f"t_quantile needs 0.5 <= probability < 1 and df >= 1, not {probability}, {df}")
    scale = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def cdf(x: float) -> float:  # P(T <= x) for x >= 0: one half plus the density's integral over [0, x]
        steps = 4096  # even, as Simpson's rule needs
        t = np.linspace(0.0, x, steps + 1)
        density = scale * (1 + t * t / df) ** (-(df + 1) / 2)
        weights = np.ones(steps + 1)
        weights[1:-1:2], weights[2:-1:2] = 4, 2
        return 0.5 + float(weights @ density) * x / steps / 3

    low, high = 0.0, 1.0
    while cdf(high) < probability:
        high *= 2
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if cdf(middle) < probability else (low, middle)
    return (low + high) / 2


class Paired(NamedTuple):
    """A candidate against a baseline over ``episodes`` paired episodes. ``wins`` counts the episodes where
    the candidate is better (lower values, or higher with ``lower_is_better`` false). ``difference`` is the
    mean of candidate minus baseline, ``low`` and ``high`` its 95 % confidence interval (NaN with fewer than
    two episodes); the ``*_pct`` fields are the same as a percentage of the baseline's mean (NaN when that
    is 0)."""

    episodes: int
    wins: int
    ties: int
    losses: int
    difference: float
    low: float
    high: float
    difference_pct: float
    low_pct: float
    high_pct: float
    lower_is_better: bool

    @property
    def verdict(self) -> str:
        """``better`` or ``worse`` when the whole interval lies on that side of 0, else ``unsure``."""
        if not (self.high < 0 or self.low > 0):  # NaN too
            return "unsure"
        return "better" if (self.high < 0) == self.lower_is_better else "worse"


def paired(candidate: Sequence[float], baseline: Sequence[float], lower_is_better: bool = True) -> Paired:
    """Compare ``candidate`` with ``baseline``, episode ``i`` with episode ``i``, leaving out the episodes
    where either is NaN; see the module."""
    a, b = np.asarray(candidate, dtype=float), np.asarray(baseline, dtype=float)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"paired needs two equally long sequences, not {a.shape} and {b.shape}")
    known = ~(np.isnan(a) | np.isnan(b))
    a, b = a[known], b[known]
    tied = np.abs(a - b) <= TIE * np.maximum(np.abs(a), np.abs(b))
    better = (a < b) if lower_is_better else (a > b)
    n = len(a)
    mean = float((a - b).mean()) if n else math.nan
    low = high = math.nan
    if n >= 2:
        half = t_quantile(0.975, n - 1) * float((a - b).std(ddof=1)) / math.sqrt(n)
        low, high = mean - half, mean + half
    base = float(b.mean()) if n else math.nan
    percent = 100 / abs(base) if n and base != 0 else math.nan
    return Paired(n, int((better & ~tied).sum()), int(tied.sum()), int((~better & ~tied).sum()), mean, low, high,
                  mean * percent, low * percent, high * percent, lower_is_better)
