"""What the stepping API costs `simulate()`: the same replays on this tree and on an earlier commit.

`simulate()` is a loop over `Simulation.next_decision()` / `apply()`. This script
replays the CloudSimPy v2017 workload (jobs 0:200 on 5 machines, and 0:1000 on 20)
with first-fit and Tetris, in tick and event mode, alternately on this working
tree and on a git worktree of ``--baseline`` (default: the commit before the
stepping API), each replay in a fresh process, and reports the median simulation
wall time of each and their ratio.

    python benchmarks/stepping_overhead.py --baseline dff3ccc --repeats 5

Writes benchmarks/results/stepping_overhead.{md,json}.

It calls the engine directly, not `cloudsim.run`, because it times `simulate()` alone on each tree, so that the
two times differ only by the engine; through the run layer they would also include its resolve step, and any
change to it between the commits.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
TRACE = ROOT.parent / "shared" / "data" / "cloudsimpy" / "jobs.csv"

CHILD = r"""
import sys, time
sys.path.insert(0, sys.argv[1])
from cloudsim import ClusterSpec, simulate
from agents import make_broker
from traces import load_cloudsimpy, job_range
jobs = load_cloudsimpy(sys.argv[2])
first, last, machines, broker, tick = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6], sys.argv[7]
chunk = job_range(jobs, first, last)
cluster = ClusterSpec.uniform(machines, {"cpu": 64, "memory": 1, "disk": 1})
started = time.perf_counter()
result = simulate(cluster, chunk, make_broker(broker), tick=None if tick == "event" else float(tick))
print(time.perf_counter() - started, result.summary["makespan"])
"""

CASES = [(0, 200, 5, "first-fit", "1"), (0, 200, 5, "tetris", "1"), (0, 200, 5, "first-fit", "event"),
         (0, 1000, 20, "first-fit", "event"), (0, 1000, 20, "tetris", "event")]


def replay(tree: Path, case: tuple) -> tuple[float, float]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(tree), str(TRACE), *map(str, case)],
                         capture_output=True, text=True, check=True, cwd=tree)
    wall, makespan = out.stdout.split()
    return float(wall), float(makespan)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default="dff3ccc", help="git commit to compare with (default dff3ccc)")
    parser.add_argument("--repeats", type=int, default=5, help="replays of each case on each tree (default 5)")
    parser.add_argument("--cases", default=",".join(map(str, range(len(CASES)))),
                        help=f"which cases, by position 0..{len(CASES) - 1} (default all)")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        old = Path(tmp) / "baseline"
        subprocess.run(["git", "worktree", "add", "--detach", str(old), args.baseline], cwd=ROOT, check=True,
                       capture_output=True)
        try:
            for case in [CASES[int(i)] for i in args.cases.split(",")]:
                times = {"baseline": [], "stepping": []}
                makespans = set()
                for _ in range(args.repeats):  # alternate, so machine noise hits both alike
                    for name, tree in (("baseline", old), ("stepping", ROOT)):
                        wall, makespan = replay(tree, case)
                        times[name].append(wall)
                        makespans.add((name, makespan))
                same = len({m for _, m in makespans}) == 1
                base, new = statistics.median(times["baseline"]), statistics.median(times["stepping"])
                rows.append({"jobs": f"{case[0]}:{case[1]}", "machines": case[2], "broker": case[3],
                             "mode": "event" if case[4] == "event" else f"tick={case[4]}",
                             "baseline_s": round(base, 3), "stepping_s": round(new, 3),
                             "ratio": round(new / base, 3), "same_makespan": same})
                print(rows[-1], flush=True)
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(old)], cwd=ROOT, capture_output=True)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "stepping_overhead.json").write_text(json.dumps(rows, indent=2) + "\n")
    lines = [f"Median simulation wall time of {args.repeats} replays per tree (baseline {args.baseline}).", "",
             "| jobs | machines | broker | mode | baseline s | stepping s | ratio | same makespan |",
             "|---|---|---|---|---|---|---|---|"]
    lines += [f"| {r['jobs']} | {r['machines']} | {r['broker']} | {r['mode']} | {r['baseline_s']} | "
              f"{r['stepping_s']} | {r['ratio']} | {r['same_makespan']} |" for r in rows]
    (RESULTS / "stepping_overhead.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
