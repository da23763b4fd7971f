"""How the simulator scales with the number of jobs: the alibaba-like workload on v2018's 4,034 machines.

Each case (broker x mode x number of jobs) runs in a fresh Python process, so that its
peak resident memory is its own, under a time limit. Two modes:

* ``stream``: the jobs come from `traces.iter_alibaba_like` into a streamed
  simulation (``Simulation(..., stream_to=folder)``), which writes finished rows to
  Parquet as it goes and drops them; the simulation's time includes making the
  jobs and writing the results;
* ``memory``: the whole job list is made first (`traces.alibaba_like`) and every
  row is kept until the end, as a replay without ``stream_to`` does.

A case reports the time to generate the jobs (memory mode), the simulation's wall
time, decisions and instances per second, and the process's peak memory. A
straight line fitted through first-fit's points in each mode (least squares, time
and memory against jobs) projects them to the 4 million jobs of the full v2018
trace; the projection is only as good as the line, and says so.

    python benchmarks/scale.py             # PLAN, the committed results (about 1.5 hours on 2 cores)
    python benchmarks/scale.py --jobs 1000,10000 --brokers first-fit,tetris --modes stream,memory --limit 300
    python benchmarks/scale.py --append --jobs 1000000 --brokers first-fit --limit 4000   # add cases

Writes benchmarks/results/scale.{md,json} and scale.png; with ``--append`` the cases
join those already in scale.json (a case run again replaces its earlier row).

It calls the engine directly, not `cloudsim.run`, because it measures the engine's own time and peak memory per
process, with the jobs' generation timed apart in memory mode; there the run layer's resolve step would add its
checks over every job, and a rebased copy of them, to both.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmark_common import RESULTS, ROOT, code_version

MACHINES = 4034  # v2018's machine_meta.csv
V2018_JOBS = 4_000_000  # about 4 million jobs (and 14 million tasks) over the trace's 8 days
CAPACITY = {"cpu": 96, "memory": 1}  # a v2018 machine: 96 cores, memory normalised to 1
MODES = ("stream", "memory")
PLAN = (  # (broker, mode, job counts, seconds a case may take): what runs without --jobs, --brokers, --modes
    ("first-fit", "stream", (1_000, 10_000, 100_000, 1_000_000), 4500.0),
    ("first-fit", "memory", (1_000, 10_000, 100_000), 3600.0),
    ("sjf", "stream", (1_000, 10_000, 100_000), 1200.0),
    ("tetris", "stream", (1_000, 10_000), 1200.0),
)

CHILD = r"""
import json, resource, sys, time
jobs_count, broker_name, machines, capacity, mode, folder = (int(sys.argv[1]), sys.argv[2], int(sys.argv[3]),
                                                             json.loads(sys.argv[4]), sys.argv[5], sys.argv[6])
from agents import make_broker
from cloudsim import ClusterSpec, Simulation
from traces import alibaba_like, iter_alibaba_like
cluster = ClusterSpec.uniform(machines, capacity)
started = time.perf_counter()
if mode == "stream":
    result = Simulation(cluster, iter_alibaba_like(jobs_count, seed=0), make_broker(broker_name),
                        stream_to=folder + "/results").run()
    generated = 0.0
else:
    jobs = alibaba_like(jobs_count, seed=0)
    generated = time.perf_counter() - started
    result = Simulation(cluster, jobs, make_broker(broker_name)).run()
