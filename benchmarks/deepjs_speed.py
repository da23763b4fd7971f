"""How fast DeepJS decides and trains on this machine, against the heuristics on the same chunks.

Two parts, each a median over repeats:

* decisions: DeepJS (greedy, the shipped or a given checkpoint), first-fit and
  Tetris replay the same CloudSimPy chunks in tick mode; decisions per second
  and instances per second of the simulation alone. First-fit answers with a
  count, so it makes far fewer decisions than the one-instance-per-decision
  brokers.
* training: one chunk of Algorithm 2 (10 iterations x 12 trajectories, then
  the updates) with 1 worker and with every core, wall time split into
  rollouts and updates.

    python benchmarks/deepjs_speed.py [--checkpoint PATH] [--chunks 0:5] [--repeats 3]

Writes benchmarks/results/deepjs_speed.{md,json}.

It calls the engine and `DeepJSTrainer` directly, not `cloudsim.run`, because it times `Simulation.run` alone
(the broker made beforehand) and the trainer's `collect` and `update` apart, which ``cloudsim train deepjs``
times only together, per iteration.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

import numpy as np

from agents import FirstFit, Tetris
from agents.deepjs import DeepJS, DeepJSConfig, DeepJSTrainer, load_policy
from cloudsim import ClusterSpec, Simulation
from benchmark_common import CLOUDSIMPY_TRACE, RESULTS
from traces import job_chunk, load_cloudsimpy

CLUSTER = ClusterSpec.uniform(5, {"cpu": 64, "memory": 1, "disk": 1})


def decision_speed(jobs, chunks, checkpoint, repeats) -> list[dict]:
    policy = load_policy(checkpoint)
    brokers = {"first-fit": FirstFit, "tetris": Tetris, "deepjs": lambda: DeepJS(policy)}
    rows = []
    for index in chunks:
        chunk = job_chunk(jobs, 10, index)
        for name, make in brokers.items():
            runs = []
            for _ in range(repeats):
                sim = Simulation(CLUSTER, chunk, make(), tick=1)
                started = time.perf_counter()
                result = sim.run()
                runs.append((time.perf_counter() - started, result))
            wall = statistics.median(w for w, _ in runs)
            summary = runs[0][1].summary
            rows.append({"chunk": index, "broker": name, "makespan": summary["makespan"],
                         "instances": summary["instances"], "decisions": summary["decisions"], "sim_s": wall,
                         "decisions_per_s": summary["decisions"] / wall,
                         "instances_per_s": summary["instances"] / wall})
    return rows


def training_speed(jobs, chunk_index, repeats) -> list[dict]:
    chunk = job_chunk(jobs, 10, chunk_index)
    rows = []
    for workers in sorted({1, os.cpu_count() or 1}):
        walls, rollouts, updates = [], [], []
        for _ in range(repeats):
            trainer = DeepJSTrainer(DeepJSConfig(), CLUSTER, workers=workers)
            trainer.fit_normaliser(jobs[:2000])
            rollout = update = 0.0
            started = time.perf_counter()
            for iteration in range(trainer.config.iterations):
                t0 = time.perf_counter()
                trajectories = trainer.collect(chunk, [iteration * 100 + i for i in range(trainer.config.trajectories)])
                t1 = time.perf_counter()
                trainer.update(trajectories)
                rollout += t1 - t0
                update += time.perf_counter() - t1
            walls.append(time.perf_counter() - started)
            rollouts.append(rollout)
            updates.append(update)
            trainer.close()
        rows.append({"chunk": chunk_index, "workers": workers, "chunk_s": statistics.median(walls),
                     "rollouts_s": statistics.median(rollouts), "updates_s": statistics.median(updates),
                     "instances": sum(j.instances for j in chunk)})
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=CLOUDSIMPY_TRACE)
    parser.add_argument("--checkpoint", help="DeepJS checkpoint (default: the shipped one)")
    parser.add_argument("--chunks", default="202:207", help="chunks for the decision timing (default 202:207)")
    parser.add_argument("--train-chunk", type=int, default=0, help="chunk for the training timing (default 0)")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    jobs = load_cloudsimpy(args.trace)
    first, last = (int(x) for x in args.chunks.split(":"))
    decisions = decision_speed(jobs, range(first, last), args.checkpoint, args.repeats)
    training = training_speed(jobs, args.train_chunk, args.repeats)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "deepjs_speed.json").write_text(json.dumps({"decisions": decisions, "training": training}, indent=1))
    lines = ["# DeepJS speed", "", f"Command: `python benchmarks/deepjs_speed.py --chunks {args.chunks} "
             f"--train-chunk {args.train_chunk} --repeats {args.repeats}`", "",
             f"{os.cpu_count()} cores; medians of {args.repeats} runs; simulation time only (tick 1, 5 machines).", "",
             "| chunk | broker | makespan | instances | decisions | sim s | decisions/s | instances/s |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['chunk']} | {r['broker']} | {r['makespan']:g} | {r['instances']:,} | {r['decisions']:,} | "
              f"{r['sim_s']:.3f} | {r['decisions_per_s']:,.0f} | {r['instances_per_s']:,.0f} |" for r in decisions]
    for broker in ("first-fit", "tetris", "deepjs"):
        rates = [r["decisions_per_s"] for r in decisions if r["broker"] == broker]
        lines.append(f"\nmedian decisions/s, {broker}: {np.median(rates):,.0f}")
    lines += ["", "## One chunk of training (10 iterations x 12 trajectories)", "",
              "| chunk | instances | workers | chunk s | rollouts s | updates s |", "|---|---|---|---|---|---|"]
    lines += [f"| {r['chunk']} | {r['instances']:,} | {r['workers']} | {r['chunk_s']:.1f} | {r['rollouts_s']:.1f} | "
              f"{r['updates_s']:.1f} |" for r in training]
    (RESULTS / "deepjs_speed.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
