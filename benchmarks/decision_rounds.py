"""Decisions per second of the heuristics at Alibaba scale, this code against another checkout.

Each case replays the alibaba-like generator (seed 0) on 4,034 machines of (96 cpu, 1 memory),
event-driven, in a fresh Python process (`Simulation(...).run()`, the results included), and
reports the time of the run (results included), the decisions and the decisions per second. With ``--against DIR`` (a
checkout of another commit, e.g. ``git worktree add /tmp/base HEAD~3``) the same cases run on
that code too, alternating with this one, so that both see the same machine load; the table then
gives both medians and their ratio.

    python benchmarks/decision_rounds.py                                   # this code, medians of 3
    python benchmarks/decision_rounds.py --against /tmp/base --jobs 1000 --brokers first-fit,sjf

Writes benchmarks/results/decision_rounds.{md,json}.

It calls the engine directly, not `cloudsim.run`, because it times `Simulation(...).run()` with its results, in
a fresh process on either checkout; a run's ``sim_wall_s`` leaves the results out and its ``wall_s`` adds
building the broker (and, in `compare`, generating the workload).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from benchmark_common import RESULTS, ROOT, code_version

CASE = """
import json, sys, time
sys.path.insert(0, {root!r})
from agents import make_broker
from cloudsim import ClusterSpec, Simulation
from traces import alibaba_like
jobs = alibaba_like({jobs}, seed=0)
cluster = ClusterSpec.uniform(4034, {{"cpu": 96, "memory": 1}})
started = time.perf_counter()
summary = Simulation(cluster, jobs, make_broker({broker!r})).run().summary
print(json.dumps({{"wall_s": time.perf_counter() - started, "decisions": summary["decisions"],
                  "makespan": summary["makespan"]}}))
"""


def run_case(root: Path, broker: str, jobs: int) -> dict:
    done = subprocess.run([sys.executable, "-c", CASE.format(root=str(root), jobs=jobs, broker=broker)],
                          capture_output=True, text=True, cwd=root)
    if done.returncode != 0:
        raise RuntimeError(f"{broker} on {root} failed: {done.stderr.strip().splitlines()[-1:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def measure(roots: dict[str, Path], broker: str, jobs: int, repeats: int) -> dict:
    """One table row: each checkout's median time over ``repeats`` runs, alternating between them."""
    times: dict[str, list[float]] = {name: [] for name in roots}
    runs: dict[str, dict] = {}
    for _ in range(repeats):
        for name, root in roots.items():  # alternating: both see the same load
            runs[name] = run_case(root, broker, jobs)
            times[name].append(runs[name]["wall_s"])
    row = {"broker": broker, "jobs": jobs}
    for name in roots:
        median = statistics.median(times[name])
        row |= {f"{name}_s": round(median, 2), f"{name}_decisions": runs[name]["decisions"],
                f"{name}_decisions_per_s": round(runs[name]["decisions"] / median),
                f"{name}_makespan": runs[name]["makespan"]}
    if "against" in roots:
        row["speedup"] = round(row["against_s"] / row["this_s"], 2)
    print(json.dumps(row), flush=True)
    return row


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--jobs", type=int, default=1000, help="alibaba-like jobs per case (default 1000)")
    parser.add_argument("--brokers", default="first-fit,best-fit,sjf,fcfs,drf,easy",
                        help="comma-separated heuristics")
    parser.add_argument("--repeats", type=int, default=3, help="runs per case; the median is reported")
    parser.add_argument("--against", type=Path, help="a checkout of another commit to measure alongside")
    args = parser.parse_args(argv)
    if args.jobs < 1 or args.repeats < 1:
        parser.error("--jobs and --repeats must be >= 1")
    if args.against is not None and not any((args.against / "cloudsim" / folder / "simulation.py").is_file()
                                            for folder in ("engine", "")):  # "": checkouts before the engine folder
        parser.error(f"--against {args.against}: not a cloudsim checkout (no cloudsim/engine/simulation.py)")
    from agents import BROKERS, LEARNED

    unknown = [b for b in args.brokers.split(",") if b not in BROKERS or b in LEARNED]
    if unknown:
        parser.error(f"--brokers: {', '.join(unknown)}: not a heuristic; choose among "
                     f"{', '.join(b for b in BROKERS if b not in LEARNED)}")
    roots = {"this": ROOT} | ({"against": args.against.resolve()} if args.against is not None else {})
    rows = []
    try:
        for broker in args.brokers.split(","):
            rows.append(measure(roots, broker, args.jobs, args.repeats))
    except (RuntimeError, KeyboardInterrupt) as err:
        print(f"decision_rounds.py: {'interrupted' if isinstance(err, KeyboardInterrupt) else err}; "
              f"nothing written", file=sys.stderr)
        return 1
    against = f"{code_version(roots['against'])} in {args.against}" if args.against is not None else None
    out = {"code": code_version(), "against": against,
           "setting": "alibaba-like seed 0, 4,034 x (96 cpu, 1 memory), event-driven; the time of "
                      "Simulation(...).run() with its results, each run in a fresh process",
           "repeats": args.repeats, "rows": rows}
    columns = list(rows[0])
    table = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
    table += ["| " + " | ".join(str(r[c]) for c in columns) + " |" for r in rows]
    written = {"decision_rounds.json": json.dumps(out, indent=1) + "\n",
               "decision_rounds.md": f"Measured on {out['code']}{f' against {against}' if against else ''}: "
                                     f"{out['setting']}, median of {args.repeats}.\n\n" + "\n".join(table) + "\n"}
    for name, text in written.items():  # each file whole or not at all
        temporary = RESULTS / f".{name}.tmp"
        temporary.write_text(text)
        temporary.replace(RESULTS / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
