"""The Alibaba GPU trace of 2023 (``openb``): pod lists as jobs, node lists as GPU clusters.

The trace (../shared/data/alibaba/gpu-v2023, its study described in docs/gpu.md) has a node list
(``sn, cpu_milli, memory_mib, gpu, model``) and pod lists (``name, cpu_milli, memory_mib, num_gpu,
gpu_milli, gpu_spec, qos, pod_phase, creation_time, deletion_time, scheduled_time``). Units are kept:
resources ``cpu`` in milli-cores and ``memory`` in MiB; a node's ``gpu`` devices of `DEVICE_MILLI`
milli-GPU each and its GPU ``model`` (a machine attribute).

A pod is a job of one task with one instance, submitted at ``creation_time``. A list without ``gpu_spec``
accepts any model; a list without the times (the published ``multigpu`` variants) has its pods submitted one
a second in file order, each lasting 1 s, and says so in its notes: such a list serves the fill experiment,
which sets its own times, not a replay over time.

* ``num_gpu`` 0: a CPU-only pod (``gpu_milli`` must be 0);
* ``num_gpu`` 1 and ``gpu_milli`` below 1,000: a sharing pod (part of one device);
* ``gpu_milli`` 1,000: an exclusive pod (``num_gpu`` whole free devices);
* ``gpu_spec``: the GPU models it accepts, separated by ``|`` (empty: any).

Its duration is its lifetime in the trace: ``deletion_time - scheduled_time``. A pod the trace never
scheduled (no ``scheduled_time``: pending when the trace was taken) has no lifetime; it keeps
``deletion_time - creation_time``, the time it stayed in the cluster's queue, and is counted in
``notes["never scheduled"]``. The fill experiment (`cloudsim.run.fill`) ignores durations: nothing departs.

Rows that cannot be a pod are counted skips, by reason: ``gpu_milli outside 0..1000``,
``negative or non-whole resources``, ``gpu_milli without num_gpu`` (a GPU share but no GPU),
``num_gpu without gpu_milli``, ``several GPUs shared`` (``num_gpu`` above 1 with ``gpu_milli``
below 1,000, which the model does not have), ``bad times`` (missing or negative creation time, a
deletion before it, or a scheduling outside them). A missing column, an unreadable file or a file with no
pod left is an error that names the file and the fix.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from cloudsim.engine.specs import DEVICE_MILLI, ClusterSpec, DeviceRequest, JobSpec, TaskSpec
from traces.rawcsv import EmptyWorkloadError, TraceFormatError, exact_floats, read_text_table
from traces.workload import Workload

__all__ = ["NODE_COLUMNS", "POD_COLUMNS", "load_openb", "machines_openb"]

POD_COLUMNS = ("name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli")
"""The columns every pod list has; ``gpu_spec`` and the times (`POD_TIMES`) are read where present."""
POD_TIMES = ("creation_time", "deletion_time", "scheduled_time")
NODE_COLUMNS = ("sn", "cpu_milli", "memory_mib", "gpu", "model")
MODEL = "model"
"""The machine attribute a node's GPU model is, and a pod's ``gpu_spec`` constrains."""


class _Table:
    """An openb CSV file read as text (`traces.rawcsv.read_text_table`): its columns by name."""

    def __init__(self, path: Path, columns: tuple[str, ...], what: str) -> None:
        if not path.is_file():
            raise FileNotFoundError(f"{path}: no such {what} file")
        self.names, self.table, self.first_line = read_text_table(path)
        missing = [c for c in columns if c not in self.names]
        if missing:
            raise TraceFormatError(f"{path}: missing column(s) {', '.join(missing)}; an openb {what} has "
                                   f"{', '.join(columns)}")

    def __len__(self) -> int:
        return self.table.num_rows

    def __contains__(self, column: str) -> bool:
        return column in self.names

    def text(self, column: str) -> np.ndarray:
        return np.asarray(self.table.column(self.names.index(column)).to_pylist(), dtype=object)

    def numbers(self, column: str) -> np.ndarray:
        """The column's numbers, exact (NaN where a field is empty or not a number)."""
        return exact_floats(self.table.column(self.names.index(column)))

    def whole(self, column: str) -> np.ndarray:
        """Whole numbers >= 0 as float64, NaN elsewhere (so a bad value is counted, not cast)."""
        numbers = self.numbers(column)
        with np.errstate(invalid="ignore"):
            return np.where((numbers >= 0) & (numbers == np.floor(numbers)), numbers, np.nan)


