"""DeepRM and DeepRM_Plus policies as brokers of the event-driven core, on any cluster.

A trained policy (`agents.deeprm`, `agents.deeprm.plus`) looks at one machine's image: the machine's
occupancy over the next T time steps per resource, M job slots and the backlog (DeepRM section 3.1;
`cloudsim.engine.envs.deeprm`). As a broker of the core it sees every machine at once:

- **Each machine's image** is drawn from its free profile (`ClusterView.free_profile`): row t holds,
  per resource, the units in use during [now + t, now + t + 1), in units of ``capacity / res_slot``
  rounded up (the most held during the step, so the image never shows room that is not there).
- **The job slots** are the first M waiting tasks in arrival order (`ClusterView.window`); a slot's
  block is the task's duration in steps (rounded up, at most ``max_job_len``) by its demand in the
  machine's units (rounded up, at most ``max_job_size``); the backlog counts the tasks behind them
  (at most ``backlog``); the last column is the steps since the last job arrived (capped).
- **One batched forward** over all machines of a round (machines whose images are equal share one
  row), in numpy (`NumpyDeepRM`, its sums and functions from `cloudsim.engine.arithmetic`: the same bits on
  every processor), one action drawn per machine from the policy's softmax with the
  broker's seeded generator, as DeepRM's evaluation draws them.
- **A placement** is the machine whose drawn action is a slot it can place with the highest
  probability: DeepRM's earliest fit, the earliest start at which one instance fits the machine for
  its whole duration (`ClusterView.earliest_start`, so the engine's own test), within the horizon
  (an offset below ``T - len``). A start in the future is a reservation (``Decision(at=...)``). When
  no machine draws a placeable slot, the broker waits one time step (DeepRM's MoveOn), and is asked
  again after it (``wake_after``) or at the next event.

With one machine of ``res_slot`` units per resource and DeepRM's jobs (whole steps, whole units),
the image, the slots and the placements are DeepRM's; the schedules still differ where the core
differs from DeepRM's code (`benchmarks/deeprm_core.py` measures both side by side): the core's
window has no holes (DeepRM refills an emptied slot from the backlog only), a job's instances are
placed one decision each, and the core's clock is continuous between DeepRM's steps.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from agents.deeprm.numpy_forward import NumpyDeepRM
from agents.kernels import units_in_use
from cloudsim.engine import arithmetic
from cloudsim.engine.broker import ClusterView, Decision
from cloudsim.engine.specs import ClusterSpec

__all__ = ["DeepRMBroker", "NumpyDeepRM", "load_numpy_policy"]

_ROUNDING = 1e-9  # a quantity a hair above a whole number of units is that number (float sums)
MEMO_ROWS = 100_000  # softmax rows a broker keeps (about 60 MB at most); past it the memo starts afresh


@functools.lru_cache(maxsize=8)
def load_numpy_policy(path: str | Path) -> NumpyDeepRM:
    """The network of a DeepRM or DeepRM_Plus checkpoint as numpy arrays (read once per process and path:
    workers forked after the first read share it, and never run torch)."""
    from agents.deeprm.agent import read_policy_checkpoint

    saved = read_policy_checkpoint(path)
    config = saved["config"]
    weights = {name: tensor.numpy().astype(np.float64) for name, tensor in saved["model"].items()}
    return NumpyDeepRM(config.env_params(), weights, "cnn" if config.network == "cnn" else "dense")


class DeepRMBroker:
    """A DeepRM (or DeepRM_Plus) policy choosing machine, task and start time for the core (see the module)."""

    empty_rounds = False  # nothing waiting: no round needed (`cloudsim.Simulation.run`)

    def __init__(self, policy: NumpyDeepRM, name: str = "deeprm", seed: int | None = 0) -> None:
        self.policy = policy
        self.params = policy.params
        self.name = name
        self.rng = np.random.default_rng(seed)
        self._memo: dict[bytes, np.ndarray] = {}  # `_row_keys` key -> the policy's softmax row (any episode)
        self._start_episode()

    def _start_episode(self) -> None:
        """Forget what the images and draws of an episode were made from (the draws' stream goes on)."""
        self._last_arrival = -np.inf
        self._time = None
        self._used: np.ndarray | None = None  # (machines, T, R) units in use, for the instant ``_time``
        self._slots: tuple[bytes, np.ndarray, np.ndarray] | None = None  # the window's tasks, their blocks
        self._changes = 0
        self._touched: int | None = None  # the machine of the last decision (a reservation moves no counter)
        self._profiles: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # free profiles of unchanged machines
        self._probs: np.ndarray | None = None  # (machines, slots + 1): the policy's softmax per machine, for ``_key``
        self._key: tuple | None = None
        self._waiting = False

    @property
    def wake_after(self) -> float | None:
        """After a wait with tasks still waiting, ask again one DeepRM time step later."""
        return 1.0 if self._waiting else None

    def check_cluster(self, cluster: ClusterSpec) -> list[str]:
        """Refuse a cluster with fewer resources than the policy's images; say what differs from training."""
        p = self.params
        if cluster.devices:  # it places by reservations on its images, which hold no devices
            raise ValueError(f"{self.name}: its images show no devices (GPUs) and it reserves starts ahead, which "
                             "devices do not allow; on a GPU cluster use a GPU policy (fgd, gpu-best-fit, ...) or a "
                             "heuristic")
        if len(cluster.resources) < p.resources:
            raise ValueError(f"{self.name}: its images show {p.resources} resources; this cluster has "
                             f"{len(cluster.resources)} ({', '.join(cluster.resources)}): give one with at least "
                             f"{p.resources}")
        notes = []
        extra = cluster.resources[p.resources:]
        if extra:
            notes.append(f"{self.name}: its images show {p.resources} resources, this cluster has "
                         f"{', '.join(cluster.resources)}: {', '.join(extra)} is not shown "
                         "(the engine still checks it)")
        if cluster.machines != 1:
            notes.append(f"{self.name}: trained on one machine of {p.res_slot} units per resource; runs on "
                         f"{cluster.machines} machines, one image each, in units of each machine's capacity")
        return notes

    # ------------------------------------------------------------------ the images
    def _machine_used(self, view: ClusterView, machine: int) -> np.ndarray:
        """(T, R): the units in use on ``machine`` in each step of the horizon."""
        p = self.params
        R, T = p.resources, p.horizon
        capacity = view.capacity[machine, :R]
        if not view.up[machine]:
            return np.full((T, R), p.res_slot)
        if machine not in self._profiles:  # the profile in absolute time holds until the machine changes
            self._profiles[machine] = view.free_profile(machine)
        times, free = self._profiles[machine]
        return units_in_use(times, free, float(view.time), T, np.ascontiguousarray(capacity, dtype=float), p.res_slot,
                            _ROUNDING)

    def _images(self, view: ClusterView) -> tuple[np.ndarray, np.ndarray | None]:
        """((machines, T, R) units in use, the machines redrawn since the last call of this instant, or None
        at a new instant, when every machine is)."""
        machines = view.capacity.shape[0]
        changed = view.machines_changed_since(self._changes)
        if self._touched is not None and self._touched not in changed:
            # a reservation changes the machine's future, not its counter
            changed = np.append(changed, self._touched)
        for machine in changed.tolist():
            self._profiles.pop(machine, None)
        if self._used is None or view.time != self._time or len(self._used) != machines:
            self._time = view.time
            self._used = np.zeros((machines, self.params.horizon, self.params.resources), dtype=np.int64)
            busy = np.flatnonzero((view.free < view.capacity).any(axis=1) | ~view.up)
            reserved = [r.machine for r in view.reservations]
            stale, redrawn = (np.union1d(busy, reserved).astype(np.int64) if reserved else busy), None
        else:
            stale = redrawn = changed
        self._touched = None
        for machine in stale.tolist():
            self._used[machine] = self._machine_used(view, machine)
        self._changes = view.machine_changes
        return self._used, redrawn

    def _snapshot(self, view: ClusterView, window: ClusterView) -> tuple[dict[str, np.ndarray], np.ndarray | None]:
        """DeepRM's snapshot of every machine (`DeepRMBatch.snapshot`'s arrays), and the machines whose
        images were redrawn since the last call of this instant (None at a new instant)."""
        p = self.params
        R, M = p.resources, p.slots
        machines = view.capacity.shape[0]
        slots = window.task_index.tobytes()
        if self._slots is None or self._slots[0] != slots:  # the window's tasks (and so their blocks) changed
            k = window.num_tasks
            unit = np.where(view.capacity[:, :R] > 0, view.capacity[:, :R] / p.res_slot, 1.0)  # (machines, R)
            slot_len = np.zeros((machines, M), dtype=np.int64)
            slot_size = np.zeros((machines, M, R), dtype=np.int64)
            if k:
                slot_len[:, :k] = np.clip(np.ceil(window.duration - _ROUNDING), 1, p.max_job_len).astype(np.int64)
                size = np.ceil(window.demand[None, :, :R] / unit[:, None, :] - _ROUNDING)
                slot_size[:, :k] = np.clip(size, 0, p.max_job_size).astype(np.int64)
            self._slots = (slots, slot_len, slot_size)
        _, slot_len, slot_size = self._slots
        if view.num_tasks:
            self._last_arrival = max(self._last_arrival, float(view.arrival_time.max()))
        since = np.floor(view.time - self._last_arrival) if np.isfinite(self._last_arrival) else p.max_track_since_new
        used, redrawn = self._images(view)
        return {"used": used, "slot_len": slot_len, "slot_size": slot_size,
                "backlog_n": np.full(machines, min(window.backlog, p.backlog), dtype=np.int64),
                "since_new": np.full(machines, int(min(max(since, 0), p.max_track_since_new)), dtype=np.int64)}, redrawn

    @staticmethod
    def _row_keys(snap: dict[str, np.ndarray]) -> np.ndarray:
        """One bytes key per machine of the snapshot, equal where everything the policy reads of the machine
        (its image, the slots' blocks in its units, the backlog and the time since the last arrival) is."""
        machines = len(snap["used"])
        rows = np.ascontiguousarray(np.concatenate(
            [snap["used"].reshape(machines, -1), snap["slot_len"].reshape(machines, -1),
             snap["slot_size"].reshape(machines, -1), snap["backlog_n"][:, None], snap["since_new"][:, None]],
            axis=1), dtype=np.int32)
        return rows.view(np.dtype((np.void, rows.shape[1] * rows.itemsize))).ravel()

    def _probs_of(self, snap: dict[str, np.ndarray], rows: np.ndarray | None = None) -> np.ndarray:
        """The policy's softmax rows of the machines ``rows`` (every machine when None).

        A machine's row depends on what `_row_keys` keys, and `cloudsim.engine.arithmetic` computes each row
        alone, so a row met before (machines go through the same states again and again, above all while
        the broker waits a step at a time) is looked up instead of computed: the same bits either way."""
        if rows is not None:
            snap = {k: v[rows] for k, v in snap.items()}
        keys = self._row_keys(snap).tolist()
        missing = self._first_of_missing(keys)
        if len(self._memo) + len(missing) > MEMO_ROWS:  # full: start afresh, these rows computed now
            self._memo.clear()
            missing = self._first_of_missing(keys)
        if missing:
            at = np.fromiter(missing.values(), dtype=np.int64, count=len(missing))
            for key, probs in zip(missing, self._softmax({k: v[at] for k, v in snap.items()})):
                self._memo[key] = probs
        return np.array([self._memo[key] for key in keys])

    def _first_of_missing(self, keys: list[bytes]) -> dict[bytes, int]:
        """The keys not in the memo, each with the position of its first row."""
        missing: dict[bytes, int] = {}
        for i, key in enumerate(keys):
            if key not in self._memo and key not in missing:
                missing[key] = i
        return missing

    def _softmax(self, snap: dict[str, np.ndarray]) -> np.ndarray:
        return arithmetic.softmax(self.policy.logits(snap))

    # ------------------------------------------------------------------ deciding
    def decide(self, view: ClusterView) -> Decision | None:
        p = self.params
        self._waiting = False
        if self._used is not None and (len(self._used) != len(view.capacity) or view.time < self._time):
            self._start_episode()  # the broker is run again: nothing of the last episode holds
        if view.num_tasks == 0:
            return None
        window = view.window(p.slots)
        snap, redrawn = self._snapshot(view, window)
        key = (view.time, window.task_index.tobytes(), int(snap["backlog_n"][0]), int(snap["since_new"][0]))
        if key == self._key and self._probs is not None:
            # Same instant, slots and backlog: only the machines redrawn since the last decision changed.
            if len(redrawn):
                self._probs[redrawn] = self._probs_of(snap, redrawn)
        else:
            self._probs = self._probs_of(snap)
        self._key = key
        probs = self._probs
        # One draw per machine from its softmax (inverse transform sampling), with the broker's seeded stream.
        actions = (probs.cumsum(axis=1) < self.rng.random(len(probs))[:, None]).sum(axis=1)
        actions = np.minimum(actions, probs.shape[1] - 1)
        chosen = probs[np.arange(len(actions)), actions]
        slot_len = snap["slot_len"]
        candidates = np.flatnonzero(actions < window.num_tasks)
        for machine in candidates[np.argsort(-chosen[candidates], kind="stable")].tolist():
            task = int(actions[machine])
            start = view.earliest_start(machine, task)
            if start - view.time < p.horizon - slot_len[machine, task]:  # DeepRM: an offset in range(0, T - len)
                self._touched = machine
                return Decision(machine, task, 1, None if start <= view.time else float(start))
        self._waiting = True
        return None
