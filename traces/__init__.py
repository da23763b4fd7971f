"""Workloads for cloudsim: trace loaders, sliding job chunks and synthetic generators.

Everything here turns some source into a list of `cloudsim.JobSpec`; nothing here
knows about brokers.
"""

from traces.chunks import chunk_count, iter_chunks, job_chunk, job_range, rebase
from traces.cloudsimpy import load_cloudsimpy
from traces.synthetic import alibaba_like

__all__ = ["alibaba_like", "chunk_count", "iter_chunks", "job_chunk", "job_range", "load_cloudsimpy", "rebase"]
