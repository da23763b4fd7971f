"""The trace formats a replay reads, each declared once in `TRACE_FORMATS`: its name, what it is, the file names
that mean it, the options of a run that apply to it, and how its jobs and its machines are read.

The command line's ``--format`` choices and help, the checks of which options fit a format, the format a file
is read as by default, and the loading of a replay all read this table: a new format is its loader module plus
one `TraceFormat` entry here.

The options a format may take are the run's trace options, by name (`TRACE_OPTIONS`): ``instances``,
``status_policy``, ``window`` and ``cache`` go to its loader; ``machine_table`` reads its machines from a table
(`TraceFormat.machines`), with ``machine_events`` (the table's events replayed) and ``softerror_downtime`` (how
long a v2017 soft error takes a machine out) for the tables that have events.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from cloudsim.engine.specs import ClusterSpec
from traces.alibaba import MachineTable, load_alibaba_v2017, load_alibaba_v2018, machines_v2017, machines_v2018
from traces.cloudsimpy import load_cloudsimpy
from traces.openb import load_openb, machines_openb
from traces.swf import load_swf, machines_swf
from traces.workload import Workload

__all__ = ["LOADER_OPTIONS", "TRACE_FORMATS", "TRACE_OPTIONS", "TraceFormat", "format_of", "formats_taking"]

LOADER_OPTIONS = ("instances", "status_policy", "window", "cache")
"""The trace options that go to a format's loader (``load(path, **options)``), where the format takes them."""
TRACE_OPTIONS = LOADER_OPTIONS + ("machine_table", "machine_events", "softerror_downtime")
"""Every option a trace format may take or not."""


@dataclass(frozen=True)
class TraceFormat:
    """One trace format.

    Attributes:
        name: its ``--format`` name.
        what: what it is, in words, for ``--format``'s help.
        load: ``load(path, **options) -> Workload``, ``options`` those of `LOADER_OPTIONS` that it takes
            (and ``jobs=(A, B)`` when it ``selects_jobs``).
        takes: the options of `TRACE_OPTIONS` that apply to it; the others are refused with a word.
        suffixes: a file whose name ends so (any case) is read as this format unless ``--format`` says another.
        selects_jobs: its loader reads only the rows of a job range (``jobs=``), and counts the whole trace.
        streams: a replay may read its jobs as it runs (``load(..., jobs=, as_blocks=)``, `traces.JobStream`).
        machines: ``machines(table path, **options) -> MachineTable`` (``softerror_downtime`` where taken):
            its cluster and machine events read from a machine table; None when it has none.
        machine_table: its machine table in words, with the format's name, for ``--machine-table``'s help.
        requires_machine_table: its trace holds no cluster (a run needs ``--machine-table``); the reason.
        samples_machines: ``--machines N`` may draw N of its table's machines (else the table is replayed whole).
        logged_cluster: ``logged_cluster(path) -> ClusterSpec``: the cluster the trace itself records (SWF's
            header), used where the run gives no machines or capacity.
    """

    name: str
    what: str
    load: Callable[..., Workload]
    takes: frozenset[str] = frozenset()
    suffixes: tuple[str, ...] = ()
    selects_jobs: bool = False
    streams: bool = False
    machines: Callable[..., MachineTable] | None = None
    machine_table: str = ""
    requires_machine_table: str = ""
    samples_machines: bool = True
    logged_cluster: Callable[[str], ClusterSpec] | None = None

    def __post_init__(self) -> None:
        odd = sorted(self.takes - set(TRACE_OPTIONS))
        if odd:
            raise ValueError(f"trace format {self.name!r} takes {', '.join(odd)}, which no run gives; its options are "
                             f"among {', '.join(TRACE_OPTIONS)}")
        if ("machine_table" in self.takes) != (self.machines is not None) or bool(self.machine_table) != (
                self.machines is not None):
            raise ValueError(f"trace format {self.name!r}: a format that takes machine_table has a machines reader "
                             "and says what its machine table is (machine_table), and only such a format")

    def loader_options(self, options: dict[str, Any]) -> dict[str, Any]:
        """The entries of ``options`` (by `LOADER_OPTIONS` name) that this format's loader takes."""
        return {name: value for name, value in options.items() if name in LOADER_OPTIONS and name in self.takes}


def _cloudsimpy(path: str) -> Workload:
    return Workload(load_cloudsimpy(path), source={"jobs": path})


def _alibaba_v2017(path: str, instances: str | None = None, **options: Any) -> Workload:
    return load_alibaba_v2017(path, instances, **options)  # a module function, so that a stream pickles it


def _alibaba_v2018(path: str, instances: str | None = None, **options: Any) -> Workload:
    return load_alibaba_v2018(path, instances, **options)


def _openb_machines(path: str) -> MachineTable:
    return MachineTable(machines_openb(path), [])


_ALIBABA = frozenset(TRACE_OPTIONS) - {"softerror_downtime"}
TRACE_FORMATS: dict[str, TraceFormat] = {spec.name: spec for spec in (
    TraceFormat("cloudsimpy", "CloudSimPy's jobs.csv", _cloudsimpy),
    TraceFormat("alibaba-v2017", "the raw batch_task table", _alibaba_v2017,
                _ALIBABA | {"softerror_downtime"}, selects_jobs=True, streams=True, machines=machines_v2017,
                machine_table="server_event.csv (alibaba-v2017)"),
    TraceFormat("alibaba-v2018", "the raw batch_task table", _alibaba_v2018, _ALIBABA,
                selects_jobs=True, streams=True, machines=machines_v2018,
                machine_table="machine_meta.csv (alibaba-v2018)"),
    TraceFormat("swf", "the Standard Workload Format of the Parallel Workloads Archive; its header's MaxNodes "
                "and MaxProcs give the default cluster", load_swf, suffixes=(".swf", ".swf.gz"),
                logged_cluster=machines_swf),
    TraceFormat("openb", "a pod list of the Alibaba GPU trace of 2023, with its node list as --machine-table",
                load_openb, frozenset({"machine_table"}), machines=_openb_machines,
                machine_table="a node list (openb: openb_node_list_gpu_node.csv for the 1,213 GPU nodes of the "
                "paper, openb_node_list_all_node.csv for all)",
                requires_machine_table="a pod list holds no cluster: add --machine-table with its node list "
                "(openb_node_list_gpu_node.csv, the 1,213 GPU nodes)", samples_machines=False),
)}
"""Every trace format by ``--format`` name. The first one without suffixes is the default of a file whose
name has none of theirs."""


def format_of(path: str | Path) -> str:
    """The format a trace file is read as when ``--format`` is not given: the one whose suffix its name ends
    with, else the first format that has none (cloudsimpy)."""
    name = str(path).lower()
    by_suffix = [spec.name for spec in TRACE_FORMATS.values() if spec.suffixes and name.endswith(spec.suffixes)]
    return by_suffix[0] if by_suffix else next(spec.name for spec in TRACE_FORMATS.values() if not spec.suffixes)


def formats_taking(option: str) -> tuple[str, ...]:
    """The formats that take the option ``option`` (a name of `TRACE_OPTIONS`)."""
    return tuple(spec.name for spec in TRACE_FORMATS.values() if option in spec.takes)
