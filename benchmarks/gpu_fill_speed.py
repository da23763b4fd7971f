"""How long one fill run takes: each GPU policy on the default pod list and the 1,213 GPU nodes, one process.

    python benchmarks/gpu_fill_speed.py            # median of seeds 0-2 per policy

A run is `cloudsim.run.fill.fill_run` from the loaded lists to its curves (shuffling, inflating to 1.3 x the
GPUs, 10,772 pods or so offered through the engine and measured); the lists are read once, outside the timing,
and a first short run compiles the kernels. Writes benchmarks/results/gpu_fill/speed.md. The machine is shared:
compare the policies measured in one run, not runs of different days.
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
             "nodes, one process; seconds per run, median of seeds 0-2.", "", "| policy | pods | s (median) | "
             "s (seeds 0, 1, 2) |", "|---|---|---|---|"]
    for policy in GPU_POLICIES:
        runs = [fill_run(cluster, pods, policy, seed) for seed in (0, 1, 2)]
        times = [r.wall_s for r in runs]
        lines.append(f"| {policy} | {runs[0].pods} | {statistics.median(times):.2f} | "
                     f"{', '.join(f'{t:.2f}' for t in times)} |")
        print(lines[-1], flush=True)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    lines += ["", f"Peak memory of the process: {peak:.0f} MB.", ""]
    write_text_atomically(ROOT / "benchmarks" / "results" / "gpu_fill" / "speed.md", "\n".join(lines))


if __name__ == "__main__":
    main()
