"""The result of loading a trace: jobs, plus an account of every row that is not among them."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Callable, Iterator

from cloudsim.engine.specs import JobBlock, JobSpec

__all__ = ["JobStream", "Workload", "read_in_blocks"]


@dataclass
class Workload:
    """Jobs built from a trace, with what was skipped and why.

    Attributes:
        jobs: the replayable jobs, sorted by submit time (stable); from a loader asked for ``as_blocks``,
            one `cloudsim.JobBlock` holding them.
        skipped: tasks skipped, by reason (each loader documents its reasons).
        source: the files read.
        notes: counts of things kept but worth knowing (e.g. truncated DAG names).
        total_jobs: how many replayable jobs the whole trace has (within the window
            when one was given), whether or not a job selection loaded them all; so
            a caller can refuse a job range past the end and say how many there are.
            Defaults to ``len(jobs)``.
    """

    jobs: list[JobSpec]
    skipped: dict[str, int] = field(default_factory=dict)
    source: dict[str, str] = field(default_factory=dict)
    notes: dict[str, int] = field(default_factory=dict)
    total_jobs: int | None = None

    def __post_init__(self) -> None:
        if self.total_jobs is None:
            self.total_jobs = len(self.jobs)


class JobStream:
    """Jobs in submit order that are read only when iterated, as a streamed simulation takes them.

    ``read()`` yields the jobs (anew at each iteration), as `JobSpec` objects or `cloudsim.JobBlock`
    objects of many jobs each; they are shifted so that
    ``origin`` becomes t=0, as `traces.rebase` shifts a list. ``len()`` is their
    number, known up front. A stream is picklable when ``read`` is (a
    `functools.partial` of a module-level function), so it travels to worker
    processes instead of its jobs.
    """

    def __init__(self, count: int, read: Callable[[], Iterator[JobSpec]], origin: float = 0.0,
                 scale: float = 1.0) -> None:
        self.count = count
        self.read = read
        self.origin = origin
        self.scale = scale  # submit times, once shifted, are multiplied by it (`traces.load`)

    def __len__(self) -> int:
        return self.count

    def __iter__(self) -> Iterator[JobSpec | JobBlock]:
        for job in self.read():
            if self.origin != 0 or self.scale != 1:
                if isinstance(job, JobBlock):
                    job = dataclasses.replace(job, submit=(job.submit - self.origin) * self.scale)
                else:
                    job = job.arriving_at((job.submit_time - self.origin) * self.scale)
            yield job


def read_in_blocks(load: Callable[..., Workload], start: int, stop: int,
                   block: int) -> Iterator[JobSpec | JobBlock]:
    """The jobs ``load(jobs=(start, stop)).jobs`` would give, loaded ``block`` jobs at a time: a
    loader that selects a submit-order range (`traces.load_alibaba_v2018`) reads only those rows
    (one `cloudsim.JobBlock` a time, where ``load`` makes them)."""
    for first in range(start, stop, block):
        yield from load(jobs=(first, min(first + block, stop))).jobs
