"""DeepRM and DeepRM_Plus as brokers of the core against the same policies in DeepRM's own environment.

The same held-out jobsets (seeds 0.. of DeepRM's code generator, never trained on) run twice:

* in DeepRM's environment (`cloudsim.engine.envs.deeprm.DeepRMBatch`), the policy and SJF as DeepRM's code defines
  them (over the M visible slots);
* replayed in the event-driven core on DeepRM's cluster (one machine of ``res_slot`` units per resource):
  each job that arrives at step t is a task of one instance submitted at t, its length the duration, its
  units the demand; the learned brokers as `agents.deeprm.broker.DeepRMBroker`, SJF over a window of the same
  M tasks.

The table gives each one's mean job slowdown over all jobs of all jobsets, side by side.

    python benchmarks/deeprm_core.py --seeds 20 --load 0.7

It drives DeepRM's batched environment and the engine directly, not `cloudsim.run`, because it replays the very
jobsets of DeepRM's environment in the core (converted here by `core_jobs`), which no workload of the run layer
makes, and pools every job's slowdown over the jobsets.
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import replace

import numpy as np

from agents import Windowed, make_broker, make_deeprm_broker
from agents.deeprm.agent import shipped_checkpoint, slowdowns
from agents.deeprm.broker import load_numpy_policy
from benchmark_common import RESULTS, code_version
from cloudsim import ClusterSpec, JobSpec, TaskSpec, simulate
from cloudsim.engine.envs.deeprm import DeepRMBatch, jobsets_at_load

OUT = RESULTS / "deeprm_core"
AGENTS = {"deeprm": ("bernoulli", 0.7), "deeprm-plus": ("poisson", 1.4)}
"""Each learned broker with the arrivals and load of its paper's held-out comparison."""


def core_jobs(lengths: np.ndarray, sizes: np.ndarray, arrivals: np.ndarray | None) -> list[JobSpec]:
    """One jobset as the core's jobs: DeepRM's code admits the job of index t at time t (t >= 1)."""
    jobs = []
    for t, (length, size) in enumerate(zip(lengths, sizes)):
        at = t if arrivals is None else arrivals[t]
        if length <= 0 or (arrivals is None and t == 0):
            continue
        demand = {"cpu": float(size[0]), "memory": float(size[1])}
        jobs.append(JobSpec(len(jobs), float(at), (TaskSpec(0, 1, demand, float(length)),)))
    return jobs


def in_deeprm(policy, params, lengths, sizes, arrivals) -> np.ndarray:
    batch = DeepRMBatch(params, lengths, sizes, arrivals)
    while not batch.done.all():
        batch.step(policy(batch))
    return slowdowns(batch)


def in_core(broker, params, jobs) -> np.ndarray:
    cluster = ClusterSpec.uniform(1, {"cpu": float(params.res_slot), "memory": float(params.res_slot)})
    return simulate(cluster, jobs, broker).jobs.slowdown.to_numpy()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20, help="held-out jobsets (seeds 0..N-1; default 20)")
    args = parser.parse_args()
    if args.seeds < 1:
        parser.error("--seeds must be at least 1")
    rows = []
    for agent, (arrivals_kind, load) in AGENTS.items():
        params = load_numpy_policy(str(shipped_checkpoint(agent=agent))).params
        started = time.perf_counter()
        result = {}
        for where, name in (("deeprm env", "sjf"), ("deeprm env", agent), ("core", "sjf"), ("core", agent)):
            pooled = []
            for seed in range(args.seeds):
                lengths, sizes, arrivals = jobsets_at_load(arrivals_kind, seed, 1, params, load)
                if where == "deeprm env":
                    policy = make_deeprm_broker(name, seed=seed) if name != "sjf" else make_deeprm_broker("sjf")
                    pooled.append(in_deeprm(policy, params, lengths, sizes, arrivals))
                else:
                    jobs = core_jobs(lengths[0], sizes[0], None if arrivals is None else arrivals[0])
                    broker = (make_broker(name, seed=seed) if name != "sjf"
                              else Windowed(make_broker("sjf"), params.slots))
                    pooled.append(in_core(broker, replace(params), jobs))
            result[(where, name)] = float(np.mean(np.concatenate(pooled)))
        rows.append({"agent": agent, "arrivals": arrivals_kind, "load": load, "seeds": args.seeds,
                     "sjf_deeprm_env": result[("deeprm env", "sjf")], "agent_deeprm_env": result[("deeprm env", agent)],
                     "sjf_core": result[("core", "sjf")], "agent_core": result[("core", agent)],
                     "wall_s": round(time.perf_counter() - started, 1)})
        print(json.dumps(rows[-1]), flush=True)
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "results.json").write_text(json.dumps({"code": code_version(), "rows": rows}, indent=1) + "\n")
    lines = ["| broker | jobsets | load | SJF, DeepRM's env | broker, DeepRM's env | SJF (window M), core "
             "| broker, core |",
             "|---|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(f"| {r['agent']} | {r['seeds']} ({r['arrivals']}) | {r['load']:.0%} | {r['sjf_deeprm_env']:.3f} | "
                     f"{r['agent_deeprm_env']:.3f} | {r['sjf_core']:.3f} | {r['agent_core']:.3f} |")
    (OUT / "results.md").write_text(f"Mean job slowdown, held-out seeds 0-{args.seeds - 1} "
                                    f"(`python benchmarks/deeprm_core.py --seeds {args.seeds}`, {code_version()})\n\n"
                                    + "\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
