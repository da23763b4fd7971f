"""DeepRM_Plus's figures 6, 8, 9 and 13, measured in DeepRM's environment on held-out jobsets.

* Figure 6: DeepRM's and DeepRM_Plus's total reward per training iteration (mean
  and maximum) on the same workload (Poisson arrivals at 140 %, 25 jobsets of
  5-50 jobs), and the iteration at which DeepRM_Plus first reaches DeepRM's final
  mean reward (both as 10-iteration moving averages).
* Figure 8: average weighted turnaround time (slowdown) against load, 10-190 %,
  for Random, FCFS, SJF, HRRN, Tetris*, DeepRM and DeepRM_Plus; 100 held-out
  Poisson jobsets (seeds 0-99) per load.
* Figure 9: average cycling time (completion time) at 140 % load.
* Figure 13: the same policies on 20,000 tasks of the Alibaba v2018 sample, as
  jobsets of 50 tasks (`traces.deeprm`): average weighted turnaround and the
  mean total reward per jobset.

The learned policies act by sampling (seeded), as the original evaluations do.

    python benchmarks/deeprm_plus_results.py --plus RUNP/policy.pt --deeprm RUND/policy.pt \
        --plus-log RUNP/log.csv --deeprm-log RUND/log.csv [--clone RUNP/clone.json]

Writes benchmarks/results/deeprm_plus/ (figures, results.md, results.json).

It drives DeepRM's batched environment directly, not `cloudsim.run`, because Figure 13 runs jobsets cut from the
Alibaba v2018 sample (`traces.deeprm`), which ``compare --env deeprm`` does not take, and Figures 8, 9 and 13
pool the jobs of all the jobsets where `compare` averages per jobset.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np
import pandas as pd

from agents import DEEPRM_TETRIS_STAR_KNOB
from agents.deeprm import load_policy
from traces.data import data_folder
from cloudsim.engine.envs.deeprm import (DeepRMBatch, DeepRMParams, fcfs_actions, hrrn_actions, jobsets_at_load,
                                  random_actions, sjf_actions, tetris_star_actions)

RESULTS = Path(__file__).resolve().parents[1] / "benchmarks" / "results" / "deeprm_plus"
LOADS = (0.1, 0.4, 0.7, 1.0, 1.4, 1.6, 1.9)
PARAMS = DeepRMParams(slots=10, mode="code")
TRACE = data_folder() / "alibaba" / "v2018" / "selected_DAGs.csv"


def policies(plus: Path, deeprm: Path) -> dict:
    rng = np.random.default_rng(0)
    return {"Random": lambda batch: random_actions(batch, rng), "FCFS": fcfs_actions, "SJF": sjf_actions,
            "HRRN": hrrn_actions,
            f"Tetris* ({DEEPRM_TETRIS_STAR_KNOB:g})": lambda batch: tetris_star_actions(batch, DEEPRM_TETRIS_STAR_KNOB),
            "DeepRM": load_policy(deeprm, seed=0), "DeepRM_Plus": load_policy(plus, seed=0)}


def run(policy, lengths, sizes, arrivals) -> dict:
    """Episodes to their end: per-job weighted turnaround and cycling time, total reward per jobset."""
    batch = DeepRMBatch(PARAMS, lengths, sizes, arrivals)
    total = np.zeros(batch.B)
    while not batch.done.all():
        reward, _ = batch.step(policy(batch))
        total += reward
    ok = (batch.enter >= 0) & (batch.start >= 0)
    cycling = (batch.finish - batch.enter)[ok]
    return {"turnaround": float(np.mean(cycling / batch.lengths[ok])), "cycling": float(np.mean(cycling)),
            "reward": float(total.mean()), "dropped": int(batch.dropped.sum()), "truncated": int(batch.truncated.sum())}


def held_out(load: float, seeds) -> list[np.ndarray]:
    drawn = [jobsets_at_load("poisson", s, 1, PARAMS, load) for s in seeds]
    return [np.concatenate(part) for part in zip(*drawn)]


def plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as pyplot

    return pyplot


def figure8(brokers: dict, seeds, out: Path) -> pd.DataFrame:
    rows = []
    for load in LOADS:
        jobsets = held_out(load, seeds)
        for name, policy in brokers.items():
            rows.append({"load": load, "policy": name, **run(policy, *jobsets)})
        print(f"figure 8: load {load:g} done", flush=True)
    frame = pd.DataFrame(rows)
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(7, 4.5))
    for name, group in frame.groupby("policy", sort=False):
        ax.plot(group["load"] * 100, group["turnaround"], marker="o", markersize=3, label=name)
    ax.set_xlabel("load (% of a resource)")
    ax.set_ylabel("average weighted turnaround time")
    ax.set_yscale("log")
    ax.set_title(f"DeepRM_Plus Figure 8: {len(seeds)} held-out Poisson jobsets per load")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "figure8.png", dpi=120)
    pyplot.close(fig)
    at140 = frame[frame["load"] == 1.4]
    fig, ax = pyplot.subplots(figsize=(7, 4))
    ax.bar(at140["policy"], at140["cycling"])
    ax.set_ylabel("average cycling time (steps)")
    ax.set_title("DeepRM_Plus Figure 9: cycling time at 140 % load")
    ax.tick_params(axis="x", rotation=20)
    fig.tight_layout()
    fig.savefig(out / "figure9.png", dpi=120)
    pyplot.close(fig)
    return frame


def moving(series: pd.Series, window: int = 10) -> pd.Series:
    return series.rolling(window, min_periods=1).mean()


def figure6(plus_log: Path, deeprm_log: Path, out: Path) -> dict:
    plus, deeprm = pd.read_csv(plus_log), pd.read_csv(deeprm_log)
    final = float(deeprm["mean_reward"].tail(10).mean())
    reached = plus["iteration"][moving(plus["mean_reward"]) >= final]
    pyplot = plt()
    fig, (a, b) = pyplot.subplots(1, 2, figsize=(11, 4))
    for name, frame in (("DeepRM", deeprm), ("DeepRM_Plus", plus)):
        a.plot(frame["iteration"], moving(frame["mean_reward"]), label=f"{name}: mean", lw=1)
        a.plot(frame["iteration"], moving(frame["max_reward"]), label=f"{name}: maximum", lw=1, ls="--")
        b.plot(frame["iteration"], moving(frame["mean_slowdown"]), label=name, lw=1)
    a.axhline(final, color="grey", lw=0.8, ls=":", label="DeepRM's final mean")
    a.set_xlabel("iteration")
    a.set_ylabel("total reward (10-iteration moving average)")
    a.set_title("(a) reward per iteration, 140 % load")
    a.legend(fontsize=8)
    b.set_xlabel("iteration")
    b.set_ylabel("weighted turnaround on the training jobsets")
    b.set_title("(b) weighted turnaround while training")
    b.legend()
    fig.tight_layout()
    fig.savefig(out / "figure6.png", dpi=120)
    pyplot.close(fig)
    return {"deeprm_iterations": int(deeprm["iteration"].max()), "plus_iterations": int(plus["iteration"].max()),
            "deeprm_final_mean_reward": final,
            "plus_final_mean_reward": float(plus["mean_reward"].tail(10).mean()),
            "plus_first_mean_reward": float(plus["mean_reward"].iloc[0]),
            "plus_reaches_deeprm_final_at": int(reached.iloc[0]) if len(reached) else None,
            "deeprm_median_iteration_s": float(deeprm["seconds"].median()),
            "plus_median_iteration_s": float(plus["seconds"].median())}


def figure13(brokers: dict, out: Path) -> tuple[pd.DataFrame, dict]:
    from traces.alibaba import load_alibaba_v2018
    from traces.deeprm import deeprm_jobsets_from_trace

    workload = load_alibaba_v2018(TRACE)
    trace = deeprm_jobsets_from_trace(workload, PARAMS)
    rows = [{"policy": name, **run(policy, trace.lengths, trace.sizes, trace.arrivals)}
            for name, policy in brokers.items()]
    frame = pd.DataFrame(rows)
    pyplot = plt()
    fig, (a, b) = pyplot.subplots(1, 2, figsize=(11, 4))
    a.bar(frame["policy"], frame["reward"])
    a.set_ylabel("mean total reward per jobset")
    a.set_title("(a) cumulative reward, Alibaba v2018 tasks")
    b.bar(frame["policy"], frame["turnaround"])
    b.set_ylabel("average weighted turnaround time")
    b.set_title("(b) weighted turnaround, Alibaba v2018 tasks")
    for ax in (a, b):
        ax.tick_params(axis="x", rotation=25)
    fig.tight_layout()
    fig.savefig(out / "figure13.png", dpi=120)
    pyplot.close(fig)
    return frame, {"tasks": trace.tasks, "jobsets": int(trace.lengths.shape[0]), "capped_at_15_steps": trace.capped,
                   "trace_tasks": trace.available, "skipped_rows": dict(workload.skipped), "offered_load": trace.load}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plus", type=Path, required=True, help="DeepRM_Plus's policy.pt")
    parser.add_argument("--deeprm", type=Path, required=True, help="DeepRM's policy.pt, trained on the same workload")
    parser.add_argument("--plus-log", type=Path, required=True)
    parser.add_argument("--deeprm-log", type=Path, required=True)
    parser.add_argument("--clone", type=Path, help="DeepRM_Plus's clone.json (the cloning's test accuracy)")
    parser.add_argument("--seeds", type=int, default=100, help="held-out jobsets per load (seeds 0..N-1)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)  # tiny forwards: one thread is faster, and other work shares the cores
    args.out.mkdir(parents=True, exist_ok=True)
    results = {"figure6": figure6(args.plus_log, args.deeprm_log, args.out)}
    if args.clone:
        results["cloning"] = json.loads(args.clone.read_text())
    brokers = policies(args.plus, args.deeprm)
    seeds = range(args.seeds)
    fig8 = figure8(brokers, seeds, args.out)
    results["figure8"] = fig8.to_dict("records")
    fig13, trace = figure13(policies(args.plus, args.deeprm), args.out)
    results["figure13"] = {"trace": trace, "rows": fig13.to_dict("records")}
    (args.out / "results.json").write_text(json.dumps(results, indent=2) + "\n")
    wide = fig8.pivot(index="policy", columns="load", values="turnaround").reindex(list(brokers))
    lines = ["# DeepRM_Plus results", "", f"Made by `python benchmarks/deeprm_plus_results.py` ({args.seeds} held-out "
             "jobsets per load; code job sizes, M = 10).", "", "## Figure 8: average weighted turnaround by load", "",
             "| policy | " + " | ".join(f"{100 * v:.0f} %" for v in wide.columns) + " |",
             "|---|" + "---|" * len(wide.columns)]
    lines += [f"| {name} | " + " | ".join(f"{v:.3f}" for v in row) + " |" for name, row in wide.iterrows()]
    at140 = fig8[fig8["load"] == 1.4].set_index("policy")
    lines += ["", "## Figure 9: average cycling time at 140 %", "", "| policy | cycling time | weighted turnaround |",
              "|---|---|---|"]
    lines += [f"| {name} | {row.cycling:.2f} | {row.turnaround:.3f} |" for name, row in at140.iterrows()]
    lines += ["", f"## Figure 13: Alibaba v2018 ({trace['tasks']:,} tasks in {trace['jobsets']} jobsets)", "",
              "| policy | weighted turnaround | mean total reward | dropped |", "|---|---|---|---|"]
    lines += [f"| {row.policy} | {row.turnaround:.3f} | {row.reward:.1f} | {row.dropped} |"
              for row in fig13.itertuples()]
    f6 = results["figure6"]
    lines += ["", "## Figure 6: training", "", "| | DeepRM | DeepRM_Plus |", "|---|---|---|",
              f"| iterations | {f6['deeprm_iterations']} | {f6['plus_iterations']} |",
              f"| final mean reward (last 10) | {f6['deeprm_final_mean_reward']:.1f} | "
              f"{f6['plus_final_mean_reward']:.1f} |",
              f"| median seconds per iteration | {f6['deeprm_median_iteration_s']:.2f} | "
              f"{f6['plus_median_iteration_s']:.2f} |",
              "", f"DeepRM_Plus's first mean reward: {f6['plus_first_mean_reward']:.1f}; it reaches DeepRM's final "
              f"mean reward at iteration {f6['plus_reaches_deeprm_final_at']}."]
    (args.out / "results.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
