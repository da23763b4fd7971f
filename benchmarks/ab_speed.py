"""Time the same commands under this checkout and another one, alternating, and report medians and ratios.

These machines' speed drifts by up to 2x from one hour to the next, so a speed change is only seen side by
side: each repeat runs every command once under each checkout, in alternating order, and the report gives the
median of each and their ratio. A command is a ``cloudsim`` command line with ``--json``; its time is the sum
of its runs' simulation time (``sim_wall_s``; ``wall_s`` for a fill run), so start-up and loading are left out.

    git worktree add /tmp/base HEAD~1
    python benchmarks/ab_speed.py --against /tmp/base --repeats 3 [--only deepjs,fgd]

Writes benchmarks/results/ab_speed.{md,json}. The default commands are the learned brokers' and FGD's
decisions on their own workloads (the cost of `cloudsim.engine.arithmetic`'s deterministic decision arithmetic).

It runs the ``cloudsim`` command line in a fresh process per checkout, not `cloudsim.run` in this one, because
each checkout's code must be imported on its own (``PYTHONPATH``); the commands themselves go through the run
layer.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from benchmark_common import RESULTS, ROOT, code_version

DATA = Path(os.environ.get("CLOUDSIM_DATA") or ROOT.parent / "shared" / "data")
CHUNKS = ["replay", str(DATA / "cloudsimpy" / "jobs.csv"), "--format", "cloudsimpy", "--chunk-size", "10",
          "--chunks", "202:222", "--machines", "5", "--capacity", "cpu=64,memory=1,disk=1", "--tick", "1"]
GPU = DATA / "alibaba" / "gpu-v2023"
COMMANDS = {
    "deepjs": [*CHUNKS, "--brokers", "deepjs"],
    "deepjs-4034": ["replay", str(DATA / "alibaba" / "v2018" / "selected_DAGs.csv"), "--format", "alibaba-v2018",
                    "--machine-table", str(DATA / "alibaba" / "v2018" / "machine_meta.csv"), "--jobs", "0:20",
                    "--brokers", "deepjs"],
    "deeprm": ["replay", "deeprm", "--load", "0.9", "--synthetic-jobs", "3000", "--brokers", "deeprm"],
    "deeprm-plus": ["replay", "deeprm", "--load", "0.9", "--synthetic-jobs", "300", "--brokers", "deeprm-plus"],
    "deepk8s": ["compare", "deepk8s", "--brokers", "deepk8s,deepk8s-dagger", "--seeds", "0:20"],
    "rlsk": ["compare", "rlsk", "--brokers", "rlsk", "--synthetic-jobs", "1000", "--seeds", "0:20"],
    "fgd": ["compare", str(GPU / "openb_pod_list_default.csv"), "--format", "openb", "--machine-table",
            str(GPU / "openb_node_list_gpu_node.csv"), "--fill", "1.3", "--brokers", "fgd", "--seeds", "1"],
    "tetris": [*CHUNKS, "--brokers", "tetris"],
    "first-fit-4034": ["replay", "alibaba-like", "--synthetic-jobs", "1000", "--machines", "4034", "--capacity",
                       "cpu=96,memory=1", "--brokers", "first-fit"],
    "tetris-4034": ["replay", "alibaba-like", "--synthetic-jobs", "1000", "--machines", "4034", "--capacity",
                    "cpu=96,memory=1", "--brokers", "tetris"],
    "deepjs-100-4034": ["replay", "alibaba-like", "--synthetic-jobs", "100", "--machines", "4034", "--capacity",
                        "cpu=96,memory=1", "--brokers", "deepjs"],
    "tetris-100-4034": ["replay", "alibaba-like", "--synthetic-jobs", "100", "--machines", "4034", "--capacity",
                        "cpu=96,memory=1", "--brokers", "tetris"],
    **{f"{broker}-v2017": ["replay", str(DATA / "alibaba" / "v2017" / "batch_task.csv"), "--format", "alibaba-v2017",
                           "--machine-table", str(DATA / "alibaba" / "v2017" / "server_event.csv"), "--jobs", "0:20",
                           "--brokers", broker] for broker in ("deeprm", "deeprm-plus", "deepk8s")},
}


def run(checkout: Path, argv: list[str]) -> float:
    """The summed simulation time of one command's runs under ``checkout``."""
    env = {**os.environ, "PYTHONPATH": str(checkout), "CLOUDSIM_DATA": str(DATA)}
    done = subprocess.run([sys.executable, "-m", "cloudsim", *argv, "--json", "--workers", "1"], env=env, cwd=checkout,
                          capture_output=True, text=True, timeout=1800)
    if done.returncode != 0:
        raise SystemExit(f"{checkout}: cloudsim {' '.join(argv)} failed: {done.stderr.strip().splitlines()[-1:]}")
    rows = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return sum(r.get("sim_wall_s", r.get("wall_s", 0.0)) for r in rows if not r.get("summary"))


