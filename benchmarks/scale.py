"""How the simulator scales with the number of jobs: the alibaba-like workload on v2018's 4,034 machines.

Each case (broker x number of jobs) runs in a fresh Python process, so that its peak
resident memory is its own, under a time limit. A case reports the time to generate
the jobs, the simulation's wall time, decisions and instances per second, and the
process's peak memory. A straight line fitted through first-fit's points (least
squares, time and memory against jobs) projects them to the 4 million jobs of the
full v2018 trace; the projection is only as good as the line, and says so.

    python benchmarks/scale.py                                    # defaults below (about 20 minutes on 2 cores)
    python benchmarks/scale.py --jobs 1000,2000 --brokers first-fit,tetris --limit 300

Writes benchmarks/results/scale.{md,json} and scale.png.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
MACHINES = 4034  # v2018's machine_meta.csv
V2018_JOBS = 4_000_000  # about 4 million jobs (and 14 million tasks) over the trace's 8 days
CAPACITY = {"cpu": 96, "memory": 1}  # a v2018 machine: 96 cores, memory normalised to 1

CHILD = r"""
import json, resource, sys, time
jobs_count, broker_name, machines, capacity = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), json.loads(sys.argv[4])
from agents import make_broker
from cloudsim import ClusterSpec, Simulation
from traces import alibaba_like
started = time.perf_counter()
jobs = alibaba_like(jobs_count, seed=0)
generated = time.perf_counter() - started
result = Simulation(ClusterSpec.uniform(machines, capacity), jobs, make_broker(broker_name)).run()
s = result.summary
print(json.dumps({"jobs": s["jobs"], "tasks": s["tasks"], "instances": s["instances"],
                  "finished": s["instances_finished"], "decisions": s["decisions"], "makespan": s["makespan"],
                  "generate_s": generated, "simulation_s": s["sim_wall_s"],
                  "process_s": time.perf_counter() - started,
                  "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}))
"""


def run_case(jobs: int, broker: str, limit: float) -> dict:
    """One case in a fresh process; a case past ``limit`` seconds is reported as not finished."""
    argv = [sys.executable, "-c", CHILD, str(jobs), broker, str(MACHINES), json.dumps(CAPACITY)]
    row = {"broker": broker, "jobs": jobs}
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


def projection(rows: list[dict], broker: str = "first-fit") -> dict | None:
    """``broker``'s time and memory at v2018's 4 million jobs, from lines through its measured points."""
    done = [r for r in rows if r["broker"] == broker and r["status"] == "ok"]
    time_line = line([(r["jobs"], r["process_s"]) for r in done])
    memory_line = line([(r["jobs"], r["peak_rss_mb"]) for r in done])
    if time_line is None or memory_line is None:
        return None
    return {"broker": broker, "jobs": V2018_JOBS, "points": [r["jobs"] for r in done],
            "seconds_per_1000_jobs": time_line[1] * 1000, "mb_per_1000_jobs": memory_line[1] * 1000,
            "process_s": time_line[0] + time_line[1] * V2018_JOBS,
            "peak_rss_mb": memory_line[0] + memory_line[1] * V2018_JOBS}


def plot(rows: list[dict], projected: dict | None, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(10, 4))
    for broker in dict.fromkeys(r["broker"] for r in rows):
        done = [r for r in rows if r["broker"] == broker and r["status"] == "ok"]
        if done:
            left.plot([r["jobs"] for r in done], [r["process_s"] for r in done], "o-", label=broker)
            right.plot([r["jobs"] for r in done], [r["peak_rss_mb"] for r in done], "o-", label=broker)
    for ax, label in ((left, "wall time of the process (s)"), (right, "peak memory (MB)")):
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel(f"alibaba-like jobs on {MACHINES:,} machines")
        ax.set_ylabel(label)
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    if projected:
        fig.suptitle(f"first-fit projected to {V2018_JOBS:,} jobs: {projected['process_s'] / 3600:.1f} h, "
                     f"{projected['peak_rss_mb'] / 1024:.1f} GB (lines through the measured points)")
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def write_markdown(rows: list[dict], projected: dict | None, limit: float, path: Path) -> None:
    lines = [f"# Scale: alibaba-like jobs (seed 0) on {MACHINES:,} machines of {CAPACITY}, event-driven", "",
             "| broker | jobs | tasks | instances | decisions | generate s | simulation s | process s | "
             "decisions/s | instances/s | peak MB |", "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        if r["status"] != "ok":
            lines.append(f"| {r['broker']} | {r['jobs']:,} | | | | | {r['status']} | | | | |")
            continue
        lines.append(f"| {r['broker']} | {r['jobs']:,} | {r['tasks']:,} | {r['instances']:,} | {r['decisions']:,} | "
                     f"{r['generate_s']:.1f} | {r['simulation_s']:.1f} | {r['process_s']:.1f} | "
                     f"{r['decisions_per_s']:,.0f} | {r['instances_per_s']:,.0f} | {r['peak_rss_mb']:.0f} |")
    lines += ["", f"Each case ran in a fresh process with a limit of {limit:.0f} s; process s includes generating "
              "the jobs. Every case that finished ran all its instances (finished = instances)."]
    if projected:
        lines += ["", f"## Projection to the full v2018 trace ({V2018_JOBS:,} jobs), first-fit", "",
                  f"Lines through the measured points ({', '.join(f'{j:,}' for j in projected['points'])} jobs): "
                  f"{projected['seconds_per_1000_jobs']:.2f} s and {projected['mb_per_1000_jobs']:.1f} MB per "
                  f"1,000 jobs, giving {projected['process_s'] / 3600:.1f} h and "
                  f"{projected['peak_rss_mb'] / 1024:.1f} GB at {V2018_JOBS:,} jobs. Every job is held in memory "
                  "from the start (its specification, its rows in the task table), so memory grows with the "
                  "trace, not with the jobs in flight."]
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--jobs", default="1000,4000,16000", help="job counts, comma-separated")
    parser.add_argument("--brokers", default="first-fit,tetris,sjf,deepjs", help="brokers, comma-separated")
    parser.add_argument("--limit", type=float, default=600.0, help="seconds a case may take before it is stopped")
    parser.add_argument("--out", type=Path, default=RESULTS, help="folder for scale.md, scale.json and scale.png")
    args = parser.parse_args()
    try:
        counts = [int(j) for j in args.jobs.split(",")]
    except ValueError:
        sys.exit(f"--jobs {args.jobs!r}: write whole numbers separated by commas, e.g. --jobs 1000,4000")
    if not counts or min(counts) < 1:
        sys.exit(f"--jobs {args.jobs!r}: every count must be at least 1")
    if not args.limit > 0:
        sys.exit(f"--limit {args.limit}: give a positive number of seconds")
    brokers = [b for b in args.brokers.split(",") if b]
    from agents import BROKERS

    unknown = [b for b in brokers if b not in BROKERS]
    if unknown:
        sys.exit(f"--brokers: unknown {', '.join(unknown)}; choose among {', '.join(sorted(BROKERS))}")
    try:
        args.out.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        sys.exit(f"--out {args.out}: cannot make the folder ({error.strerror}); pass another folder")
    rows = []
    started = time.perf_counter()
    try:
        for broker in brokers:
            for jobs in sorted(counts):
                rows.append(run_case(jobs, broker, args.limit))
                print(json.dumps(rows[-1]), flush=True)
                if rows[-1]["status"] != "ok":
                    break  # larger counts would take longer still
    except KeyboardInterrupt:
        sys.exit(f"interrupted after {time.perf_counter() - started:.0f} s; nothing written")
    projected = projection(rows)
    (args.out / "scale.json").write_text(json.dumps({"machines": MACHINES, "capacity": CAPACITY, "limit_s": args.limit,
                                                     "cases": rows, "projection": projected}, indent=1) + "\n")
    write_markdown(rows, projected, args.limit, args.out / "scale.md")
    plot(rows, projected, args.out / "scale.png")
    print(f"wrote {args.out / 'scale.md'}, scale.json and scale.png")


if __name__ == "__main__":
    main()
