"""Do two DeepJS agents trained apart agree on which pairs fit well? (the paper's Figure 5)

Agent A schedules a chunk greedily and records every fit machine-task pair it
saw; a sample of those pairs is scored by A and by agent B (trained on another
cluster, or other chunks), and the Pearson correlation of the two fitness
values is reported with a scatter plot. The paper found r = 0.74 between agents
trained on 5 and on 10 machines.

    python benchmarks/deepjs_fitness_correlation.py --a runs/deepjs_5.pt --b runs/deepjs_10.pt --chunk 202

Writes benchmarks/results/deepjs/deepjs_fitness_correlation.{png,json}.

It calls the engine directly, not `cloudsim.run`, because it keeps the DeepJS broker it ran (made with
``record=True``, on the cluster saved in agent A's checkpoint) to read the machine-task pairs of its trajectory,
and a run builds its broker from a name and does not hand it back.
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from agents.deepjs import DeepJS, load_policy, read_checkpoint
from cloudsim import Simulation
from benchmark_common import CLOUDSIMPY_TRACE, RESULTS
from traces import job_chunk, load_cloudsimpy



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--a", required=True, help="checkpoint of agent A (its cluster runs the chunk)")
    parser.add_argument("--b", required=True, help="checkpoint of agent B")
    parser.add_argument("--trace", type=Path, default=CLOUDSIMPY_TRACE)
    parser.add_argument("--chunk", type=int, default=202)
    parser.add_argument("--pairs", type=int, default=2000, help="pairs sampled from A's trajectory (default 2000)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    policy_a, policy_b = load_policy(args.a), load_policy(args.b)
    saved = read_checkpoint(args.a)
    cluster = saved["cluster"]
    chunk = job_chunk(load_cloudsimpy(args.trace), 10, args.chunk)
    broker = DeepJS(policy_a, record=True)
    Simulation(cluster, chunk, broker, tick=policy_a[1].tick).run()
    rows = np.concatenate(broker.trajectory.features)
    pick = np.random.default_rng(args.seed).choice(len(rows), size=min(args.pairs, len(rows)), replace=False)
    fitness_a, fitness_b = policy_a[0](rows[pick]), policy_b[0](rows[pick])
    r = float(np.corrcoef(fitness_a, fitness_b)[0, 1])
    n = len(pick)
    # Two-sided p-value of r = 0 from t = r sqrt((n-2)/(1-r^2)), normal approximation (n is large).
    t = r * math.sqrt((n - 2) / max(1e-12, 1 - r * r))
    p = math.erfc(abs(t) / math.sqrt(2))
    fig, ax = plt.subplots(figsize=(5, 5))
    ax.scatter(fitness_a, fitness_b, s=4, alpha=0.4)
    ax.set_xlabel(f"fitness by agent A ({Path(args.a).name})")
    ax.set_ylabel(f"fitness by agent B ({Path(args.b).name})")
    ax.set_title(f"{n} fit pairs of chunk {args.chunk}: r = {r:.2f}, p = {p:.1g}")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    (RESULTS / "deepjs").mkdir(parents=True, exist_ok=True)
    fig.savefig(RESULTS / "deepjs" / "deepjs_fitness_correlation.png", dpi=120)
    result = {"a": str(args.a), "b": str(args.b), "chunk": args.chunk, "pairs": n, "pearson_r": r, "p_value": p,
              "command": f"python benchmarks/deepjs_fitness_correlation.py --a {args.a} --b {args.b} "
                         f"--chunk {args.chunk}"}
    (RESULTS / "deepjs" / "deepjs_fitness_correlation.json").write_text(json.dumps(result, indent=1) + "\n")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
