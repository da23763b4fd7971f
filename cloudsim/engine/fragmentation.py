"""GPU fragmentation (Weng et al., USENIX ATC 2023): how much of a cluster's free GPU its workload cannot use.

The measure of the GPU-sharing study (docs/gpu.md, "The reference study"), as a metric any run on a
cluster with devices can report:

* the *target workload* is the workload's pods grouped by shape (cpu, milli-GPU per device, GPUs,
  accepted models; memory is ignored), the most frequent shapes that cover 95 % of the pods, with their
  frequencies renormalised to probabilities p_m (`TargetWorkload.of`);
* a node's fragmentation for shape m, in milli-GPU, with idle its free milli-GPU: all of idle when m cannot
  run there at all (m asks for no GPU, the node's model is not accepted, m's cpu does not fit, or fewer than
  m's GPUs have m's milli free); otherwise the free milli-GPU of the devices with less free than m's milli;
* a node's fragmentation F_n = sum over m of p_m F_n(m), the cluster's F = sum over nodes, and the
  fragmentation rate F / idle milli-GPU of the cluster.

`node_fragmentation` computes F_n for many node states at once (vectorised over nodes, shapes and
devices); `FragmentationMeter` keeps every node's F_n and recomputes only the nodes that changed since
it last looked (`cloudsim.engine.cluster.ClusterState.machine_change`), so reading it after every decision
costs what the decision changed, not the cluster's size. `GpuSampler` samples the allocated GPU and the
fragmentation after every decision round of a run (a `cloudsim.Simulation`'s ``on_round``), for a run's
summary or a figure over time.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import dataclass
from typing import Sequence

import numpy as np

from cloudsim.engine.specs import DEVICE_MILLI, ClusterSpec, JobSpec

__all__ = ["COVERAGE", "FragmentationMeter", "GpuSampler", "TargetWorkload", "node_fragmentation"]

COVERAGE = 0.95
"""The share of a workload's pods its target workload's shapes cover."""


@dataclass(frozen=True)
class TargetWorkload:
    """The shapes a fragmentation is measured against, most frequent first, with their probabilities.

    ``cpu``, ``milli``, ``count``: per shape, cpu asked (in the cluster's cpu unit), milli-GPU per device,
    GPUs (0: a CPU-only shape); ``accepts``: per shape, the accepted values of the attribute ``attribute``
    (empty: any); ``p``: probabilities summing to 1.
    """

    cpu: np.ndarray
    milli: np.ndarray
    count: np.ndarray
    accepts: tuple[tuple[str, ...], ...]
    p: np.ndarray
    attribute: str = "model"

    def __post_init__(self) -> None:
        cpu, p = (np.ascontiguousarray(v, dtype=np.float64).reshape(-1) for v in (self.cpu, self.p))
        milli, count = (np.asarray(v).reshape(-1) for v in (self.milli, self.count))
        whole = all(v.dtype.kind in "iu" or (v.dtype.kind == "f" and np.isfinite(v).all() and (v == np.round(v)).all())
                    for v in (milli, count))
        problems = [why for why, bad in (
            ("it has no shape", len(p) == 0),
            (f"cpu, milli, count, accepts and p must have one entry per shape (got {len(cpu)}, {len(milli)}, "
             f"{len(count)}, {len(self.accepts)} and {len(p)})",
             not len(cpu) == len(milli) == len(count) == len(self.accepts) == len(p)),
            ("cpu must be finite and >= 0", not (np.isfinite(cpu) & (cpu >= 0)).all()),
            (f"milli must be whole numbers in [0, {DEVICE_MILLI}] and count whole numbers >= 0",
             not whole or not ((milli >= 0) & (milli <= DEVICE_MILLI)).all() or not (count >= 0).all()),
            ("p must be finite and >= 0", not (np.isfinite(p) & (p >= 0)).all()),
        ) if bad]
        if problems:
            raise ValueError(f"TargetWorkload: {'; '.join(problems)}; TargetWorkload.of(jobs) builds one from a "
                             "workload")
        for name, value in (("cpu", cpu), ("milli", milli.astype(np.int64)), ("count", count.astype(np.int64)),
                            ("p", p)):
            object.__setattr__(self, name, value)

    @classmethod
    def of(cls, jobs: Sequence[JobSpec], cpu: str = "cpu", attribute: str = "model",
           coverage: float = COVERAGE) -> "TargetWorkload":
        """The target workload of ``jobs``' tasks (each instance one pod): shapes by frequency (ties: larger
        cpu, then milli, then GPUs), the most frequent covering ``coverage`` of the pods, renormalised."""
        counts: Counter = Counter()
        for job in jobs:
            for task in job.tasks:
                d = task.devices
                models = dict(task.accepts).get(attribute, ())
                counts[(float(task.demand.get(cpu, 0.0)), 0 if d is None else d.milli, 0 if d is None else d.count,
                        tuple(models))] += task.instances
        if not counts:
            raise ValueError("a target workload needs at least one task")
        shapes = sorted(counts.items(), key=lambda kv: (-kv[1], -kv[0][0], -kv[0][1], -kv[0][2]))
        total, kept, covered = sum(counts.values()), [], 0
        for shape, n in shapes:
            kept.append((shape, n))
            covered += n
            if covered >= coverage * total:
                break
        weight = np.array([n for _, n in kept], dtype=np.float64)
        return cls(np.array([s[0] for s, _ in kept], dtype=np.float64),
                   np.array([s[1] for s, _ in kept], dtype=np.int64),
                   np.array([s[2] for s, _ in kept], dtype=np.int64), tuple(s[3] for s, _ in kept),
                   weight / weight.sum(), attribute)

    def accepted_by(self, models: Sequence[str]) -> np.ndarray:
        """Whether each shape accepts each machine, whose values of ``attribute`` are ``models`` (one per
        machine): bool (machines, shapes)."""
        names = sorted(set(models))
        codes = np.array([names.index(m) for m in models], dtype=np.int64)
        by_name = np.array([[not accepts or name in accepts for accepts in self.accepts] for name in names],
                           dtype=bool).reshape(len(names), len(self.accepts))
        return by_name[codes]


def node_fragmentation(free_cpu: np.ndarray, device_free: np.ndarray, accepted: np.ndarray,
                       target: TargetWorkload) -> np.ndarray:
    """F_n of node states: ``free_cpu`` (nodes,), ``device_free`` (nodes, devices; -1 for no device),
    ``accepted`` (nodes, shapes): whether each shape accepts each node's model. Returns (nodes,) in milli-GPU.

    Compiled (`cloudsim.engine.kernels.fragmentation`, numba): FGD asks for a few states at every decision.
    """
    from cloudsim.engine.kernels import fragmentation  # numba: imported when a fragmentation is first asked for

    out = np.empty(len(free_cpu))
    fragmentation(np.ascontiguousarray(free_cpu, dtype=np.float64), np.ascontiguousarray(device_free, dtype=np.int64),
                  np.ascontiguousarray(accepted, dtype=np.bool_), target.cpu, target.milli, target.count, target.p, out)
    return out


class FragmentationMeter:
    """Every node's fragmentation F_n during a run, kept up to date incrementally.

    ``state`` is a `cloudsim.engine.cluster.ClusterState` (or anything with ``free``, ``device_free``,
    ``machine_change`` and ``changes``); ``cpu`` names its cpu resource. `update` recomputes the nodes
    changed since the last update; `total` is the cluster's F and `rate` the fragmentation rate.
    """

    def __init__(self, cluster: ClusterSpec, state, target: TargetWorkload, cpu: str = "cpu") -> None:
        self.state, self.target = state, target
        self.cpu = cluster.resources.index(cpu)
        self.accepted = target.accepted_by(cluster.attribute(target.attribute))  # (nodes, shapes)
        self.capacity = int(cluster.device_counts().sum()) * DEVICE_MILLI  # the cluster's milli-GPU
        self.nodes = node_fragmentation(state.free[:, self.cpu], state.device_free, self.accepted, target)
        self._idle = np.maximum(state.device_free, 0).sum(axis=1)  # each node's free milli-GPU
        self._seen = state.changes

    def update(self) -> None:
        """Recompute the nodes whose state changed since the last update."""
        state = self.state
        if state.changes == self._seen:
            return
        changed = np.flatnonzero(state.machine_change > self._seen)
        self.nodes[changed] = node_fragmentation(state.free[changed, self.cpu], state.device_free[changed],
                                                 self.accepted[changed], self.target)
        self._idle[changed] = np.maximum(state.device_free[changed], 0).sum(axis=1)
        self._seen = state.changes

    @property
    def total(self) -> float:
        """The cluster's fragmentation F, in milli-GPU."""
        self.update()
        return float(self.nodes.sum())

    @property
    def idle(self) -> int:
        """The cluster's free milli-GPU."""
        self.update()
        return int(self._idle.sum())

    @property
    def rate(self) -> float:
        """F over the cluster's free milli-GPU (NaN when no GPU is free)."""
        idle = self.idle
        return self.total / idle if idle else float("nan")