def load_openb(path: str | Path) -> Workload:
    """The pods of an openb pod list as jobs (one task, one instance each), in creation order (stable)."""
    table = _Table(Path(path), POD_COLUMNS, "pod list")
    cpu, memory = table.whole("cpu_milli"), table.whole("memory_mib")
    count, milli = table.whole("num_gpu"), table.numbers("gpu_milli")
    timed = all(c in table for c in POD_TIMES)
    if timed:
        created, deleted, scheduled = (table.numbers(c) for c in POD_TIMES)
    else:  # the multigpu lists: no times (a list for the fill experiment, not for a replay over time)
        created = np.arange(len(table), dtype=np.float64)
        scheduled, deleted = created.copy(), created + 1.0
    reasons = {
        "gpu_milli outside 0..1000": ~((milli >= 0) & (milli <= DEVICE_MILLI) & (milli == np.floor(milli))),
        "negative or non-whole resources": np.isnan(cpu) | np.isnan(memory) | np.isnan(count),
        "gpu_milli without num_gpu": (count == 0) & (milli > 0),
        "num_gpu without gpu_milli": (count > 0) & (milli == 0),
        "several GPUs shared": (count > 1) & (milli < DEVICE_MILLI),
        "bad times": ~(created >= 0) | ~(deleted >= created) | (scheduled < created) | (scheduled > deleted),
    }
    skipped, bad = {}, np.zeros(len(table), dtype=bool)
    for reason, hit in reasons.items():
        hit &= ~bad  # each row counted once, under its first reason
        if hit.any():
            skipped[reason] = int(hit.sum())
        bad |= hit
    keep = np.flatnonzero(~bad)
    if len(keep) == 0:
        raise EmptyWorkloadError(f"{path}: no pod is left to replay (skipped: {skipped or 'the file has no rows'})")
    never = np.isnan(scheduled)
    lifetime = np.where(never, deleted - created, deleted - scheduled)
    names = table.text("name")
    specs = table.text("gpu_spec") if "gpu_spec" in table else np.full(len(table), "", dtype=object)
    jobs = []
    for r in keep.tolist():
        gpus = int(count[r])
        models = tuple(m for m in str(specs[r]).split("|") if m)
        task = TaskSpec(0, 1, {"cpu": float(cpu[r]), "memory": float(memory[r])}, float(lifetime[r]),
                        devices=DeviceRequest(gpus, int(milli[r])) if gpus else None,
                        accepts={MODEL: models} if models else ())
        jobs.append(JobSpec(names[r] or f"row-{r}", float(created[r]), (task,)))
    jobs.sort(key=lambda job: job.submit_time)
    notes = {"never scheduled": int(never[keep].sum())} if never[keep].any() else {}
    if not timed:
        notes["no times: one pod a second in file order, lasting 1 s"] = len(jobs)
    return Workload(jobs, skipped, {"pods": str(path)}, notes)


def machines_openb(path: str | Path) -> ClusterSpec:
    """The nodes of an openb node list as a cluster: resources ``cpu`` (milli) and ``memory`` (MiB), each
    node's GPUs as devices and its GPU model as the attribute ``model``.

    A node list is the cluster, so a bad row is an error naming it, not a skip.
    """
    table = _Table(Path(path), NODE_COLUMNS, "node list")
    if len(table) == 0:
        raise EmptyWorkloadError(f"{path}: has no nodes")
    cpu, memory, gpus = table.whole("cpu_milli"), table.whole("memory_mib"), table.whole("gpu")
    models, names = table.text("model"), table.text("sn")
    bad = np.isnan(cpu) | np.isnan(memory) | np.isnan(gpus)
    if bad.any():
        r = int(np.argmax(bad))
        raise TraceFormatError(f"{path}: node {names[r]!r} (row {r + 2}): cpu_milli, memory_mib and gpu "
                               "must be whole numbers >= 0; fix or remove the row")
    seen: dict[str, int] = {}
    for r, name in enumerate(names.tolist()):
        if name in seen:
            raise TraceFormatError(f"{path}: node {name!r} is listed twice (rows {seen[name] + 2} and {r + 2}); "
                                   "each node needs its own name: remove or rename one")
        seen[name] = r
    mismatch = (gpus == 0) != (models == "")
    if mismatch.any():
        r = int(np.argmax(mismatch))
        has = "a model but no GPU" if gpus[r] == 0 else "GPUs but no model"
        raise TraceFormatError(f"{path}: node {names[r]!r} (row {r + 2}) has {has}; a GPU node names "
                               "its model and a CPU-only node has gpu 0 and no model")
    return ClusterSpec(("cpu", "memory"), tuple(zip(cpu.tolist(), memory.tolist())),
                       machine_ids=tuple(names.tolist()),
                       devices=tuple(int(g) for g in gpus), attributes={MODEL: tuple(models.tolist())})
