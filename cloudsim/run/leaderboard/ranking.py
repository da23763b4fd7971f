"""The leaderboard's numbers from its cells: per workload, each broker's mean and spread of each measure, its
ranks, and its paired comparison with the baseline episode by episode; across workloads, the mean ranks."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from cloudsim.run.leaderboard.cells import FAILED, OK
from cloudsim.run.leaderboard.workloads import BASELINE, HIGHER_IS_BETTER, LEADERBOARD_WORKLOADS, METRICS
from cloudsim.run.paired import Paired, paired

if TYPE_CHECKING:
    import pandas as pd

def broker_table(results: list[dict], brokers: tuple[str, ...], metrics: tuple[str, ...]) -> pd.DataFrame:
    """One row per broker: mean and standard deviation of each metric over its episodes and seeds."""
    import pandas as pd
    rows = []
    for broker in brokers:
        mine = [r for r in results if r["broker"] == broker]
        runs = [row for r in mine for row in r["rows"]]
        refused = next(((r["reason"] if r["status"] != FAILED else f"failed: {r['reason']}") for r in mine
                        if r["status"] != OK), "")
        row: dict = {"broker": broker, "runs": len(runs), "not_run": refused}
        for metric in metrics:
            values = np.array([np.nan if run.get(metric) is None else run[metric] for run in runs], dtype=float)
            known = values[~np.isnan(values)]  # a metric a run does not have (JSON null) is left out
            row[f"{metric}_mean"] = float(known.mean()) if len(known) else np.nan
            row[f"{metric}_sd"] = float(known.std()) if len(known) else np.nan
        rows.append(row)
    return pd.DataFrame(rows).set_index("broker")


def rank_table(tables: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Each broker's rank on each workload and measure it is ranked by (a column ``"workload measure"``):
    1 is the best mean (the lowest, or the highest of a measure in `HIGHER_IS_BETTER`); ties share the best
    rank; a broker that did not run is NaN."""
    import pandas as pd
    return pd.DataFrame({f"{name} {measure}": table[f"{measure}_mean"].rank(
        method="min", ascending=measure not in HIGHER_IS_BETTER)
        for name, table in tables.items() for measure in LEADERBOARD_WORKLOADS[name].ranked_by})


def ranking_of(ranks: pd.DataFrame, against: dict[str, dict[str, dict[str, Paired]]]) -> pd.DataFrame:
    """The summary: each broker's mean rank per measure over the workloads ranked by it (the GPU workloads'
    own measures as ``gpu``), its mean rank over every column of ``ranks``, the workloads it ran, and the
    workload measures where it is surely better or worse than the baseline (the 95 % interval of the
    paired difference on one side of 0), sorted by mean rank."""
    import pandas as pd
    gpu = [c for c in ranks if LEADERBOARD_WORKLOADS[c.split(" ")[0]].gpu]
    groups = {measure: [c for c in ranks if c not in gpu and c.split(" ")[1] == measure] for measure in METRICS}
    groups["gpu"] = gpu
    summary = pd.DataFrame({key: ranks[columns].mean(axis=1) for key, columns in groups.items() if columns})
    verdicts = [(broker, result.verdict) for by_broker in against.values() for broker, measures in by_broker.items()
                for result in measures.values()]
    summary["mean_rank"] = ranks.mean(axis=1)
    summary["workloads_run"] = ranks.T.groupby(lambda c: c.split(" ")[0]).max().notna().sum(axis=0)
    for verdict in ("better", "worse"):
        summary[f"surely_{verdict}"] = [sum(1 for b, v in verdicts if b == broker and v == verdict)
                                        for broker in summary.index]
    return summary.sort_values(["mean_rank", "workloads_run"], ascending=[True, False])


def _episodes(results: list[dict], broker: str, metric: str) -> dict[tuple[int, int], float]:
    """A broker's value of ``metric`` on each episode of a workload, keyed by (seed, episode)."""
    return {(r["seed"], i): (np.nan if row.get(metric) is None else float(row[metric]))
            for r in results if r["broker"] == broker for i, row in enumerate(r["rows"])}


def against_baseline(results: list[dict], brokers: tuple[str, ...],
                     metrics: tuple[str, ...]) -> dict[str, dict[str, Paired]]:
    """Every broker but the baseline against the baseline on each metric, on the episodes both ran
    (empty when the baseline is not among ``brokers``)."""
    if BASELINE not in brokers:
        return {}
    comparisons = {}
    for broker in brokers:
        if broker == BASELINE:
            continue
        comparisons[broker] = {}
        for metric in metrics:
            mine, base = _episodes(results, broker, metric), _episodes(results, BASELINE, metric)
            both = sorted(set(mine) & set(base))
            comparisons[broker][metric] = paired([mine[k] for k in both], [base[k] for k in both],
                                                 lower_is_better=metric not in HIGHER_IS_BETTER)
    return comparisons
