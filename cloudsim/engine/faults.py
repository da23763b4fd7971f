"""Random machine failures and repairs, for runs without a trace's own machine events.

A fault model is any object with ``events(machines)`` returning the model's
`MachineEvent`s in time order, possibly without end; the simulation reads it
lazily, merged with the trace's events, until the last job finishes. A failed
machine takes no new work and its running instances end at once (re-queued or
counted failed, as the simulation's ``on_failure`` says) until it is up again.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass
from typing import Iterator, Sequence

import numpy as np

from cloudsim.engine.checks import is_finite_number
from cloudsim.engine.specs import MachineEvent

__all__ = ["RandomFaults"]


@dataclass(frozen=True)
class RandomFaults:
    """Each machine alternates between up and failed, independently: it stays up for
    an exponential time of mean ``mtbf`` (mean time between failures), then
    failed for an exponential time of mean ``mttr`` (mean time to repair).

    Args:
        mtbf: mean up time before a failure, in simulation time units.
        mttr: mean time a failed machine stays out.
        seed: the random stream; the same seed gives the same failures.
        machines: indices of the machines that may fail (None: all of them).

    Machines start up at t=0. The events are a pure function of the seed and the
    machine count, whatever the broker does.
    """

    mtbf: float
    mttr: float
    seed: int | None = 0
    machines: Sequence[int] | None = None

    def __post_init__(self) -> None:
        for name in ("mtbf", "mttr"):
            value = getattr(self, name)
            if not (is_finite_number(value) and value > 0):
                raise ValueError(f"RandomFaults: {name} must be a positive number of time units, got {value!r}")

    def events(self, machines: int) -> Iterator[MachineEvent]:
        """Failures and repairs of a cluster of ``machines`` machines, in time order, without end."""
        chosen = range(machines) if self.machines is None else list(self.machines)
        for m in chosen:
            if not 0 <= m < machines:
                raise ValueError(f"RandomFaults: no machine {m} (the cluster has {machines})")
        rng = np.random.default_rng(self.seed)
        # (time, machine, state): ties in time go by machine index, so the order is reproducible.
        pending = [(float(rng.exponential(self.mtbf)), m, "failed") for m in chosen]
        heapq.heapify(pending)
        while pending:
            time, machine, state = heapq.heappop(pending)
            yield MachineEvent(time, machine, state)
            if state == "failed":
                heapq.heappush(pending, (time + float(rng.exponential(self.mttr)), machine, "up"))
            else:
                heapq.heappush(pending, (time + float(rng.exponential(self.mtbf)), machine, "failed"))
