"""The placement policies of GPU-sharing clusters (Weng et al., USENIX ATC 2023), as brokers.

Each takes the first waiting task (arrival order) that fits some machine and scores every machine that fits
it, on 0-100, highest wins; as in the paper's reference simulator scores are whole numbers (truncated) and
ties go to the first machine of a permutation of the machines drawn with the broker's seed.
docs/gpu.md ("The reference study") gives the formulas; with idle a machine's free milli-GPU, cpu_left its
free cpu and G = GPUs x milli of the task:

* ``fgd`` (`FragmentationGradientDescent`): the decrease of the machine's fragmentation
  (`cloudsim.engine.fragmentation`) the placement makes, Delta, scored int(100 sigmoid(Delta / 1000)); a sharing task
  tries every device with room and keeps the best (the first on ties) and names it;
* ``gpu-best-fit``: s = 0.5 (cpu_left - cpu) / 128,000 + 0.5 (idle - G) / 8,000, int(100 (1 - s)), then
  min-max scaled over the fitting machines;
* ``gpu-dot-product``: int(100 (1 - dot / 2)) with dot the product of (cpu_left / 128,000, idle / 8,000) and
  (cpu / 128,000, G / 8,000): the smallest product wins;
* ``gpu-packing``: a task with GPUs prefers machines whose devices are partly used, then machines with some
  used, then empty ones (the reference study's formula); a CPU-only task scores 0 everywhere;
* ``gpu-clustering``: a GPU task prefers machines running GPU tasks of its kind only (a share, or k whole
  GPUs), then of its kind among others, then none, plus a term for how busy the machine's GPUs are;
* ``gpu-random``: a fitting machine at random, and a random device with room.

Machines are scored through the engine's view (``view.free``, ``view.device_free``, ``view.device_users``);
the engine applies its default device rule where a policy names no device. FGD keeps each machine's score
per task shape and recomputes only the machines that changed since (``view.machines_changed_since``), in a
compiled loop, so its cost per decision follows what the last decisions changed, not the cluster's size.
The engine runs gpu-best-fit's, gpu-dot-product's, gpu-packing's, gpu-clustering's and (given its target
workload) FGD's rounds compiled (`compiled_round`, `cloudsim.engine.compiled`): the same placements, bit for bit.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

import numpy as np

from typing import Sequence

from agents.registry import broker_spec
from cloudsim.engine.broker import ClusterView, CompiledRound, Decision
from cloudsim.engine.checks import is_whole
from cloudsim.engine.fragmentation import TargetWorkload
from cloudsim.engine.specs import DEVICE_MILLI

__all__ = ["target_options", "ExactFragmentationGradientDescent",
           "FragmentationGradientDescent", "GpuBestFit", "GpuClustering", "GpuDotProduct",
           "GpuPacking", "GpuRandom", "NodeScorer"]

CPU_SCALE = 128_000  # the largest node's milli-cores
GPU_SCALE = 8 * DEVICE_MILLI  # the largest node's milli-GPU


class NodeScorer(ABC):
    """The first waiting task that fits somewhere, on the best-scoring machine (ties: the seeded permutation).

    Subclasses define `scores`: whole-number scores of the fitting machines, and optionally the devices each
    would take (None: the engine's default rule).
    """

    name = "node-scorer"
    empty_rounds = False  # nothing waiting: no round needed (`cloudsim.Simulation.run`)

    def __init__(self, seed: int | None = 0) -> None:
        self.seed = 0 if seed is None else seed
        self._episode = None  # the episode `_start` prepared for

    def _start(self, view: ClusterView) -> None:
        """Per episode: the tie-breaking order, and what a subclass keeps."""
        self._episode = view.episode
        self.rng = np.random.default_rng(self.seed)
        order = self.rng.permutation(view.num_machines)
        self.rank = np.empty(view.num_machines, dtype=np.int64)
        self.rank[order] = np.arange(view.num_machines)
        self.cpu = view.resources.index("cpu") if "cpu" in view.resources else 0
        self._kept: dict[tuple, tuple] = {}  # task shape -> (scores, devices, the change count they follow)

    compiled_rule: str | None = None
    """The engine's compiled round of a built-in policy (`cloudsim.engine.broker.CompiledRound.GPU_POLICIES`); None:
    its rounds are not compiled."""

    def compiled_round(self, resources: Sequence[str]) -> CompiledRound | None:
        """The engine runs a built-in policy's round compiled where it can (`cloudsim.engine.compiled`): not a subclass
        that changes how machines are scored or chosen, which its own ``decide`` then runs."""
        owner = next((cls for cls in type(self).__mro__ if cls.__dict__.get("compiled_rule")), None)
        if owner is None or any(getattr(type(self), name) is not getattr(owner, name) for name in (
                "decide", "scores", "machine_scores", "finish", "_start", "_task", "_nodes", "_round_options")):
            return None
        seed = self.seed
        if not (is_whole(seed) and seed >= 0):
            return None  # (a seed numpy's default_rng takes otherwise, or refuses: its own decide says which)
        return CompiledRound(owner.compiled_rule, columns=(resources.index("cpu") if "cpu" in resources else 0,),
                             seed=int(seed), **self._round_options())

    def _round_options(self) -> dict:
        """What the policy's compiled round takes besides its rule, cpu column and seed."""
        return {}

    def decide(self, view: ClusterView) -> Decision | None:
        if view.episode != self._episode:
            self._start(view)
        if view.num_tasks == 1:  # (most rounds of a fill: one pod) its column alone
            task, nodes = 0, np.flatnonzero(view.machines_fitting(0))
            if len(nodes) == 0:
                return None
        else:
            placeable = np.flatnonzero(view.tasks_fitting_some())
            if len(placeable) == 0:
                return None
            task = int(placeable[0])
            nodes = np.flatnonzero(view.machines_fitting(task))
        scores, devices = self.scores(view, task, nodes)
        best = np.flatnonzero(scores == scores.max())
        k = int(best[np.argmin(self.rank[nodes[best]])]) if len(best) > 1 else int(best[0])
        return Decision(int(nodes[k]), task, 1, devices=None if devices is None else tuple(devices[k].tolist()))

    kept = True
    """Whether a machine's score depends only on its own state and the task's shape (cpu, GPUs, milli): then the
    scores are kept per shape between decisions and only the machines changed since are scored again."""
    gpu_only = False
    """Whether the policy scores GPU tasks only: a CPU-only task then scores 0 everywhere (ties: the permutation)."""

    def scores(self, view: ClusterView, task: int, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray | None]:
        """Whole-number scores of ``nodes`` for ``task``, and the devices each would take, one row per node
        (None: the engine's default rule)."""
        key = self._task(view, task)
        if self.gpu_only and key[1] == 0:
            return np.zeros(len(nodes), dtype=np.int64), None
        if not self.kept:
            return self.machine_scores(view, task, nodes)
        scores, devices, seen = self._kept.get(key, (None, None, -1))
        changed = np.arange(view.num_machines) if scores is None else view.machines_changed_since(seen)
        if len(changed):
            fresh, fresh_devices = self.machine_scores(view, task, changed)
            if scores is None:
                scores = np.empty(view.num_machines, dtype=fresh.dtype)
                devices = None if fresh_devices is None else \
                    np.empty((view.num_machines, fresh_devices.shape[1]), dtype=np.int64)
            scores[changed] = fresh
            if devices is not None:
                devices[changed] = fresh_devices
        self._kept[key] = scores, devices, view.machine_changes
        return self.finish(scores[nodes]), None if devices is None else devices[nodes]

    def finish(self, scores: np.ndarray) -> np.ndarray:
        """The fitting machines' kept scores as the policy compares them (unchanged, unless it rescales)."""
        return scores

    @abstractmethod
    def machine_scores(self, view: ClusterView, task: int, machines: np.ndarray
                       ) -> tuple[np.ndarray, np.ndarray | None]:
        """Scores of ``machines`` for ``task`` (any machines: fitting or not), and the devices each would take."""

    # what the formulas read, for the fitting machines
    def _task(self, view: ClusterView, task: int) -> tuple[float, int, int]:
        count, milli = (int(v) for v in view.device_request[task])
        return float(view.demand[task, self.cpu]), count, milli

    def _nodes(self, view: ClusterView, nodes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        return view.free[nodes, self.cpu], np.maximum(view.device_free[nodes], 0).sum(axis=1)


class GpuBestFit(NodeScorer):
    """The machine left with the least cpu and GPU (equal weights), scores min-max scaled."""

    compiled_rule = "gpu-best-fit"

    name = "gpu-best-fit"

    def machine_scores(self, view, task, machines):
        cpu, count, milli = self._task(view, task)
        cpu_left, idle = self._nodes(view, machines)
        s = 0.5 * (cpu_left - cpu) / CPU_SCALE + 0.5 * (idle - count * milli) / GPU_SCALE
        return (100 * (1 - s)).astype(np.int64), None

    def finish(self, scores):
        low, high = scores.min(), scores.max()  # min-max over the fitting machines
        return (scores - low) * 100 // (high - low) if high > low else np.zeros_like(scores)


class GpuDotProduct(NodeScorer):
    """The smallest dot product of the machine's free (cpu, GPU) and the task's demand."""

    compiled_rule = "gpu-dot-product"

    name = "gpu-dot-product"

    def machine_scores(self, view, task, machines):
        cpu, count, milli = self._task(view, task)
        cpu_left, idle = self._nodes(view, machines)
        dot = (cpu_left / CPU_SCALE) * (cpu / CPU_SCALE) + (idle / GPU_SCALE) * (count * milli / GPU_SCALE)
        return (100 * (1 - dot / 2)).astype(np.int64), None


class GpuPacking(NodeScorer):
    """Partly used devices first, then machines with some devices used, then empty machines."""

    compiled_rule = "gpu-packing"

    name = "gpu-packing"
    gpu_only = True

    def machine_scores(self, view, task, machines):
        _, count, milli = self._task(view, task)
        free = np.asarray(view.device_free[machines])
        held = view.device_count[machines]
        empty = ((free == DEVICE_MILLI) | (free < 0)).all(axis=1)
        ordered = np.sort(free, axis=1)  # from the least free upwards (no device: -1, never used)
        room = ordered >= milli
        used = room & (np.cumsum(room, axis=1) <= count)  # the devices the task would use, scanning upwards
        whole = (used & (ordered == DEVICE_MILLI)).sum(axis=1)
        percent = (used * (np.maximum(ordered, 0) * 100 // DEVICE_MILLI)).sum(axis=1)
        scores = np.where(empty, np.maximum(33 - held, held),
                          np.where(whole > 0, np.maximum(50 - whole, 33), np.maximum(100 - percent // 10, 50)))
        return scores.astype(np.int64), None


class GpuClustering(NodeScorer):
    """Machines running GPU tasks of the task's kind only first, then of its kind among others, then none."""

    compiled_rule = "gpu-clustering"

    name = "gpu-clustering"
    gpu_only = True

    def machine_scores(self, view, task, machines):
        _, count, milli = self._task(view, task)
        _, idle = self._nodes(view, machines)
        base = (25 * (GPU_SCALE - idle) // GPU_SCALE).astype(np.int64)
        users = view.device_users[machines]
        kind = 0 if milli < DEVICE_MILLI else count
        mine = users[:, kind] > 0
        others = users.sum(axis=1) - users[:, kind] > 0
        bonus = np.where(mine & ~others, 75, np.where(mine, 50, np.where(~others, 25, 0)))
        return base + bonus, None


class GpuRandom(NodeScorer):
    """A fitting machine uniformly at random, and a random device with room."""

    name = "gpu-random"
    kept = False  # a fresh draw at every decision
    compiled_rule = "gpu-random"  # (its draws reproduced: `cloudsim.engine.broker.CompiledRound`'s ``seed``)

    def machine_scores(self, view, task, nodes):
        _, count, milli = self._task(view, task)
        pick = int(self.rng.integers(len(nodes)))
        scores = np.zeros(len(nodes), dtype=np.int64)
        scores[pick] = 1
        if count == 0:
            return scores, None
        free = view.device_free[nodes[pick]]
        room = np.flatnonzero(free >= milli)
        devices = np.zeros((len(nodes), count), dtype=np.int64)
        devices[pick] = np.sort(self.rng.choice(room, size=count, replace=False))
        return scores, devices


class FragmentationGradientDescent(NodeScorer):
    """FGD: the machine (and, for a share, the device) whose fragmentation the placement decreases most.

    ``target``: the workload the fragmentation is measured against (`TargetWorkload.of` the run's jobs);
    without one, the tasks seen waiting so far stand in for it, rebuilt as new shapes arrive.
    """

    name = "fgd"

    def __init__(self, seed: int | None = 0, target: TargetWorkload | None = None, whole_scores: bool = True) -> None:
        if target is not None and not isinstance(target, TargetWorkload):
            raise TypeError(f"FGD: target must be a cloudsim.engine.fragmentation.TargetWorkload "
                            f"(TargetWorkload.of(jobs) builds one) or None (the pods seen waiting stand in for it), "
                            f"got {target!r}")
        super().__init__(seed)
        self.target = target
        self.whole_scores = whole_scores

    compiled_rule = "fgd"

    def compiled_round(self, resources: Sequence[str]) -> CompiledRound | None:
        """FGD's round compiled (`NodeScorer.compiled_round`) where it has a target workload (without one, the
        shapes seen waiting stand in for it, rebuilt as they come: its own ``decide`` then) and whole-number
        scores."""
        if self.target is None or not self.whole_scores:
            return None
        return super().compiled_round(resources)

    def _round_options(self) -> dict:
        return {"target": self.target}

    def _start(self, view: ClusterView) -> None:
        super()._start(view)
        self._seen_shapes: dict[tuple, int] = {}  # no target given: pods seen per shape
        self._counted: set[int] = set()  # the tasks they count
        self._target = None
        if self.target is not None:
            self._set_target(view, self.target)

    def _set_target(self, view: ClusterView, target: TargetWorkload) -> None:
        self._target = target
        self._accepted = target.accepted_by(view.machine_attribute(target.attribute))  # (machines, shapes)
        self._kept.clear()  # scores against the old target

    def _target_of_view(self, view: ClusterView) -> TargetWorkload:
        """The waiting tasks' shapes so far, one pod per instance (no target given)."""
        from cloudsim.engine.specs import DeviceRequest, JobSpec, TaskSpec

        for t in range(view.num_tasks):
            g = int(view.task_index[t])
            if g in self._counted:  # each task counted once, with the instances waiting when first seen
                continue
            self._counted.add(g)
            cpu, count, milli = self._task(view, t)
            models = dict(view.task_accepts(t)).get("model", ())
            key = (cpu, count, milli, models)
            self._seen_shapes[key] = self._seen_shapes.get(key, 0) + int(view.waiting[t])
        jobs = [JobSpec(k, 0.0, (TaskSpec(0, n, {"cpu": cpu}, 1.0,
                                          devices=DeviceRequest(count, milli) if count else None,
                                          accepts={"model": models} if models else ()),))
                for k, ((cpu, count, milli, models), n) in enumerate(self._seen_shapes.items()) if n > 0]
        return TargetWorkload.of(jobs)

    def scores(self, view, task, nodes):
        if self.target is None:  # the shapes seen waiting stand in for the target: a new one rebuilds it
            cpu, count, milli = self._task(view, task)
            key = (cpu, count, milli, dict(view.task_accepts(task)).get("model", ()))
            if self._target is None or key not in self._seen_shapes:
                self._set_target(view, self._target_of_view(view))
        return super().scores(view, task, nodes)

    def machine_scores(self, view, task, machines):
        """FGD's scores (and devices, for a share) of ``machines``, compiled (`agents.kernels.fgd_deltas`): at
        every decision it rescores a machine or two, where numpy's cost per call would outweigh the arithmetic."""
        from cloudsim.engine import arithmetic  # numba: loaded when FGD first scores
        from agents.kernels import fgd_deltas

        cpu, count, milli = self._task(view, task)
        target = self._target
        best = np.empty(len(machines))
        device = np.empty(len(machines), dtype=np.int64)
        fgd_deltas(np.ascontiguousarray(view.free[machines, self.cpu], dtype=np.float64),
                   np.ascontiguousarray(view.device_free[machines], dtype=np.int64), self._accepted[machines],
                   float(cpu), count, milli, target.cpu, target.milli, target.count, target.p, best, device)
        score = 100 / (1 + arithmetic.exp(-np.clip(best, -5e5, 5e5) / DEVICE_MILLI))
        return (score.astype(np.int64) if self.whole_scores else score,
                device[:, None] if count and milli < DEVICE_MILLI else None)


class ExactFragmentationGradientDescent(FragmentationGradientDescent):
    """FGD with its scores unrounded (int(100 sigmoid(Delta / 1000)) makes every Delta within about 40 milli-GPU
    of another a tie, which the seeded permutation breaks): to measure what the reference's whole-number
    scores cost or gain."""

    name = "fgd-exact"

    def __init__(self, seed: int | None = 0, target: TargetWorkload | None = None) -> None:
        super().__init__(seed, target, whole_scores=False)


def target_options(name: str, target: TargetWorkload) -> dict:
    """`agents.make_broker`'s options giving broker ``name`` the run's target workload, where it measures
    fragmentation against one (FGD and its variant); none for the others."""
    spec = broker_spec(name)
    measures = spec is not None and isinstance(spec.factory, type) and issubclass(spec.factory,
                                                                                 FragmentationGradientDescent)
    return {"target": target} if measures else {}
