"""The "fill the cluster" experiment of Weng et al. (USENIX ATC 2023) on a GPU cluster, one (broker, seed) a run.

As the GPU-sharing study describes it (docs/gpu.md, "The reference study"):

1. the workload's pods are shuffled with the run's seed;
2. inflated: while their total GPU request is below ``factor`` times the cluster's GPUs, pods drawn uniformly
   with replacement are appended after the shuffled originals; where the originals alone ask for more, pods
   are dropped at random until they do not;
3. offered one at a time, one pod an instant, through the engine (`cloudsim.Simulation`, stepped from here):
   the broker places each; a pod it does not place now (a reservation for later included) fails and is
   dropped (`Simulation.reject`); nothing departs;
4. after every pod: the arrived GPU request (failed pods included) as % of the cluster's GPUs (x), the
   allocated GPU (unallocated = 100 - allocated), the fragmentation (`cloudsim.engine.fragmentation`) as % of the
   cluster's GPUs, the fragmentation rate (% of the idle GPU), and the failed pods. A run's curve is the
   mean of each y in each whole-percent bin of x ("0" to "130").

A pod no node could hold even empty (a model no node has, nine GPUs on nodes of eight) cannot fit
anywhere: it is offered like the others and fails.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, replace
from typing import Sequence

import numpy as np

from agents import make_broker
from agents.heuristics.gpu import target_options
from cloudsim.engine.broker import Decision, Plan, as_plan
from cloudsim.engine.foreign import check_cluster, failure
from cloudsim.engine.fragmentation import FragmentationMeter, TargetWorkload
from cloudsim.engine.simulation import Simulation
from cloudsim.engine.specs import DEVICE_MILLI, ClusterSpec, JobSpec, unholdable

__all__ = ["FILL_CURVES", "FillRun", "fill_run", "inflate"]

FILL_CURVES = ("unallocated_gpu_pct", "fragmentation_gpu_pct", "fragmentation_rate")
"""The curves of a fill run, each a mapping from the arrived GPU request in whole percent to the mean."""


@dataclass
class FillRun:
    """One fill run: its broker and seed, the pods offered and failed, and its curves (`FILL_CURVES`) by
    whole percent of arrived GPU request (as strings, for JSON)."""

    broker: str
    seed: int
    pods: int
    failed_pods: int
    unallocated_gpu_pct: dict[str, float]
    fragmentation_gpu_pct: dict[str, float]
    fragmentation_rate: dict[str, float]
    wall_s: float = 0.0

    def row(self) -> dict:
        return {"broker": self.broker, "seed": self.seed, "pods": self.pods, "failed_pods": self.failed_pods,
                **{name: getattr(self, name) for name in FILL_CURVES}, "wall_s": self.wall_s}


def _gpu_request(job: JobSpec) -> int:
    devices = job.tasks[0].devices
    return 0 if devices is None else devices.total * job.tasks[0].instances


def inflate(pods: Sequence[JobSpec], cluster_milli: int, factor: float, seed: int) -> list[JobSpec]:
    """Steps 1 and 2: the pods shuffled with ``seed``, then grown (or cut) to ``factor`` times
    ``cluster_milli`` of GPU request."""
    rng = np.random.default_rng(seed)
    order = rng.permutation(len(pods))
    shuffled = [pods[k] for k in order.tolist()]
    goal = factor * cluster_milli
    request = np.array([_gpu_request(job) for job in shuffled], dtype=np.int64)
    total = int(request.sum())
    if total > goal:  # drop pods at random until the request is within the goal
        for k in rng.permutation(len(shuffled)).tolist():
            if total <= goal:
                break
            total -= int(request[k])
            request[k] = -1
        return [job for job, r in zip(shuffled, request.tolist()) if r >= 0]
    grown = list(shuffled)
    if not request.any():
        return grown  # no pod asks for a GPU: nothing to inflate with
    while total < goal:
        job = pods[int(rng.integers(len(pods)))]
        grown.append(job)
        total += _gpu_request(job)
    return grown


def _offered(pods: list[JobSpec]) -> list[JobSpec]:
    """One pod an instant (t = 0, 1, ...), each lasting past the last offer (nothing departs), ids unique."""
    last = float(len(pods) + 1)
    return [JobSpec(f"{job.id}#{k}", float(k), tuple(replace(task, duration=last) for task in job.tasks))
            for k, job in enumerate(pods)]


def fill_run(cluster: ClusterSpec, pods: Sequence[JobSpec], broker: str, seed: int, factor: float = 1.3,
             target: TargetWorkload | None = None, compiled: bool | None = None) -> FillRun:
    """One fill run of ``broker`` (a name of `agents.BROKERS`) with ``seed`` on ``cluster``.

    ``target``: the workload fragmentation is measured against (default: `TargetWorkload.of` ``pods``,
    computed before inflation, as the paper does). ``compiled``: whether the pods are offered through the
    engine's compiled path (`_CompiledOffers`): None (the default) where the broker's round runs compiled
    there and passes over a pod that fits nowhere (not a strict queue's, FCFS's), False never (the offers
    stepped one by one, `_offer_stepped`), True always (ValueError, saying why, where it does not apply);
    the same run either way.
    """
    started = time.perf_counter()
    cluster_milli = int(cluster.device_counts().sum()) * DEVICE_MILLI
    if cluster_milli == 0:
        raise ValueError("the cluster has no GPU: a fill run fills GPUs (give the GPU node list)")
    if compiled not in (None, True, False):
        raise ValueError(f"compiled must be None (where it applies), True or False, got {compiled!r}")
    target = TargetWorkload.of(pods) if target is None else target
    offered = _offered(inflate(pods, cluster_milli, factor, seed))
    never_at = set(unholdable(cluster, [job.tasks[0] for job in offered]))  # they fail wherever offered
    holdable = [job for k, job in enumerate(offered) if k not in never_at] if never_at else offered
    policy = make_broker(broker, seed=seed, **target_options(broker, target))
    check_cluster(policy, broker, cluster)  # a learned broker refuses machines it cannot serve
    # (a strict queue waits behind a pod it could not place, which the stepped offers drop: `_CompiledOffers`)
    strict = getattr(policy, "strict", False) is True
    offers = _CompiledOffers(cluster, holdable, target) if compiled is not False and holdable and not strict else None
    sim = Simulation(cluster, holdable, policy, name=broker, on_round=offers)
    meter = FragmentationMeter(cluster, sim.state, target)
    empty = (meter.idle, meter.total)  # (before any pod)
    refusal = None if compiled is False or not holdable else \
        "its queue is strict: it waits behind a pod it could not place" if strict else sim.compiled_refusal()
    if compiled and refusal is not None:
        raise ValueError(f"compiled=True: the fill of broker {broker!r} cannot run on the compiled path: {refusal}; "
                         "leave compiled unset to take it where it applies")
    if offers is not None and refusal is None:
        after = offers.run(sim)
    else:
        if offers is not None:  # (a stepped simulation without on_round)
            sim = Simulation(cluster, holdable, policy, name=broker)
            meter = FragmentationMeter(cluster, sim.state, target)
        after = _offer_stepped(sim, meter, policy, broker)
    n = len(offered)
    arrived = np.empty(n)
    allocated = np.empty(n)
    fragmentation = np.empty(n)
    rate = np.empty(n)
    failed = 0
    request = 0
    idle, total = empty
    pending = iter(after)
    for k, job in enumerate(offered):
        request += _gpu_request(job)
        if k in never_at:
            failed += 1
        else:
            placed, idle, total = next(pending)
            failed += not placed
        arrived[k] = 100.0 * request / cluster_milli
        allocated[k] = 100.0 * (cluster_milli - idle) / cluster_milli
        fragmentation[k] = 100.0 * total / cluster_milli
        rate[k] = 100.0 * total / idle if idle else math.nan
    bins = np.floor(arrived).astype(np.int64)

    def curve(values: np.ndarray) -> dict[str, float]:
        out = {}
        for b in np.unique(bins).tolist():
            chosen = values[bins == b]
            chosen = chosen[~np.isnan(chosen)]
            if len(chosen):
                out[str(b)] = float(chosen.mean())
        return out

    return FillRun(broker, seed, n, failed, curve(100.0 - allocated), curve(fragmentation), curve(rate),
                   round(time.perf_counter() - started, 3))


def _offer_stepped(sim: Simulation, meter: FragmentationMeter, policy, broker: str) -> list[tuple[bool, int, float]]:
    """Step 3, the pods offered one by one: the broker asked once for each (`Simulation.next_decision`), a pod
    it does not place now dropped (`Simulation.reject`). Returns per pod whether it was placed, and the
    cluster's idle milli-GPU and fragmentation after it."""
    after = []
    for k in range(len(sim.jobs)):
        view = sim.next_decision()
        try:
            decision = policy.decide(view)
        except BaseException as error:  # the broker's own error or exit: say whose, and where
            raise failure(error, broker, f"decide(view) for pod {k} at t={view.time}", policy)
        plan = as_plan(decision)
        placed = bool(plan) and all(not isinstance(d, Decision) or d.at in (None, view.time) for d in plan)
        if placed:
            sim.apply(Plan(plan, final=True))  # one pod an instant: the round ends with it
        else:  # no place now (a reservation for later is none: nothing departs in a fill)
            sim.reject(0)
            sim.next_decision()
            sim.apply(None)
        after.append((placed, meter.idle, meter.total))
    return after


