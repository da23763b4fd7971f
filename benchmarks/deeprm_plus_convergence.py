"""DeepRM_Plus's convergence claim: iterations until it reaches DeepRM's final reward, on validation jobsets.

The paper says DeepRM_Plus converges 37.5 % faster than DeepRM (section V-C, Figure 6(a)). The two
trainings' own rewards cannot be compared here: DeepRM trains on 25 fixed jobsets, DeepRM_Plus on
25 fresh ones every iteration. So every kept checkpoint of both runs (``policy-NNNNN.pt``, written by
``cloudsim train ... --keep-every N``) schedules the same validation jobsets (Poisson at 140 %, seeds
100-199, as `deeprm_plus_select.py` scores them, acting by sampling), and:

* DeepRM's final level is its last checkpoint's mean total reward per jobset;
* a run *reaches* it at its first checkpoint scoring at least that, and *holds* it from the first
  checkpoint after which none scores below it;
* DeepRM_Plus is faster by 1 - (its iterations) / (DeepRM's), for each rule.

    python benchmarks/deeprm_plus_convergence.py --plus runs/deeprm-plus-fresh --deeprm runs/deeprm-poisson-140-keep

Writes benchmarks/results/deeprm_plus/convergence.{csv,json,md,png}. It drives DeepRM's batched
environment directly, not `cloudsim.run`, for the reason `deeprm_plus_select.py` gives: the checkpoints are
scored with the results' own `held_out` and `run`.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path

import pandas as pd
import torch
from tqdm import tqdm

from agents.deeprm import load_policy
from agents.kit import CheckpointError
from deeprm_plus_results import RESULTS, held_out, plt, run

PAPER_FASTER_PCT = 37.5
SNAPSHOT = re.compile(r"policy-(\d+)\.pt")


def snapshots(folder: Path) -> dict[int, Path]:
    """A training folder's kept checkpoints by iteration."""
    found = {int(m.group(1)): path for path in folder.glob("policy-*.pt") if (m := SNAPSHOT.fullmatch(path.name))}
    return dict(sorted(found.items()))


def reaches(scores: pd.Series, level: float) -> int | None:
    """The first iteration scoring at least ``level``."""
    above = scores[scores >= level]
    return int(above.index[0]) if len(above) else None


def holds(scores: pd.Series, level: float) -> int | None:
    """The first iteration from which no later one scores below ``level``."""
    below = scores[scores < level]
    if not len(below):
        return int(scores.index[0])
    after = scores[scores.index > below.index[-1]]
    return int(after.index[0]) if len(after) else None


def faster_pct(plus: int | None, deeprm: int | None) -> float | None:
    return None if plus is None or deeprm is None else 100.0 * (1.0 - plus / deeprm)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plus", type=Path, required=True, help="DeepRM_Plus's training folder (policy-NNNNN.pt)")
    parser.add_argument("--deeprm", type=Path, required=True, help="DeepRM's training folder on the same workload")
    parser.add_argument("--seeds", default="100:200", help="validation jobset seeds A:B (default 100:200)")
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    try:
        first, last = (int(v) for v in args.seeds.split(":"))
    except ValueError:
        parser.error(f"--seeds {args.seeds!r}: give A:B, whole numbers, such as 100:200")
    if last <= first or first < 100:
        parser.error(f"--seeds {args.seeds}: give a non-empty range from 100 up (0-99 are the results' held-out seeds)")
    for flag, folder in (("--deeprm", args.deeprm), ("--plus", args.plus)):
        if not folder.is_dir():
            parser.error(f"{flag} {folder}: no such folder; give a training folder of policy-NNNNN.pt")
    runs = {"DeepRM": snapshots(args.deeprm), "DeepRM_Plus": snapshots(args.plus)}
    for name, found in runs.items():
        if len(found) < 2:
            parser.error(f"{name}'s folder holds {len(found)} policy-NNNNN.pt: train it with --keep-every N")
    torch.set_num_threads(1)
    jobsets = held_out(1.4, range(first, last))
    rows = []
    try:
        for name, found in runs.items():
            for iteration, path in tqdm(found.items(), desc=name, unit="checkpoint"):
                rows.append({"run": name, "iteration": iteration, **run(load_policy(path, seed=0), *jobsets)})
    except CheckpointError as error:
        parser.error(str(error))
    except KeyboardInterrupt:
        sys.exit("stopped: nothing written")
    frame = pd.DataFrame(rows)
    rewards = {name: group.set_index("iteration")["reward"] for name, group in frame.groupby("run")}
    level = float(rewards["DeepRM"].iloc[-1])
    summary = {"validation_seeds": [first, last], "deeprm_final_reward": level,
               "deeprm_final_iteration": int(rewards["DeepRM"].index[-1]), "paper_faster_pct": PAPER_FASTER_PCT}
    for rule, find in (("reaches", reaches), ("holds", holds)):
        at = {name: find(scores, level) for name, scores in rewards.items()}
        summary[rule] = {"deeprm_at": at["DeepRM"], "plus_at": at["DeepRM_Plus"],
                         "plus_faster_pct": faster_pct(at["DeepRM_Plus"], at["DeepRM"])}
    args.out.mkdir(parents=True, exist_ok=True)
    frame.to_csv(args.out / "convergence.csv", index=False)
    (args.out / "convergence.json").write_text(json.dumps(summary, indent=2) + "\n")
    (args.out / "convergence.md").write_text(report(summary, args))
    pyplot = plt()
    fig, ax = pyplot.subplots(figsize=(7, 4))
    for name, scores in rewards.items():
        ax.plot(scores.index, scores.values, marker="o", markersize=3, lw=1, label=name)
    ax.axhline(level, color="grey", lw=0.8, ls=":", label="DeepRM's final")
    ax.set_xlabel("training iteration")
    ax.set_ylabel("mean total reward per validation jobset")
    ax.set_title(f"Convergence at 140 %: {last - first} validation jobsets")
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.out / "convergence.png", dpi=120)
    pyplot.close(fig)
    print((args.out / "convergence.md").read_text())


def report(summary: dict, args) -> str:
    def pct(value):
        return "not reached" if value is None else f"{value:+.1f} %"

    lines = ["# DeepRM_Plus's convergence against DeepRM", "",
             f"Made by `python benchmarks/deeprm_plus_convergence.py --plus {args.plus} --deeprm {args.deeprm}` "
             f"(validation seeds {args.seeds}, 140 %).", "",
             f"DeepRM's final level: mean total reward {summary['deeprm_final_reward']:.2f} per jobset "
             f"(iteration {summary['deeprm_final_iteration']}).", "",
             "| rule | DeepRM at | DeepRM_Plus at | DeepRM_Plus faster (paper: 37.5 %) |", "|---|---|---|---|"]
    for rule in ("reaches", "holds"):
        row = summary[rule]
        lines.append(f"| {rule} | {row['deeprm_at']} | {row['plus_at']} | {pct(row['plus_faster_pct'])} |")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    main()
