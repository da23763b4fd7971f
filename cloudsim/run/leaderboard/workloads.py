"""The leaderboard's workloads: what each is, the measures its table shows and ranks, and how a cell of it runs
(a replay's `RunConfig`, or a GPU fill). `cloudsim.run.config.LEADERBOARD_WORKLOADS` holds their names."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from agents.registry import broker_names
from cloudsim.run.config import ClusterConfig, RunConfig, SimulationConfig, WorkloadConfig
from cloudsim.engine.metrics import MEASURES, shown_in
from cloudsim.run.compare_fill import AT

METRICS = shown_in("leaderboard")
GPU_FILL_METRICS = (f"unallocated_gpu_pct_at_{AT}", f"fragmentation_gpu_pct_at_{AT}", "failed_pods")
GPU_REPLAY_METRICS = ("gpu_fragmentation_pct_mean", "gpu_allocated_pct_mean", "avg_job_slowdown", "makespan")
HIGHER_IS_BETTER = frozenset(measure.key for measure in MEASURES if measure.higher_is_better)
"""The measures where a higher value is the better one; on every other measure lower is better."""
BASELINE = "first-fit"
"""The broker every other is compared with, episode by episode (`cloudsim.run.paired`)."""
GPU_DATA = "alibaba/gpu-v2023"


@dataclass(frozen=True)
class BoardWorkload:
    """One workload of the leaderboard: the files it needs under the data folder, and how to run a cell:
    a replay (``make(paths of those files, seed)``), or with ``fill`` a fill run of the pod list and node list
    in ``files`` (`cloudsim.run.fill`) at that factor. ``metrics`` are its table's columns, ``ranked_by``
    those brokers are ranked by (each on its own), and ``shown`` more columns that are not ranked."""

    description: str
    files: tuple[str, ...]
    make: Callable[[list[str], int], RunConfig] | None = None
    seeded: bool = False  # generated, or shuffled by the seed: one cell per seed
    metrics: tuple[str, ...] = METRICS
    ranked_by: tuple[str, ...] = METRICS
    shown: tuple[str, ...] = ()
    fill: float | None = None
    gpu: bool = False  # a GPU cluster: the GPU policies run here, and only here

    def brokers(self, brokers: tuple[str, ...]) -> tuple[str, ...]:
        """The brokers of ``brokers`` that run on this workload (the GPU policies on GPU workloads only)."""
        return brokers if self.gpu else tuple(b for b in brokers if b not in broker_names(devices="required"))


REAL_LOADS = (0.8, 1.1)
"""The offered loads of the real-trace workloads: 0.8, below saturation, where queues form in bursts of
arrivals, and 1.1, above it, where they grow until the arrivals end (`traces.load`)."""
REAL_CHUNKS = 6
"""Chunks (episodes) of each real-trace workload: chunks 0 to 5, compared with first-fit episode by episode."""
REAL_TRACES = {
    # name: (title, machine table, files, format, jobs per chunk, machines drawn from the table)
    "v2017": ("Alibaba v2017 batch_task.csv", "server_event.csv",
              ("alibaba/v2017/batch_task.csv", "alibaba/v2017/server_event.csv"), "alibaba-v2017", 10, 3),
    "v2018": ("Alibaba v2018 DAG sample", "machine_meta.csv",
              ("alibaba/v2018/selected_DAGs.csv", "alibaba/v2018/machine_meta.csv"), "alibaba-v2018", 10, 2),
}
"""The real traces the leaderboard replays at `REAL_LOADS`: chunks of 10 jobs, each on a few of the trace's
own machines. At a given load, fewer machines mean a longer arrival span; on more (5, as in DeepJS's
experiments) the chunks' longest jobs outlast it, and most brokers' makespans are one job's length (at 0.8,
4 distinct makespans among the 13 heuristics on either trace; on 3 and 2 machines, 8 and 9)."""


GRID_SIGNAL = ("carbon/gb_ci.csv", "2020-01-01")
"""The grid signal the real-trace workloads are metered on, and the date of their time 0: Great Britain's carbon
intensity of 2020 (the data of Let's Wait Awhile)."""
ENERGY_SHOWN = ("energy_kwh", "carbon_kg")
"""What the real-trace workloads show of each run's energy, every machine drawing the shipped power model
(`cloudsim.engine.energy.DEFAULT_POWER`), and its carbon on `GRID_SIGNAL` (shown, not ranked)."""


def _alibaba_at_load(trace_format: str, chunk_size: int, machines: int,
                     load: float) -> Callable[[list[str], int], RunConfig]:
    """Chunks of an Alibaba trace, each at offered ``load``, on machines drawn from its machine table, metered
    on the grid signal (``paths``: trace, table, signal)."""
    return lambda paths, seed: RunConfig(
        workload=WorkloadConfig(paths[0], format=trace_format, chunk_size=chunk_size, chunks=(0, REAL_CHUNKS),
                                machine_table=paths[1], load=load, seed=seed),
        cluster=ClusterConfig(machines=machines),
        simulation=SimulationConfig(power="default", carbon=paths[2], start=GRID_SIGNAL[1]))


def _real_trace_workloads() -> dict[str, BoardWorkload]:
    return {f"{name}@{load:g}": BoardWorkload(
        f"{title}, chunks 0-{REAL_CHUNKS - 1} of {size} jobs, each chunk's submit times scaled to an offered "
        f"load of {load:g} on {machines} machines drawn from {table} (seed 0, keeping its mix of shapes); energy "
        f"with the default power model, carbon on {GRID_SIGNAL[0]} from {GRID_SIGNAL[1]}",
        (*files, GRID_SIGNAL[0]), _alibaba_at_load(trace_format, size, machines, load),
        shown=("offered_load", *ENERGY_SHOWN))
        for name, (title, table, files, trace_format, size, machines) in REAL_TRACES.items() for load in REAL_LOADS}


LEADERBOARD_WORKLOADS: dict[str, BoardWorkload] = {
    "cloudsimpy": BoardWorkload(
        "CloudSimPy's jobs.csv (Alibaba v2017), chunks 0-4 of 10 jobs, DeepJS's 5 machines, tick 1",
        ("cloudsimpy/jobs.csv",),
        lambda paths, seed: RunConfig(
            workload=WorkloadConfig(paths[0], format="cloudsimpy", chunk_size=10, chunks=(0, 5), seed=seed),
            cluster=ClusterConfig(5, {"cpu": 64.0, "memory": 1.0}),  # its disk demands are all 0
            simulation=SimulationConfig(tick=1.0))),
    **_real_trace_workloads(),
    "swf": BoardWorkload(
        "Lublin's SWF model log, jobs 0-199, on its 256 nodes",
        ("swf/lublin_256.swf",),
        lambda paths, seed: RunConfig(workload=WorkloadConfig(paths[0], jobs=(0, 200), seed=seed))),
    "synthetic": BoardWorkload(
        "the built-in alibaba-like generator, 30 jobs on 3 machines of 64 cpu and 1 memory (work queues), one "
        "workload per seed",
        (),
        lambda paths, seed: RunConfig(workload=WorkloadConfig(synthetic_jobs=30, seed=seed),
                                      cluster=ClusterConfig(3, {"cpu": 64.0, "memory": 1.0})),
        seeded=True),
    "gpu-fill": BoardWorkload(
        "the Alibaba GPU trace of 2023, default pod list, filled to 1.3 x the 6,212 GPUs of the 1,213 GPU nodes "
        "(Weng et al.'s experiment), one shuffle per seed; ranked by unallocated GPU at 100 % arrived",
        (f"{GPU_DATA}/openb_pod_list_default.csv", f"{GPU_DATA}/openb_node_list_gpu_node.csv"),
        seeded=True, metrics=GPU_FILL_METRICS, ranked_by=GPU_FILL_METRICS[:1], fill=1.3, gpu=True),
    "gpu-replay": BoardWorkload(
        "the same pod list replayed at its creation times, each pod for its lifetime in the trace, on the GPU "
        "nodes; ranked by fragmentation over time",
        (f"{GPU_DATA}/openb_pod_list_default.csv", f"{GPU_DATA}/openb_node_list_gpu_node.csv"),
        lambda paths, seed: RunConfig(workload=WorkloadConfig(paths[0], format="openb", machine_table=paths[1],
                                                              seed=seed)),
        metrics=GPU_REPLAY_METRICS, ranked_by=GPU_REPLAY_METRICS[:1], gpu=True),
}
"""What each of `cloudsim.run.config.LEADERBOARD_WORKLOADS` is (its names are the config's)."""