FIRST_CALL = ("import time, numpy as np; import cloudsim; t = time.perf_counter(); "
              "from cloudsim.engine import arithmetic; arithmetic.dense(np.ones((2, 3)), np.ones((3, 4))); "
              "print(time.perf_counter() - t)")


def first_call() -> float:
    """Seconds a process spends on its first `cloudsim.engine.arithmetic` call: importing numba, loading the kernels."""
    done = subprocess.run([sys.executable, "-c", FIRST_CALL], env={**os.environ, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=300, check=True)
    return float(done.stdout.strip())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--against", type=Path, required=True, help="the other checkout (a git worktree)")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--only", default=",".join(COMMANDS), help="commands, comma-separated: " + ", ".join(COMMANDS))
    parser.add_argument("--out", type=Path, default=RESULTS / "ab_speed")
    args = parser.parse_args()
    names = [n for n in args.only.split(",") if n]
    unknown = [n for n in names if n not in COMMANDS]
    if unknown or args.repeats < 1 or not (args.against / "cloudsim").is_dir():
        raise SystemExit(f"unknown command(s) {unknown}; --repeats must be >= 1; --against must be a checkout")
    times: dict[str, dict[str, list[float]]] = {n: {"this": [], "other": []} for n in names}
    for repeat in range(args.repeats):
        for name in names:
            order = [("this", ROOT), ("other", args.against)]
            for side, checkout in (order if repeat % 2 == 0 else order[::-1]):
                times[name][side].append(run(checkout, COMMANDS[name]))
            print(f"repeat {repeat + 1}: {name}: this {times[name]['this'][-1]:.3f} s, "
                  f"other {times[name]['other'][-1]:.3f} s", flush=True)
    first = statistics.median(first_call() for _ in range(3))
    rows = [{"command": name, "this_s": statistics.median(t["this"]), "other_s": statistics.median(t["other"]),
             "ratio": statistics.median(t["this"]) / statistics.median(t["other"]), "this_all": t["this"],
             "other_all": t["other"]} for name, t in times.items()]
    header = (f"# Side by side: this checkout ({code_version()}) against another ({code_version(args.against)})"
              f"\n\n`python benchmarks/ab_speed.py --against OTHER --repeats {args.repeats}`; medians of "
              f"{args.repeats} alternating repeats, simulation time summed over each "
              f"command's runs (start-up and loading left out).\n\n"
              "| command | this s | other s | this / other |\n|---|---|---|---|\n")
    table = "".join(f"| `{r['command']}` | {r['this_s']:.3f} | {r['other_s']:.3f} | {r['ratio']:.2f} |\n" for r in rows)
    table += (f"\nIn this checkout a process's first decision through `cloudsim.engine.arithmetic` also imports "
              f"numba and loads the compiled kernels: {first:.3f} s (median of 3 processes), once per process, "
              f"included in the times above.\n")
    shown = {n: " ".join(COMMANDS[n]).replace(str(DATA), "$CLOUDSIM_DATA") for n in names}
    args.out.with_suffix(".md").write_text(header + table + "\nCommands: " + "; ".join(
        f"`{n}`: `cloudsim {shown[n]} --json --workers 1`" for n in names) + "\n")
    args.out.with_suffix(".json").write_text(json.dumps({"first_call_s": first, "rows": rows}, indent=1) + "\n")
    print(header + table)


if __name__ == "__main__":
    main()