s = result.summary
print(json.dumps({"jobs": s["jobs"], "tasks": s["tasks"], "instances": s["instances"],
                  "finished": s["instances_finished"], "decisions": s["decisions"], "makespan": s["makespan"],
                  "generate_s": generated, "simulation_s": s["sim_wall_s"],
                  "process_s": time.perf_counter() - started,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_case(jobs: int, broker: str, mode: str, limit: float) -> dict:
    """One case in a fresh process; a case past ``limit`` seconds is reported as not finished."""
    row = {"broker": broker, "mode": mode, "jobs": jobs}
    # The parent owns the results folder: a child stopped at the limit cannot clean up after itself.
    with tempfile.TemporaryDirectory(prefix="cloudsim-scale-") as folder:
        argv = [sys.executable, "-c", CHILD, str(jobs), broker, str(MACHINES), json.dumps(CAPACITY), mode, folder]
        try:
            out = subprocess.run(argv, capture_output=True, text=True, timeout=limit, cwd=ROOT)
        except subprocess.TimeoutExpired:
            return {**row, "status": f"over {limit:.0f} s"}
    if out.returncode != 0:
        return {**row, "status": "error: " + (out.stderr.strip().splitlines() or ["?"])[-1]}
    row.update(json.loads(out.stdout.splitlines()[-1]), status="ok")
    row["decisions_per_s"] = row["decisions"] / row["simulation_s"]
    row["instances_per_s"] = row["instances"] / row["simulation_s"]
    return row


def line(points: list[tuple[float, float]]) -> tuple[float, float] | None:
    """(intercept, slope) of the least-squares line through ``points``; None for fewer than two."""
    if len(points) < 2:
        return None
    import numpy as np

    x, y = np.array(points, dtype=float).T
    slope, intercept = np.polyfit(x, y, 1)
    return float(intercept), float(slope)


def projection(rows: list[dict], mode: str, broker: str = "first-fit") -> dict | None:
    """``broker``'s time and memory at v2018's 4 million jobs in ``mode``, from lines through its
    measured points."""
    done = [r for r in rows if r["broker"] == broker and r["mode"] == mode and r["status"] == "ok"]
    time_line = line([(r["jobs"], r["process_s"]) for r in done])
    memory_line = line([(r["jobs"], r["peak_rss_mb"]) for r in done])
    if time_line is None or memory_line is None:
        return None
    return {"broker": broker, "mode": mode, "jobs": V2018_JOBS, "points": [r["jobs"] for r in done],
            "seconds_per_1000_jobs": time_line[1] * 1000, "mb_per_1000_jobs": memory_line[1] * 1000,
            "process_s": time_line[0] + time_line[1] * V2018_JOBS,
            "peak_rss_mb": memory_line[0] + memory_line[1] * V2018_JOBS}


def plot(rows: list[dict], projected: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.5))
    for broker, mode in dict.fromkeys((r["broker"], r["mode"]) for r in rows):
        done = sorted((r for r in rows if (r["broker"], r["mode"]) == (broker, mode) and r["status"] == "ok"),
                      key=lambda r: r["jobs"])
        if done:
            style = "o-" if mode == "stream" else "s--"
            left.plot([r["jobs"] for r in done], [r["process_s"] for r in done], style, label=f"{broker} ({mode})")
            right.plot([r["jobs"] for r in done], [r["peak_rss_mb"] for r in done], style, label=f"{broker} ({mode})")
    for ax, label in ((left, "wall time of the process (s)"), (right, "peak memory (MB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"alibaba-like jobs on {MACHINES:,} machines")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    if projected:
        fig.suptitle("first-fit projected to 4 M jobs: " + "; ".join(
            f"{p['mode']} {p['process_s'] / 3600:.1f} h, {p['peak_rss_mb'] / 1024:.2f} GB" for p in projected)
            + " (lines through the measured points)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def write_markdown(rows: list[dict], projected: list[dict], path: Path) -> None:
    lines = [f"# Scale: alibaba-like jobs (seed 0) on {MACHINES:,} machines of {CAPACITY}, event-driven", "",
             "| broker | mode | jobs | tasks | instances | decisions | generate s | simulation s | process s | "
             "decisions/s | instances/s | peak MB | code |", "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['broker']} | {r['mode']} | {r['jobs']:,} | | | | | {r['status']} | | | | | "
                         f"{r.get('code', '')} |")
            continue
        lines.append(f"| {r['broker']} | {r['mode']} | {r['jobs']:,} | {r['tasks']:,} | {r['instances']:,} | "
                     f"{r['decisions']:,} | {r['generate_s']:.1f} | {r['simulation_s']:.1f} | {r['process_s']:.1f} | "
                     f"{r['decisions_per_s']:,.0f} | {r['instances_per_s']:,.0f} | {r['peak_rss_mb']:.0f} | "
                     f"{r.get('code', '')} |")
    limits = sorted({r["limit_s"] for r in rows if "limit_s" in r})
    lines += ["", "Each case ran in a fresh process with a time limit (" + ", ".join(f"{x:.0f} s" for x in limits)
              + "); process s includes generating the jobs, and in stream mode writing the results (Parquet). "
              "Every case that finished ran all its instances (finished = instances)."]
    for p in projected:
        lines += ["", f"## Projection to the full v2018 trace ({V2018_JOBS:,} jobs), first-fit, {p['mode']} mode", "",
                  f"Lines through the measured points ({', '.join(f'{j:,}' for j in p['points'])} jobs): "
                  f"{p['seconds_per_1000_jobs']:.2f} s and {p['mb_per_1000_jobs']:.2f} MB per 1,000 jobs, giving "
                  f"{p['process_s'] / 3600:.1f} h and {p['peak_rss_mb'] / 1024:.2f} GB at {V2018_JOBS:,} jobs."]
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", help="job counts, comma-separated (default 1000,10000,100000)")
    parser.add_argument("--brokers", help="brokers, comma-separated (default first-fit,sjf,tetris)")
    parser.add_argument("--modes", help=f"modes, comma-separated: {', '.join(MODES)} (default stream)")
    parser.add_argument("--limit", type=float, help="seconds a case may take before it is stopped (default 600; "
                        "without --jobs, --brokers and --modes, PLAN's)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for scale.md, scale.json and scale.png")
    parser.add_argument("--append", action="store_true",
                        help="add the cases to those in OUT/scale.json (a case run again replaces its row)")
    args = parser.parse_args()
    if args.limit is not None and not args.limit > 0:
        sys.exit(f"--limit {args.limit}: give a positive number of seconds")
    planned = args.jobs is None and args.brokers is None and args.modes is None
    args.jobs, args.brokers, args.modes = (args.jobs or "1000,10000,100000", args.brokers or "first-fit,sjf,tetris",
                                           args.modes or "stream")
    try:
        counts = [int(j) for j in args.jobs.split(",")]
    except ValueError:
        sys.exit(f"--jobs {args.jobs!r}: write whole numbers separated by commas, e.g. --jobs 1000,4000")
    if not counts or min(counts) < 1:
        sys.exit(f"--jobs {args.jobs!r}: every count must be at least 1")
    modes = [m for m in args.modes.split(",") if m]
    if not modes or any(m not in MODES for m in modes):
        sys.exit(f"--modes {args.modes!r}: choose among {', '.join(MODES)}")
    brokers = [b for b in args.brokers.split(",") if b]
    from agents import BROKERS

    unknown = [b for b in brokers if b not in BROKERS]
    if unknown or not brokers:
        sys.exit(f"--brokers: unknown {', '.join(unknown) or 'none given'}; choose among {', '.join(sorted(BROKERS))}")
    earlier = []
    if args.append:
        try:
            earlier = json.loads((args.out / "scale.json").read_text())["cases"]
            for r in earlier:
                r.setdefault("mode", "memory")  # cases measured before streaming existed kept every row
        except FileNotFoundError:
            sys.exit(f"--append: {args.out / 'scale.json'} does not exist; run once without --append")
        except (ValueError, KeyError, TypeError, AttributeError):
            sys.exit(f"--append: {args.out / 'scale.json'} is not a scale.json this script wrote; "
                     "run without --append to start afresh")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        sys.exit(f"--out {args.out}: cannot make the folder ({error.strerror}); pass another folder")
    if planned:
        plan = [(b, m, c, limit if args.limit is None else args.limit) for b, m, c, limit in PLAN]
    else:
        plan = [(b, m, sorted(counts), 600.0 if args.limit is None else args.limit) for b in brokers for m in modes]
    rows = []
    started = time.perf_counter()
    try:
        for broker, mode, jobs_list, limit in plan:
            for jobs in jobs_list:
                rows.append({**run_case(jobs, broker, mode, limit), "limit_s": limit, "code": code_version()})
                print(json.dumps(rows[-1]), flush=True)
                if rows[-1]["status"] != "ok":
                    break  # larger counts would take longer still
    except KeyboardInterrupt:
        sys.exit(f"interrupted after {time.perf_counter() - started:.0f} s; nothing written")
    new = {(r["broker"], r["mode"], r["jobs"]) for r in rows}
    rows = sorted([r for r in earlier if (r["broker"], r["mode"], r["jobs"]) not in new] + rows,
                  key=lambda r: (r["broker"], MODES.index(r["mode"]), r["jobs"]))
    projected = [p for p in (projection(rows, mode) for mode in MODES) if p is not None]
    (args.out / "scale.json").write_text(json.dumps({"machines": MACHINES, "capacity": CAPACITY, "cases": rows,
                                                     "projections": projected}, indent=1) + "\n")
    write_markdown(rows, projected, args.out / "scale.md")
    plot(rows, projected, args.out / "scale.png")
    print(f"wrote {args.out / 'scale.md'}, scale.json and scale.png")


if __name__ == "__main__":
    main()
