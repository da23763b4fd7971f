"""Workloads for cloudsim: trace loaders, sliding job chunks and synthetic generators.

Everything here turns some source into a list of `cloudsim.JobSpec`; nothing here
knows about brokers.
"""

from traces.alibaba import MachineTable, load_alibaba_v2017, load_alibaba_v2018, machines_v2017, machines_v2018
from traces.chunks import chunk_count, iter_chunks, job_chunk, job_range, rebase
from traces.cloudsimpy import load_cloudsimpy
from traces.deepk8s import deepk8s_cluster, deepk8s_workload
from traces.generators import GENERATORS, generate, generator_skips
from traces.cache import CacheError
from traces.formats import TRACE_FORMATS, TraceFormat
from traces.rawcsv import EmptyWorkloadError, TraceFormatError
from traces.swf import SwfHeader, load_swf, machines_swf, swf_header
from traces.synthetic import (
    DEEPRM,
    DEEPRM_PLUS,
    RLSK,
    BimodalJobs,
    alibaba_like,
    bimodal_cluster,
    deeprm_workload,
    fit_alibaba_like,
    iter_alibaba_like,
    poisson_workload,
    rlsk_workload,
)
from traces.workload import JobStream, Workload, read_in_blocks

__all__ = [
    "DEEPRM",
    "DEEPRM_PLUS",
    "GENERATORS",
    "RLSK",
    "BimodalJobs",
    "CacheError",
    "TRACE_FORMATS",
    "TraceFormat",
    "EmptyWorkloadError",
    "MachineTable",
    "SwfHeader",
    "TraceFormatError",
    "JobStream",
    "Workload",
    "read_in_blocks",
    "alibaba_like",
    "bimodal_cluster",
    "deepk8s_cluster",
    "deepk8s_workload",
    "deeprm_workload",
    "fit_alibaba_like",
    "generate",
    "generator_skips",
    "iter_alibaba_like",
    "poisson_workload",
    "rlsk_workload",
    "chunk_count",
    "iter_chunks",
    "job_chunk",
    "job_range",
    "load_alibaba_v2017",
    "load_alibaba_v2018",
    "load_cloudsimpy",
    "load_swf",
    "machines_v2017",
    "machines_v2018",
    "machines_swf",
    "rebase",
    "swf_header",
]
