"""Beyond the fill experiment: the GPU cluster replayed over time, every policy on the same pods.

    python benchmarks/gpu_replay.py                     # the default pod list on the 1,213 GPU nodes
    python benchmarks/gpu_replay.py --speedup 2         # the same pods arriving twice as fast

Each pod arrives at its ``creation_time`` and holds its resources for its lifetime in the trace (``deletion_time
- scheduled_time``; a pod the trace never scheduled keeps the time it stayed in the queue, see `traces.openb`);
what does not fit waits in the queue (first come, first served among those that fit: each policy places
the first waiting pod that fits somewhere; first-fit and tetris are the heuristics of CPU clusters, with the
engine's default device rule). ``--speedup K`` divides the arrival times by K (lifetimes unchanged), which
loads the cluster K times as much: the trace's own load never queues a pod on these nodes. Every policy is
replayed through the engine; after each decision round the allocated GPU and the fragmentation
(`cloudsim.engine.fragmentation.GpuSampler`, against the pod list's target workload) are sampled. Writes into
benchmarks/results/gpu_replay/: ``replay.md`` (per policy: mean and peak allocated GPU, mean fragmentation over
time, pods that waited, mean and 95th-percentile wait), ``replay.csv``, and ``over_time.png`` (allocated GPU
and fragmentation over time).

It calls the engine directly, not `cloudsim.run`, because it divides the arrival times by ``--speedup`` (the run
layer's ``--load`` scales a trace to an offered load instead) and averages the `GpuSampler`'s curves up to the
last arrival, where a run's summary averages them up to the makespan and keeps no curve.
"""

from __future__ import annotations

import argparse
import sys
import time
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import GPU_POLICIES, make_broker  # noqa: E402
from agents.heuristics.gpu import target_options  # noqa: E402
from cloudsim import Simulation  # noqa: E402
from cloudsim.engine.fragmentation import GpuSampler, TargetWorkload  # noqa: E402
from cloudsim.run.leaderboard import GPU_DATA  # noqa: E402
from cloudsim.run.output import pyplot, save_figure, write_text_atomically  # noqa: E402
from cloudsim.engine.runner import Runner  # noqa: E402
from traces.openb import load_openb, machines_openb  # noqa: E402
from traces.data import data_folder  # noqa: E402

DATA = data_folder() / GPU_DATA
OUT = ROOT / "benchmarks" / "results" / "gpu_replay"
POLICIES = tuple(GPU_POLICIES) + ("first-fit", "tetris")
DAY = 86_400.0


def replay_one(args: tuple[str, float]) -> dict:
    policy, speedup = args
    workload = load_openb(DATA / "openb_pod_list_default.csv")
    cluster = machines_openb(DATA / "openb_node_list_gpu_node.csv")
    jobs = [replace(job, submit_time=job.submit_time / speedup) for job in workload.jobs]
    target = TargetWorkload.of(jobs)
    broker = make_broker(policy, seed=0, **target_options(policy, target))
    started = time.perf_counter()
    sampler = GpuSampler(cluster, target)
    result = Simulation(cluster, jobs, broker, on_round=sampler).run()
    wall = time.perf_counter() - started
    times, allocated, fragmentation = sampler.curves()
    # Averages over the arrivals' span (the last pods' tails would dilute them): each sample holds until the next.
    last = max(job.submit_time for job in jobs)
    span = np.clip(np.diff(np.append(times, result.summary["makespan"])), 0, None)
    span = np.where(times <= last, np.minimum(span, np.maximum(last - times, 0)), 0.0)
    wait = result.jobs["wait"].to_numpy() if "wait" in result.jobs else result.tasks["wait"].to_numpy()
    return {"policy": policy, "speedup": speedup, "pods": len(jobs),
            "finished": result.summary["instances_finished"],
            "mean_allocated_gpu_pct": float((allocated * span).sum() / span.sum()),
            "peak_allocated_gpu_pct": float(allocated.max()),
            "mean_fragmentation_gpu_pct": float((fragmentation * span).sum() / span.sum()),
            "fragmentation_at_last_arrival_pct": float(fragmentation[times <= last][-1]),
            "pods_waited": int((wait > 0).sum()), "mean_wait_s": float(wait.mean()),
            "p95_wait_s": float(np.percentile(wait, 95)), "wall_s": round(wall, 2), "last_arrival_s": last,
            "curve": (times.tolist(), allocated.tolist(), fragmentation.tolist())}


def _markdown(table: pd.DataFrame) -> str:
    cells = [[f"{v:.2f}" if isinstance(v, float) else str(v) for v in row] for row in table.itertuples(index=False)]
    return "\n".join(["| " + " | ".join(table.columns) + " |", "|" + "---|" * len(table.columns)]
                     + ["| " + " | ".join(row) + " |" for row in cells])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--speedup", type=float, default=1.0, help="divide arrival times by this (default 1)")
    parser.add_argument("--policies", default=",".join(POLICIES))
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    policies = args.policies.split(",")
    unknown = [p for p in policies if p not in POLICIES]
    if unknown or not args.speedup > 0:
        parser.error(f"unknown {', '.join(unknown)}" if unknown else "--speedup must be > 0")
    if not (DATA / "openb_pod_list_default.csv").is_file():
        parser.error(f"the openb files are not in {DATA}; set CLOUDSIM_DATA to the folder holding alibaba/gpu-v2023/")
    args.out.mkdir(parents=True, exist_ok=True)
    with Runner("local") as runner:
        rows = list(runner.map(replay_one, [(p, args.speedup) for p in policies], desc="replays", unit="policy"))
    label = f"speedup{args.speedup:g}"
    table = pd.DataFrame([{k: v for k, v in r.items() if k != "curve"} for r in rows])
    table.to_csv(args.out / f"replay_{label}.csv", index=False)
    lines = [f"# The default pod list replayed over time (arrivals x{args.speedup:g})", "",
             f"`python benchmarks/gpu_replay.py --speedup {args.speedup:g}`: {rows[0]['pods']} pods on the 1,213 GPU "
             "nodes; allocated GPU and fragmentation (% of the cluster's GPUs) averaged over time from the first "
             "arrival to the last; waits in seconds.",
             "", _markdown(table.drop(columns=["speedup"])), ""]
    write_text_atomically(args.out / f"replay_{label}.md", "\n".join(lines))
    plt = pyplot()
    fig, axes = plt.subplots(2, 1, figsize=(10, 7), sharex=True)
    last = rows[0]["last_arrival_s"]
    unit, scale = ("days", DAY) if last > 3 * DAY else ("hours", 3600.0)
    for r in rows:  # from the first arrival to the last (the pods' tails after it would flatten the picture)
        times, allocated, fragmentation = (np.array(c) for c in r["curve"])
        shown = times <= last
        axes[0].step(times[shown] / scale, allocated[shown], where="post", label=r["policy"], linewidth=0.8)
        axes[1].step(times[shown] / scale, fragmentation[shown], where="post", label=r["policy"], linewidth=0.8)
    axes[0].set_ylabel("allocated GPU (%)")
    axes[1].set_ylabel("fragmentation (% of GPUs)")
    axes[1].set_xlabel(f"time ({unit}), until the last arrival")
    for ax in axes:
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7, ncol=4)
    axes[0].set_title(f"default pod list over time, arrivals x{args.speedup:g}")
    fig.tight_layout()
    save_figure(fig, args.out / f"over_time_{label}.png")
    print(table.drop(columns=["speedup"]).to_string(index=False))


if __name__ == "__main__":
    main()
