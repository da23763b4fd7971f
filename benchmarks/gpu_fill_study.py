"""The whole "fill the cluster" study of Weng et al. (USENIX ATC 2023) on this machine: 6 policies x 17 workloads
x 10 seeds = 1,020 fill runs on the 1,213 GPU nodes, through the runner (every core).

    python benchmarks/gpu_fill_study.py                      # all of it (resumes where a stopped study ended)
    python benchmarks/gpu_fill_study.py --seeds 2 --workloads default,gpushare40
    python benchmarks/gpu_fill_study.py --workloads default --policies fgd,fgd-exact --out .../gpu_fill/exact

Writes into benchmarks/results/gpu_fill/: ``runs.jsonl`` (one line per run, appended as runs finish: a stopped
study resumes from it), ``study.csv`` (one row per run: failed pods, unallocated GPU, fragmentation and its rate
at 100 % arrived, wall time, the worker's peak memory), ``default_curves.parquet``, ``study.md`` (per workload
the mean unallocated GPU at 100 % per policy and how many fewer FGD leaves than each other policy; the run
times), ``default_unallocated.png`` (the paper's Figure 9a: unallocated GPU against arrived workload, median and
25-75 % band over seeds) and ``variants.png`` (bars at 100 % for the four families of variants).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import GPU_POLICIES, GPU_VARIANTS  # noqa: E402
from cloudsim.run.config.compare import MAX_FILL  # noqa: E402
from cloudsim.run.compare_fill import AT, FillSpec, curves_frame, plot_fill_curves, run_fill  # noqa: E402
from cloudsim.run.leaderboard import GPU_DATA  # noqa: E402
from cloudsim.run.output import pyplot, save_figure, write_text_atomically  # noqa: E402
from cloudsim.engine.runner import Runner  # noqa: E402
from traces.data import data_folder  # noqa: E402

DATA = data_folder() / GPU_DATA
OUT = ROOT / "benchmarks" / "results" / "gpu_fill"
FAMILIES = {
    "gpushare": ("gpushare40", "gpushare60", "gpushare80", "gpushare100"),
    "multigpu": ("multigpu20", "multigpu30", "multigpu40", "multigpu50"),
    "gpuspec": ("gpuspec10", "gpuspec20", "gpuspec25", "gpuspec33"),
    "cpu": ("cpu050", "cpu100", "cpu200", "cpu250"),
}
WORKLOADS = ("default",) + tuple(w for family in FAMILIES.values() for w in family)
POLICIES = tuple(GPU_POLICIES)


def one(spec_and_workload: tuple[FillSpec, str]) -> dict:
    spec, workload = spec_and_workload
    row = run_fill(spec)
    row["workload"], row["fill"] = workload, spec.factor
    row["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return row


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=10, help="seeds 0..N-1 (default 10)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS), help="pod lists, comma-separated")
    parser.add_argument("--policies", default=",".join(POLICIES), help="brokers, comma-separated")
    parser.add_argument("--fill", type=float, default=1.3, help="inflation factor (default 1.3)")
    parser.add_argument("--workers", type=int, default=None, help="processes (default every core)")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args()
    args.workloads, args.policies = args.workloads.split(","), args.policies.split(",")
    unknown = [w for w in args.workloads if w not in WORKLOADS] + [p for p in args.policies
                                                                   if p not in POLICIES and p not in GPU_VARIANTS]
    if unknown or args.seeds < 1 or not 0 < args.fill <= MAX_FILL:
        parser.error(f"unknown {', '.join(unknown)}" if unknown
                     else f"--seeds must be >= 1 and --fill in (0, {MAX_FILL:g}]")
    missing = [w for w in args.workloads if not (DATA / f"openb_pod_list_{w}.csv").is_file()]
    if missing or not (DATA / "openb_node_list_gpu_node.csv").is_file():
        parser.error(f"the openb files are not in {DATA} (missing: {', '.join(missing) or 'the node list'}); "
                     "set CLOUDSIM_DATA to the folder holding alibaba/gpu-v2023/")
    return args


def report(rows: list[dict], out: Path, seeds: int, fill: float, wall: float, ran: int, workers: int | None) -> None:
    runs = pd.DataFrame([{k: v for k, v in r.items() if not isinstance(v, dict)} |
                         {f"{c}_at_{AT}": r[c].get(AT, np.nan) for c in ("unallocated_gpu_pct", "fragmentation_gpu_pct",
                                                                         "fragmentation_rate")} for r in rows])
    runs = runs.sort_values(["workload", "broker", "seed"])
    runs.to_csv(out / "study.csv", index=False)
    default = [r for r in rows if r["workload"] == "default"]
    lines = [f"# The fill study: {len(runs)} runs", "",
             f"`python benchmarks/gpu_fill_study.py` ({seeds} seed(s) per policy and workload, "
             f"pods inflated to {fill:g} "
             f"x the 6,212 GPUs of the 1,213 GPU nodes). Unallocated GPU (% of the cluster's) at {AT} % arrived, "
             "mean over seeds; the last columns: how many fewer GPUs FGD leaves unallocated than each other policy.",
             ""]
    table = runs.pivot_table(index="workload", columns="broker", values=f"unallocated_gpu_pct_at_{AT}",
                             aggfunc="mean").reindex([w for w in WORKLOADS if w in set(runs["workload"])])
    policies = [p for p in (*POLICIES, *GPU_VARIANTS) if p in table.columns]
    others = [p for p in policies if p != "fgd"]
    lines.append("| workload | " + " | ".join(policies) + (" | " + " | ".join(f"FGD vs {p}" for p in others)
                                                           if "fgd" in policies else "") + " |")
    lines.append("|---" * (1 + len(policies) + (len(others) if "fgd" in policies else 0)) + "|")
    for workload, row in table.iterrows():
        cells = [f"{row[p]:.2f}" for p in policies]
        if "fgd" in policies:
            cells += [f"{100 * (1 - row['fgd'] / row[p]):.0f} % fewer" if row[p] > 0 else "-" for p in others]
        lines.append(f"| {workload} | " + " | ".join(cells) + " |")
    best = table[policies].idxmin(axis=1)
    lines += ["", f"Fewest unallocated at {AT} %: " + ", ".join(f"{w}: {b}" for w, b in best.items()), "",
              "## Time and memory", "",
              f"- {len(runs)} runs; their run times add up to {runs['wall_s'].sum() / 60:.1f} min, "
              f"{runs['wall_s'].sum() / 60 / (workers or os.cpu_count()):.1f} min over {workers or os.cpu_count()} "
              f"worker(s); this invocation ran {ran} of them in {wall / 60:.1f} min "
              f"(median run {runs['wall_s'].median():.2f} s, slowest {runs['wall_s'].max():.2f} s; a run's time "
              "runs from the loaded lists to its curves: shuffling, inflating, every pod offered and measured)",
              "- median run per policy (s): " + ", ".join(f"{p} {runs[runs['broker'] == p]['wall_s'].median():.2f}"
                                                         for p in policies),
              f"- peak memory of a worker: {runs['peak_rss_mb'].max():.0f} MB", ""]
    write_text_atomically(out / "study.md", "\n".join(lines))
    if default:
        curves = curves_frame(default)
        curves.to_parquet(out / "default_curves.parquet", index=False)
        plot_fill_curves(curves, out / "default_unallocated.png",
                         f"default pod list, 1,213 GPU nodes: median and 25-75 % over {seeds} seed(s)", low=75)
    families = {f: [w for w in ws if w in table.index] for f, ws in FAMILIES.items()}
    families = {f: ws for f, ws in families.items() if ws}
    if families:
        plt = pyplot()
        fig, axes = plt.subplots(1, len(families), figsize=(4.5 * len(families), 4), squeeze=False)
        for ax, (family, workloads) in zip(axes.flat, families.items()):
            width = 0.8 / len(policies)
            for k, policy in enumerate(policies):
                ax.bar(np.arange(len(workloads)) + k * width, table.loc[workloads, policy], width, label=policy)
            ax.set_xticks(np.arange(len(workloads)) + 0.4 - width / 2, workloads, rotation=30, fontsize=8)
            ax.set_title(family)
            ax.set_ylabel(f"unallocated GPU at {AT} % arrived (%)")
            ax.grid(axis="y", alpha=0.3)
        axes.flat[0].legend(fontsize=7)
        fig.tight_layout()
        save_figure(fig, out / "variants.png")


def main() -> None:
    args = arguments()
    args.out.mkdir(parents=True, exist_ok=True)
    log = args.out / "runs.jsonl"
    done = {}
    if log.exists():
        for line in log.read_text().splitlines():
            try:
                row = json.loads(line)
            except ValueError:
                continue  # a line cut by an interruption: that run runs again
            # (rows written before the factor was recorded were all made at 1.3, the paper's)
            done[(row["workload"], row["broker"], row["seed"], row.get("fill", 1.3))] = row
    nodes = str(DATA / "openb_node_list_gpu_node.csv")
    todo = [(FillSpec(str(DATA / f"openb_pod_list_{w}.csv"), nodes, p, s, args.fill), w)
            for w in args.workloads for p in args.policies for s in range(args.seeds)
            if (w, p, s, args.fill) not in done]
    started = time.perf_counter()
    with open(log, "a") as sink, Runner("local", args.workers) as runner:
        for row in runner.map(one, todo, desc="fill runs", unit="run"):
            done[(row["workload"], row["broker"], row["seed"], row["fill"])] = row
            sink.write(json.dumps(row) + "\n")
            sink.flush()
    wall = time.perf_counter() - started
    rows = [r for (w, p, s, f), r in done.items()
            if w in args.workloads and p in args.policies and s < args.seeds and f == args.fill]
    report(rows, args.out, args.seeds, args.fill, wall, len(todo), args.workers)
    print(f"{len(rows)} runs ({len(todo)} this time, {wall:.0f} s) -> {args.out / 'study.md'}")


if __name__ == "__main__":
    main()
