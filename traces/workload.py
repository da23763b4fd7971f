"""The result of loading a trace: jobs, plus an account of every row that is not among them."""

from __future__ import annotations

from dataclasses import dataclass, field

from cloudsim.specs import JobSpec

__all__ = ["Workload"]


@dataclass
class Workload:
    """Jobs built from a trace, with what was skipped and why.

    Attributes:
        jobs: the replayable jobs, sorted by submit time (stable).
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
