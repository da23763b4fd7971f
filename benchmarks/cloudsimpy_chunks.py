"""Every CloudSimPy chunk replayed as CloudSimPy replays it: a reference to hold engine changes to.

The parity test (`tests/test_cloudsimpy_parity.py`) checks chunks 0-4 against CloudSimPy's own
output. This script replays all of them (jobs.csv in chunks of 10 jobs, 5 machines of (64 cpu,
1 memory, 1 disk), tick 1) with first-fit and Tetris and records each run's makespan, average
task completion and average task slowdown, so that a change of the engine can show, chunk by
chunk, which results it moves:

    python benchmarks/cloudsimpy_chunks.py                     # writes results/cloudsimpy_chunks.json
    python benchmarks/cloudsimpy_chunks.py --against OLD.json  # also lists every run that differs from OLD

About two minutes on the 2-core machine. The runs go through the run layer (`cloudsim.run.replay`), as
``cloudsim replay jobs.csv --format cloudsimpy --chunk-size 10 --machines 5 --tick 1`` runs them.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from benchmark_common import CLOUDSIMPY_TRACE, RESULTS, code_version

BROKERS = ("first-fit", "tetris")


def replay_every_chunk(trace: Path) -> dict[str, list[float]]:
    """Each broker on every chunk, through the run layer (`cloudsim.run.replay`), as ``cloudsim replay`` runs it."""
    from tqdm.auto import tqdm

    from cloudsim.run import (BrokerConfig, ClusterConfig, RunConfig, RunnerConfig, SimulationConfig, WorkloadConfig,
                              replay)

    config = RunConfig(workload=WorkloadConfig(str(trace), format="cloudsimpy", chunk_size=10),
                       cluster=ClusterConfig(machines=5, capacity={"cpu": 64, "memory": 1, "disk": 1}),
                       simulation=SimulationConfig(tick=1), brokers=BrokerConfig(BROKERS),
                       runner=RunnerConfig(workers=1))
    with tqdm(unit="run", desc="chunks") as bar:
        rows = replay(config, on_row=lambda row: bar.update()).rows
    order = {broker: k for k, broker in enumerate(BROKERS)}
    return {f"{row['broker']}/{row['chunk']}": [row["makespan"], row["avg_completion"], row["avg_slowdown"]]
            for row in sorted(rows, key=lambda row: (order[row["broker"]], row["chunk"]))}


def differences(old: dict, new: dict) -> list[str]:
    lines = []
    for key in sorted(set(old) | set(new), key=lambda k: (k.split("/")[0], int(k.split("/")[1]))):
        if old.get(key) != new.get(key):
            lines.append(f"{key}: makespan, avg_completion, avg_slowdown {old.get(key)} -> {new.get(key)}")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", type=Path, default=CLOUDSIMPY_TRACE, help="CloudSimPy's jobs.csv")
    parser.add_argument("--against", type=Path, help="an earlier output of this script to compare with")
    parser.add_argument("--out", type=Path, default=RESULTS / "cloudsimpy_chunks.json")
    args = parser.parse_args(argv)
    if not args.trace.is_file():
        print(f"cloudsimpy_chunks.py: --trace {args.trace}: no such file; give CloudSimPy's jobs.csv", file=sys.stderr)
        return 2
    old = None
    if args.against is not None:
        try:
            old = json.loads(args.against.read_text())["runs"]
        except (OSError, ValueError, KeyError, TypeError) as err:
            print(f"cloudsimpy_chunks.py: --against {args.against}: not an output of this script ({err})",
                  file=sys.stderr)
            return 2
    started = time.perf_counter()
    runs = replay_every_chunk(args.trace)
    result = {"code": code_version(), "setting": "chunks of 10 jobs, 5 x (cpu 64, memory 1, disk 1), tick 1",
              "wall_s": round(time.perf_counter() - started, 1), "runs": runs}
    temporary = args.out.with_name(f".{args.out.name}.tmp")
    temporary.write_text(json.dumps(result, indent=0) + "\n")
    temporary.replace(args.out)
    print(f"{len(runs)} runs in {result['wall_s']} s -> {args.out}")
    if old is not None:
        moved = differences(old, runs)
        makespans = sum(1 for k in runs if k in old and old[k][0] != runs[k][0])
        print(f"against {args.against}: {len(moved)} run(s) differ, {makespans} in makespan")
        print("\n".join(moved))
    return 0


if __name__ == "__main__":
    sys.exit(main())
