"""Tetris*'s knob on DeepRM's workload: average job slowdown for knobs 0.1-0.9 beside SJF and Packer.

DeepRM does not give the knob that mixes packing and shortness in Tetris*; this
sweep shows how much the choice matters. Writes results/tetris_star_knob.md.

    python benchmarks/tetris_star_knob.py [--seeds 30]

It calls the engine directly, not `cloudsim.run`, because it runs Tetris* at five knobs side by side on each
workload, and a comparison names each broker once (``--broker-options`` gives one knob per broker).
"""

from __future__ import annotations

import argparse
from concurrent.futures import ProcessPoolExecutor

import numpy as np

from agents import Packer, ShortestJobFirst, TetrisStar
from benchmark_common import RESULTS, code_version
from cloudsim import simulate
from traces import generate

LOADS = (0.5, 0.9, 1.3, 1.7)
KNOBS = (0.1, 0.3, 0.5, 0.7, 0.9)


def brokers() -> dict:
    return {"sjf": ShortestJobFirst(), "packer": Packer(), **{f"knob {k}": TetrisStar(k) for k in KNOBS}}


def slowdowns(load_seed: tuple[float, int]) -> dict[str, float]:
    load, seed = load_seed
    jobs, cluster = generate("deeprm", None, seed=seed, load=load)
    return {name: simulate(cluster, jobs, broker).summary["avg_job_slowdown"] for name, broker in brokers().items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=30)
    args = parser.parse_args()
    cases = [(load, seed) for load in LOADS for seed in range(args.seeds)]
    with ProcessPoolExecutor() as pool:
        results = list(pool.map(slowdowns, cases, chunksize=8))
    names = list(brokers())
    lines = [f"Average job slowdown on DeepRM's workload (50 jobs, one pool of 10 units), mean of {args.seeds} "
             f"seeds; `python benchmarks/tetris_star_knob.py --seeds {args.seeds}` ({code_version()}).", "",
             "| load | " + " | ".join(names) + " |", "|---" * (len(names) + 1) + "|"]
    for load in LOADS:
        rows = [r for (case_load, _), r in zip(cases, results) if case_load == load]
        means = {n: float(np.mean([r[n] for r in rows])) for n in names}
        best = min(means, key=means.get)
        lines.append(f"| {load:.0%} | " + " | ".join(f"**{v:.3f}**" if n == best else f"{v:.3f}"
                                                    for n, v in means.items()) + " |")
    text = "\n".join(lines) + "\n"
    (RESULTS / "tetris_star_knob.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
