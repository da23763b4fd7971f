"""How fast the core replays the CloudSimPy v2017 workload, and how a decision's cost scales.

Each replay runs in a fresh Python process, as a user would run it, and reports
the whole process's wall time (imports and trace loading included), the
simulation's own wall time, instances per second and peak resident memory.
Cases: jobs 0:200 on 5 and on 20 machines, and the whole file (5,216 jobs,
2,551,075 instances) on 50 machines, with first-fit, in tick and event mode.
A second part times single broker decisions against the size of the fit
matrix (machines x ready tasks).

    python benchmarks/replay_speed.py                 # everything (about 10 minutes on 2 cores)
    python benchmarks/replay_speed.py --quick         # without the whole-file replays

Writes benchmarks/results/replay_speed.{md,json} and decision_cost.png.

Its replays run ``cloudsim replay`` in a fresh process; the decision timing calls the engine directly, not
`cloudsim.run`, because it wraps each broker to time every `decide` call and reads the samples back from it, and
a run builds its broker from a name and does not hand it back.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DEFAULT_TRACE = ROOT.parent / "shared" / "data" / "cloudsimpy" / "jobs.csv"
CLOUDSIMPY_0_200_S = 77.0  # CloudSimPy, jobs 0:200, 5 machines, first-fit, whole process (from the core issue)

CHILD = r"""
import json, resource, sys, time
started = time.perf_counter()
from cloudsim.cli import main
import io, contextlib
buffer = io.StringIO()
with contextlib.redirect_stdout(buffer):
    main(sys.argv[1:])
