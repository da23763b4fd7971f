"""How long one fill run takes: each GPU policy, and first-fit and best-fit, on the default pod list and the
1,213 GPU nodes, one process; each both ways it can be offered.

    python benchmarks/gpu_fill_speed.py            # median of seeds 0-2 per policy and way

A run is `cloudsim.run.fill.fill_run` from the loaded lists to its curves (shuffling, inflating to 1.3 x the
GPUs, 10,772 pods or so offered through the engine and measured): on the engine's compiled path where the
policy's round runs there (``compiled=None``, gpu-random's does not), and stepped pod by pod through its Python
path (``compiled=False``), alternately for each seed; the lists are read once, outside the timing, and a first
short run compiles the kernels. Writes benchmarks/results/gpu_fill/speed.md. The machine is shared: compare
the ways and policies measured in one run, not runs of different days.
"""

from __future__ import annotations

import resource
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agents import GPU_POLICIES  # noqa: E402
from cloudsim.run.fill import fill_run  # noqa: E402
from cloudsim.run.leaderboard import GPU_DATA  # noqa: E402
from cloudsim.run.output import write_text_atomically  # noqa: E402
from traces.openb import load_openb, machines_openb  # noqa: E402
from traces.data import data_folder  # noqa: E402

DATA = data_folder() / GPU_DATA


def main() -> None:
    if not (DATA / "openb_pod_list_default.csv").is_file():
        sys.exit(f"the openb files are not in {DATA}; set CLOUDSIM_DATA to the folder holding alibaba/gpu-v2023/")
    pods = load_openb(DATA / "openb_pod_list_default.csv").jobs
    cluster = machines_openb(DATA / "openb_node_list_gpu_node.csv")
    fill_run(cluster, pods[:30], "fgd", 0)  # compiles the kernels (numba caches them on disk)
    lines = ["# One fill run", "", "`python benchmarks/gpu_fill_speed.py`: the default pod list on the 1,213 GPU "
             "nodes, one process; seconds per run, median of seeds 0-2, offered on the compiled path where the "
             "policy's round runs there and stepped through the Python path, alternately.", "",
             "| policy | pods | compiled path, s (median) | seeds 0, 1, 2 | stepped, s (median) | seeds 0, 1, 2 | "
             "stepped / compiled |", "|---|---|---|---|---|---|---|"]
    for policy in (*GPU_POLICIES, "first-fit", "best-fit"):
        runs = {way: [] for way in (None, False)}
        for seed in (0, 1, 2):
            for way in runs:
                runs[way].append(fill_run(cluster, pods, policy, seed, compiled=way))
        assert all(a.row() | {"wall_s": 0} == b.row() | {"wall_s": 0} for a, b in zip(*runs.values()))
        times = {way: [r.wall_s for r in done] for way, done in runs.items()}
        medians = {way: statistics.median(t) for way, t in times.items()}
        lines.append(f"| {policy} | {runs[None][0].pods} | {medians[None]:.2f} | "
                     f"{', '.join(f'{t:.2f}' for t in times[None])} | {medians[False]:.2f} | "
                     f"{', '.join(f'{t:.2f}' for t in times[False])} | {medians[False] / medians[None]:.2f}x |")
        print(lines[-1], flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines += ["", f"Peak memory of the process: {peak:.0f} MB.", ""]
    write_text_atomically(ROOT / "benchmarks" / "results" / "gpu_fill" / "speed.md", "\n".join(lines))


if __name__ == "__main__":
    main()