class GpuSampler:
    """Samples (time, allocated GPU %, fragmentation % of the cluster's GPUs) after every decision round, the
    empty ones included, as a `cloudsim.Simulation`'s ``on_round``: ``Simulation(..., on_round=sampler)``.

    Each sample is the state the round's decisions left, whatever the broker, and holds until the next (a
    second round at one instant replaces the first's sample); on the engine's compiled path as on its Python
    path, with the same samples. `summary` gives the run's time-weighted means and peak.
    """

    def __init__(self, cluster: ClusterSpec, target: TargetWorkload) -> None:
        self.cluster, self.target = cluster, target
        self.meter: FragmentationMeter | None = None
        self.samples: list[tuple[float, float, float]] = []

    def __call__(self, time: float, machines) -> None:
        if self.meter is None or self.meter.state is not machines:  # (the compiled path hands its own machines)
            self.meter = FragmentationMeter(self.cluster, machines, self.target)
        idle, capacity = self.meter.idle, self.meter.capacity
        sample = (time, 100 * (capacity - idle) / capacity, 100 * self.meter.total / capacity)
        if self.samples and self.samples[-1][0] == time:
            self.samples[-1] = sample
        else:
            self.samples.append(sample)

    def curves(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Sample times, allocated GPU % and fragmentation % (empty when no round was held)."""
        if not self.samples:
            return np.empty(0), np.empty(0), np.empty(0)
        return tuple(np.array(column) for column in zip(*self.samples))

    def summary(self, until: float) -> dict:
        """Time-weighted means over [first round, ``until``] and the peak allocation, for a run's summary."""
        times, allocated, fragmentation = self.curves()
        if len(times) == 0:
            return {"gpu_allocated_pct_mean": 0.0, "gpu_allocated_pct_peak": 0.0,
                    "gpu_fragmentation_pct_mean": math.nan}
        span = np.clip(np.diff(np.append(times, max(until, times[-1]))), 0, None)
        if span.sum() == 0:
            span = np.ones_like(times)
        return {"gpu_allocated_pct_mean": float((allocated * span).sum() / span.sum()),
                "gpu_allocated_pct_peak": float(allocated.max()),
                "gpu_fragmentation_pct_mean": float((fragmentation * span).sum() / span.sum())}
