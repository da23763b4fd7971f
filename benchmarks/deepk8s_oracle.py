"""How far below SJF any scheduler can get on Deepk8s's workload: the look-ahead bound on many sequences.

`agents.deepk8s.rollout.RolloutOracle` improves SJF by playing every candidate action out to the end of the
sequence, knowing the arrivals to come; its margin below SJF is room a learned policy could at most
hope for (and no learned policy knows the arrivals). A sequence takes about half a minute on one core, so
this script runs sequences in parallel processes and appends each finished one to a CSV: stopped and
started again with the same ``--out``, it runs only the sequences missing. The summary is the paired
difference oracle - SJF per sequence (`cloudsim.run.paired`, mean weighted turnaround, as % of SJF's
mean) with its 95 % interval.

    python benchmarks/deepk8s_oracle.py --seeds 200:400 --workers 2

Writes ``benchmarks/results/deepk8s/oracle.csv`` (a row per sequence: SJF's and the oracle's mean
weighted turnaround and makespan, the oracle's play-outs) and ``oracle.md``. Seeds 200-399 are the
held-out sequences of `benchmarks/claims.py`; training draws from seed 1,000 up.

``--online`` measures the online look-ahead instead (``knows_arrivals=False``: the play-outs leave out
the jobs to come), a scheduler that could run for real: its margin is room open without knowing the
future. Its columns say ``online`` where the oracle's say ``oracle``, and it writes ``online.csv`` and
``online.md``, so that the two are never mixed in one file.

    python benchmarks/deepk8s_oracle.py --seeds 200:400 --workers 2 --online

It calls the engine directly, not `cloudsim.run`, because `RolloutOracle` is no broker a run can name: it is
built from each sequence's own jobs and cluster (the arrivals it looks ahead to), and its play-outs are read
from it after the run.
"""

from __future__ import annotations

import argparse
import csv
import functools
import multiprocessing
import signal
import sys
from pathlib import Path

from agents import Windowed, make_broker
from agents.deepk8s.config import Deepk8sConfig
from agents.deepk8s.rollout import RolloutOracle
from cloudsim import simulate
from cloudsim.engine.envs import deepk8s_cluster
from cloudsim.run.paired import paired
from traces import deepk8s_workload

RESULTS = Path(__file__).resolve().parent / "results" / "deepk8s"
TASKS = Deepk8sConfig().tasks
COLUMN_TITLES = {"oracle": "rollout oracle (knows the arrivals)", "online": "online look-ahead (does not know them)"}
"""The summary table's column of each look-ahead."""


def fields(look_ahead: str) -> tuple[str, ...]:
    """The CSV's columns for ``look_ahead`` ("oracle" or "online")."""
    return ("seed", "sjf_turnaround", f"{look_ahead}_turnaround", "sjf_makespan", f"{look_ahead}_makespan",
            "playouts")


def sequence(seed: int, tasks: int, look_ahead: str = "oracle") -> dict:
    """SJF and the look-ahead (continuing with SJF) on sequence ``seed``."""
    config = Deepk8sConfig()
    cluster, jobs = deepk8s_cluster(), deepk8s_workload(seed, tasks)

    def sjf():
        return Windowed(make_broker("sjf", seed=seed), config.window)

    oracle = RolloutOracle(jobs, cluster, sjf, window=config.window, max_wait=config.max_wait,
                           knows_arrivals=look_ahead == "oracle")
    row = {"seed": seed}
    for name, broker in (("sjf", sjf()), (look_ahead, oracle)):
        result = simulate(cluster, jobs, broker)
        done = result.jobs
        row[f"{name}_turnaround"] = float(((done.finish_time - done.submit_time) / done.duration).mean())
        row[f"{name}_makespan"] = float(result.summary["makespan"])
    row["playouts"] = oracle.playouts
    return row