class _Offered(Exception):
    """Raised by the compiled fill's ``on_round`` after the last pod's round: the pods' departures after it are
    not the fill's."""


class _CompiledOffers:
    """Step 3 on the engine's compiled path, for a broker whose round runs there (`_offer_stepped`'s answer):
    the simulation's ``on_round``, and `run`.

    The pods arrive one an instant and the simulation runs (`Simulation.run`), sampled after each instant's
    round, until the last pod's round. A pod it does not place stays waiting instead of being dropped, which
    changes no later decision: nothing departs, so it never fits again, and every round the compiled path runs
    on a cluster with devices passes over a task that fits nowhere without drawing or counting for it, but a
    strict queue's (FCFS waits behind it; `fill_run` steps it). tests/test_gpu.py holds both ways to the same
    runs, broker by broker. A pod was placed where its round
    changed a machine (a pod that asks for nothing fits wherever it is held)."""

    def __init__(self, cluster: ClusterSpec, pods: list[JobSpec], target: TargetWorkload) -> None:
        self.cluster, self.target, self.last = cluster, target, pods[-1].submit_time
        self.asks_nothing = [not cluster.demand_vector(job.tasks[0]).any() and job.tasks[0].devices is None
                             for job in pods]
        self.after: list[tuple[bool, int, float]] = []
        self.meter: FragmentationMeter | None = None
        self.changes = 0

    def __call__(self, now: float, machines) -> None:
        if self.meter is None:
            self.meter = FragmentationMeter(self.cluster, machines, self.target)
        placed = machines.changes != self.changes or self.asks_nothing[len(self.after)]
        self.changes = machines.changes
        self.after.append((placed, self.meter.idle, self.meter.total))
        if now == self.last:
            raise _Offered

    def run(self, sim: Simulation) -> list[tuple[bool, int, float]]:
        try:
            sim.run()
        except _Offered:
            pass
        if len(self.after) != len(self.asks_nothing):
            raise RuntimeError(f"a compiled fill sampled {len(self.after)} rounds for {len(self.asks_nothing)} pods")
        return self.after
