"""Sliding job chunks, as DeepJS trains and evaluates on them.

Jobs are ordered by submit time (a stable sort), chunk k is jobs [k*n, (k+1)*n)
(the last chunk may be shorter), and every chunk's submit times are rebased so
that its first job arrives at t=0.
"""

from __future__ import annotations

import math
from typing import Iterable, Iterator, Sequence

from cloudsim.engine.specs import JobSpec

__all__ = ["chunk_count", "iter_chunks", "job_chunk", "job_range", "rebase"]


def rebase(jobs: Sequence[JobSpec]) -> list[JobSpec]:
    """The jobs with submit times shifted so that the first one arrives at 0."""
    if not jobs:
        return []
    base = jobs[0].submit_time
    return [job.arriving_at(job.submit_time - base) for job in jobs]


def _in_submit_order(jobs: Sequence[JobSpec]) -> list[JobSpec]:
    return sorted(jobs, key=lambda j: j.submit_time)


def job_range(jobs: Sequence[JobSpec], start: int, stop: int) -> list[JobSpec]:
    """Jobs ``start`` .. ``stop - 1`` in submit order, rebased to start at 0."""
    ordered = _in_submit_order(jobs)
    if not 0 <= start < stop <= len(ordered):
        raise ValueError(f"job range {start}:{stop} is outside the workload's {len(ordered)} jobs")
    return rebase(ordered[start:stop])


def chunk_count(jobs: Sequence[JobSpec], size: int) -> int:
    """How many chunks of ``size`` jobs the workload has (the last may be shorter)."""
    if size < 1:
        raise ValueError(f"chunk size must be >= 1, got {size}")
    return math.ceil(len(jobs) / size)


def job_chunk(jobs: Sequence[JobSpec], size: int, index: int) -> list[JobSpec]:
    """Chunk ``index`` of ``size`` jobs: jobs [index*size, (index+1)*size) in submit order, rebased."""
    count = chunk_count(jobs, size)
    if not 0 <= index < count:
        raise ValueError(f"chunk {index} does not exist: {len(jobs)} jobs make chunks 0..{count - 1} of {size}")
    ordered = _in_submit_order(jobs)
    return rebase(ordered[index * size : (index + 1) * size])


def iter_chunks(
    jobs: Sequence[JobSpec], size: int, indices: Iterable[int] | None = None
) -> Iterator[tuple[int, list[JobSpec]]]:
    """(index, chunk) for each chunk index (all chunks when ``indices`` is None)."""
    ordered = _in_submit_order(jobs)
    count = chunk_count(ordered, size)
    for index in range(count) if indices is None else indices:
        if not 0 <= index < count:
            raise ValueError(f"chunk {index} does not exist: {len(jobs)} jobs make chunks 0..{count - 1} of {size}")
        yield index, rebase(ordered[index * size : (index + 1) * size])