row = json.loads(buffer.getvalue().splitlines()[0])
row["process_s"] = time.perf_counter() - started
row["peak_rss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(json.dumps(row))
"""


def replay_once(trace: Path, jobs: str | None, machines: int, tick: str | None) -> dict:
    argv = [str(trace), "--format", "cloudsimpy", "--machines", str(machines),
            "--capacity", "cpu=64,memory=1,disk=1", "--broker", "first-fit", "--json"]
    argv += ["--jobs", jobs] if jobs else []
    argv += ["--tick", tick] if tick else []
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, "replay", *argv], check=True, capture_output=True, text=True)
    row = json.loads(out.stdout.splitlines()[-1])
    row["outer_s"] = time.perf_counter() - started
    return row


def replay_cases(trace: Path, quick: bool, repeats: int) -> list[dict]:
    cases = [("0:200", 5, "1"), ("0:200", 5, None), ("0:200", 20, "1"), ("0:200", 20, None)]
    if not quick:
        cases += [(None, 50, "1"), (None, 50, None)]
    rows = []
    for jobs, machines, tick in cases:
        runs = [replay_once(trace, jobs, machines, tick) for _ in range(repeats if jobs else 1)]
        process = statistics.median(r["outer_s"] for r in runs)
        sim = statistics.median(r["wall_s"] for r in runs)
        first = runs[0]
        rows.append({
            "jobs": jobs or "all (0:5216)", "machines": machines, "mode": first["mode"], "runs": len(runs),
            "instances": first["instances"], "decisions": first["decisions"], "makespan": first["makespan"],
            "process_s": round(process, 2), "simulation_s": round(sim, 2),
            "instances_per_s": round(first["instances"] / sim),
            "peak_rss_mb": round(max(r["peak_rss_mb"] for r in runs)),
            "speedup_vs_cloudsimpy": (round(CLOUDSIMPY_0_200_S / process, 1) if (jobs, machines) == ("0:200", 5)
                                      else None),
        })
        print(json.dumps(rows[-1]), flush=True)
    return rows


class TimedBroker:
    """Wraps a broker and records (machines x ready tasks, seconds) for every decide call."""

    def __init__(self, inner):
        self.inner, self.name, self.samples = inner, inner.name, []

    def decide(self, view):
        started = time.perf_counter()
        size = view.num_machines * view.num_tasks
        _ = view.fits  # the fit matrix is part of the decision's cost
        decision = self.inner.decide(view)
        self.samples.append((size, time.perf_counter() - started))
        return decision


def decision_cost(seed: int = 0) -> list[dict]:
    """Median cost of one decision, bucketed by machines x ready tasks (powers of 4)."""
    import numpy as np

    from agents import FirstFit, Tetris
    from cloudsim import ClusterSpec, simulate
    from traces import alibaba_like

    rows = []
    for broker_cls in (FirstFit, Tetris):
        samples = []
        for machines in (2, 8, 32, 128):
            jobs = alibaba_like(jobs=150, seed=seed, max_instances=200)
            timed = TimedBroker(broker_cls())
            simulate(ClusterSpec.uniform(machines, {"cpu": 16, "memory": 0.25}), jobs, timed)
            samples += timed.samples
        sizes = np.array([s for s, _ in samples])
        costs = np.array([c for _, c in samples])
        for low in 4.0 ** np.arange(0, 10):
            mask = (sizes >= low) & (sizes < 4 * low)
            if mask.sum() >= 20:
                rows.append({"broker": broker_cls.name, "pairs_from": int(low), "pairs_to": int(4 * low),
                             "decisions": int(mask.sum()), "median_us": round(float(np.median(costs[mask])) * 1e6, 1)})
    return rows


def plot_decision_cost(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4))
    for broker in dict.fromkeys(r["broker"] for r in rows):
        mine = [r for r in rows if r["broker"] == broker]
        ax.plot([(r["pairs_from"] * r["pairs_to"]) ** 0.5 for r in mine], [r["median_us"] for r in mine], "o-",
                label=broker)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("machines x ready tasks (bucket centre)")
    ax.set_ylabel("median time per decision (µs)")
    ax.set_title("Cost of one broker decision")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def write_markdown(replays: list[dict], costs: list[dict], path: Path) -> None:
    lines = ["# Replay speed (first-fit, CloudSimPy v2017 jobs.csv, machines of cpu=64, memory=1, disk=1)", ""]
    lines.append("| jobs | machines | mode | instances | decisions | makespan | process s | simulation s | instances/s "
                 "| peak RSS MB | vs CloudSimPy 77 s |")
    lines.append("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in replays:
        speedup = f"{r['speedup_vs_cloudsimpy']}x" if r["speedup_vs_cloudsimpy"] else ""
        lines.append(f"| {r['jobs']} | {r['machines']} | {r['mode']} | {r['instances']:,} | {r['decisions']:,} | "
                     f"{r['makespan']:.0f} | {r['process_s']} | {r['simulation_s']} | {r['instances_per_s']:,} | "
                     f"{r['peak_rss_mb']} | {speedup} |")
    lines += ["", "Process s is the median whole-process time over the runs (imports and loading included).",
              "The CloudSimPy figure (77 s for jobs 0:200 on 5 machines) is the one given in the core issue, "
              "not measured here.",
              "", "# Cost of one decision against machines x ready tasks (event mode, alibaba_like workload)", "",
              "| broker | pairs | decisions | median µs |", "|---|---|---|---|"]
    lines += [f"| {r['broker']} | {r['pairs_from']}-{r['pairs_to']} | {r['decisions']} | {r['median_us']} |"
              for r in costs]
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trace", type=Path, default=DEFAULT_TRACE)
    parser.add_argument("--quick", action="store_true", help="skip the whole-file replays")
    parser.add_argument("--repeats", type=int, default=3, help="runs of each small case (median reported)")
    args = parser.parse_args()
    if not args.trace.is_file():
        sys.exit(f"trace not found: {args.trace} (pass --trace PATH to CloudSimPy's jobs.csv)")
    RESULTS.mkdir(parents=True, exist_ok=True)
    replays = replay_cases(args.trace, args.quick, args.repeats)
    costs = decision_cost()
    for row in costs:
        print(json.dumps(row))
    plot_decision_cost(costs, RESULTS / "decision_cost.png")
    (RESULTS / "replay_speed.json").write_text(
        json.dumps({"replays": replays, "decision_cost": costs}, indent=1) + "\n")
    write_markdown(replays, costs, RESULTS / "replay_speed.md")
    print(f"wrote {RESULTS / 'replay_speed.md'}")


if __name__ == "__main__":
    main()
