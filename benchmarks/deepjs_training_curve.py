"""DeepJS while it trains (the paper's Figure 4): each chunk's makespan before training on it, against the heuristics.

The training log in a DeepJS checkpoint holds, per chunk, the greedy policy's
makespan recorded before the agent trained on that chunk (so on a chunk it had
never seen). This script replays first-fit and Tetris on the same chunks and
plots (heuristic - DeepJS) per chunk, with a running count of wins and losses.

    python benchmarks/deepjs_training_curve.py --checkpoint runs/deepjs/policy.pt

Writes benchmarks/results/deepjs/deepjs_training_curve.{png,md,json}.

It calls the engine directly, not `cloudsim.run`, because it replays the chunks on the cluster saved in the
checkpoint (its machines as they were, which may be drawn from a table with capacities of their own) and with
its tick, which no ``--machines``/``--capacity`` of the run layer restates.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from agents import FirstFit, Tetris
from agents.deepjs import read_checkpoint
from cloudsim import simulate
from benchmark_common import CLOUDSIMPY_TRACE, RESULTS
from traces import job_chunk, load_cloudsimpy



def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--checkpoint", required=True, help="a checkpoint written by `cloudsim train deepjs`")
    parser.add_argument("--trace", type=Path, default=CLOUDSIMPY_TRACE)
    parser.add_argument("--chunk-size", type=int, default=10)
    args = parser.parse_args()
    saved = read_checkpoint(args.checkpoint)
    cluster = saved["cluster"]
    jobs = load_cloudsimpy(args.trace)
    tick = saved["config"].tick
    rows = []
    for entry in saved["log"]:
        chunk = job_chunk(jobs, args.chunk_size, entry["chunk"])
        rows.append({"chunk": entry["chunk"], "deepjs": entry["makespan_before"],
                     "first-fit": simulate(cluster, chunk, FirstFit(), tick=tick).makespan,
                     "tetris": simulate(cluster, chunk, Tetris(), tick=tick).makespan})
    chunks = np.array([r["chunk"] for r in rows])
    summary = {}
    fig, ax = plt.subplots(figsize=(11, 4))
    for baseline in ("first-fit", "tetris"):
        diff = np.array([r[baseline] - r["deepjs"] for r in rows])
        summary[baseline] = {"chunks": len(diff), "lower": int((diff > 0).sum()), "equal": int((diff == 0).sum()),
                             "higher": int((diff < 0).sum()), "mean_difference": float(diff.mean())}
        ax.plot(chunks, diff, marker=".", linewidth=0.8, label=f"{baseline} - DeepJS")
    ax.axhline(0, color="black", linewidth=0.8)
    ax.set_xlabel("training chunk (makespan recorded before training on it)")
    ax.set_ylabel("makespan difference (above 0: DeepJS sooner)")
    ax.set_title("DeepJS during sliding-chunk training, against first-fit and Tetris")
    ax.legend()
    ax.grid(alpha=0.3)
    fig.tight_layout()
    (RESULTS / "deepjs").mkdir(parents=True, exist_ok=True)
    fig.savefig(RESULTS / "deepjs" / "deepjs_training_curve.png", dpi=120)
    (RESULTS / "deepjs" / "deepjs_training_curve.json").write_text(
        json.dumps({"rows": rows, "summary": summary}, indent=1))
    lines = ["# DeepJS during training", "", f"Command: `python benchmarks/deepjs_training_curve.py --checkpoint "
             f"{args.checkpoint}`", "",
             f"{len(rows)} training chunks; DeepJS's makespan on each chunk before it trained on it.",
             "", "| baseline | chunks | DeepJS lower | equal | higher | mean (baseline - DeepJS) |",
             "|---|---|---|---|---|---|"]
    lines += [f"| {b} | {s['chunks']} | {s['lower']} | {s['equal']} | {s['higher']} | {s['mean_difference']:.1f} |"
              for b, s in summary.items()]
    (RESULTS / "deepjs" / "deepjs_training_curve.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