def summary(rows: list[dict], look_ahead: str) -> str:
    result = paired([r[f"{look_ahead}_turnaround"] for r in rows], [r["sjf_turnaround"] for r in rows])
    seeds = sorted(r["seed"] for r in rows)
    sjf = sum(r["sjf_turnaround"] for r in rows) / len(rows)
    oracle = sum(r[f"{look_ahead}_turnaround"] for r in rows) / len(rows)
    title, flag = (("the look-ahead bound below", "") if look_ahead == "oracle" else
                   ("an online look-ahead (it does not know the arrivals) against", " --online"))
    return "\n".join([
        f"# Deepk8s: {title} SJF", "",
        f"`python benchmarks/deepk8s_oracle.py{flag}`: {len(rows)} sequences (seeds {seeds[0]}-{seeds[-1]}) of "
        f"{TASKS} tasks, 5 machines, window 10. Mean weighted turnaround; the difference is paired by sequence, "
        "as % of SJF's mean, with its 95 % interval.", "",
        f"| SJF | {COLUMN_TITLES[look_ahead]} | {look_ahead} - SJF [95 % interval] | sequences lower/equal/higher |",
        "|---|---|---|---|",
        f"| {sjf:.4f} | {oracle:.4f} | {result.difference_pct:+.2f} % [{result.low_pct:+.2f}, "
        f"{result.high_pct:+.2f}] | {result.wins}/{result.ties}/{result.losses} |", ""])



def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", default="200:400", help="sequences A:B (default 200:400, the held-out ones)")
    parser.add_argument("--workers", type=int, default=2, help="processes (default 2)")
    parser.add_argument("--online", action="store_true",
                        help="the online look-ahead, whose play-outs leave out the jobs to come, instead of the oracle")
    parser.add_argument("--out", type=Path, default=None,
                        help="the CSV to append to and resume from (default benchmarks/results/deepk8s/oracle.csv, "
                             "or online.csv with --online)")
    args = parser.parse_args()
    look_ahead = "online" if args.online else "oracle"
    args.out = args.out or RESULTS / f"{look_ahead}.csv"
    columns = fields(look_ahead)
    try:
        first, last = (int(v) for v in args.seeds.split(":"))
    except ValueError:
        parser.error(f"--seeds {args.seeds!r}: give A:B, whole numbers, such as 200:400")
    if not 0 <= first < last:
        parser.error(f"--seeds {args.seeds}: give 0 <= A < B")
    if args.workers < 1:
        parser.error(f"--workers {args.workers}: give 1 or more")
    if args.out.is_dir():
        parser.error(f"--out {args.out} is a folder; give a CSV file's path, such as "
                     f"{args.out / (look_ahead + '.csv')}")
    rows = []
    if args.out.exists() and args.out.stat().st_size:  # an empty file: a run stopped before its first row
        with args.out.open(newline="") as file:
            reader = csv.DictReader(file)
            if tuple(reader.fieldnames or ()) != columns:
                what, other = (("the online look-ahead", "without") if args.online else ("the oracle", "with"))
                parser.error(f"{args.out} is not this script's CSV for {what} (columns {reader.fieldnames}; if it "
                             f"was written {other} --online, run that way); give another --out or remove it")
            try:
                rows = [{k: (int(v) if k in ("seed", "playouts") else float(v)) for k, v in r.items()}
                        for r in reader]
            except (TypeError, ValueError):
                parser.error(f"{args.out} has a damaged row (line {reader.line_num}); remove that row (or the "
                             "file) and run again")
    done = {r["seed"] for r in rows}
    todo = [s for s in range(first, last) if s not in done]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    fresh = not args.out.exists() or not args.out.stat().st_size
    from tqdm.auto import tqdm
    # The workers ignore Ctrl-C: the main process takes it, keeps the rows written and stops them.
    pool = multiprocessing.Pool(args.workers, initializer=signal.signal, initargs=(signal.SIGINT, signal.SIG_IGN))
    try:
        with args.out.open("a", newline="") as file:
            writer = csv.DictWriter(file, columns)
            if fresh:
                writer.writeheader()
                file.flush()
            for row in tqdm(pool.imap_unordered(functools.partial(sequence, tasks=TASKS, look_ahead=look_ahead), todo),
                            total=len(todo), unit="sequence", desc=look_ahead):
                writer.writerow(row)
                file.flush()  # a whole row at a time: a stop loses only the sequences running
                rows.append(row)
        pool.close()
    except KeyboardInterrupt:
        pool.terminate()
        print(f"stopped: {len(rows)} sequence(s) kept in {args.out}; run the same command to go on",
              file=sys.stderr)
        return 130
    finally:
        pool.join()
    chosen = sorted((r for r in rows if first <= r["seed"] < last), key=lambda r: r["seed"])
    text = summary(chosen, look_ahead)
    args.out.with_suffix(".md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
