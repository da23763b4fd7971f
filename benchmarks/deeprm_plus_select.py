"""Choose a DeepRM_Plus (or DeepRM) checkpoint on validation jobsets, never on the held-out ones.

Every checkpoint given (a training's saved ``policy.pt`` copies, for example one per
25 iterations) schedules the same validation jobsets: Poisson arrivals at
``--load``, one jobset drawn from each seed in ``--seeds`` (default 100-199;
`deeprm_plus_results.py` reports seeds 0-99 and training draws from 1,000 up),
acting by sampling as in the results. Prints and writes the mean weighted
turnaround of each, best first.

    python benchmarks/deeprm_plus_select.py runs/plus/snap_*.pt agents/checkpoints/deeprm-plus.pt \
        --out benchmarks/results/deeprm_plus/training/selection.csv

It drives DeepRM's batched environment directly, not `cloudsim.run`, because it scores each checkpoint with
`deeprm_plus_results.py`'s own `held_out` and `run`, so that the choice is measured exactly as the results are.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pandas as pd
import torch

from agents.deeprm import load_policy
from agents.kit import CheckpointError
from deeprm_plus_results import held_out, run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("checkpoints", nargs="+", type=Path)
    parser.add_argument("--seeds", default="100:200", help="validation jobset seeds A:B (default 100:200)")
    parser.add_argument("--load", type=float, default=1.4, help="the jobsets' load (default 1.4, the training's)")
    parser.add_argument("--out", type=Path, help="also write the table here (CSV)")
    args = parser.parse_args()
    try:
        first, last = (int(v) for v in args.seeds.split(":"))
    except ValueError:
        parser.error(f"--seeds {args.seeds!r}: give A:B, whole numbers, such as 100:200")
    if last <= first:
        parser.error(f"--seeds {args.seeds}: no seeds in that range")
    if first < 100:
        parser.error(f"--seeds {args.seeds} reaches below 100: seeds 0-99 are the held-out jobsets of the results")
    torch.set_num_threads(1)
    jobsets = held_out(args.load, range(first, last))
    try:
        policies = {path: load_policy(path, seed=0) for path in args.checkpoints}
    except CheckpointError as error:
        parser.error(str(error))
    rows = [{"checkpoint": str(path), **run(policy, *jobsets)} for path, policy in policies.items()]
    table = pd.DataFrame(rows).sort_values("turnaround")
    print(table.to_string(index=False))
    if args.out:
        table.to_csv(args.out, index=False)


if __name__ == "__main__":
    main()
