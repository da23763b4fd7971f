"""The results digest: a fixed set of small runs, kept exactly, so that any change of a result is seen.

The promise of a simulator for research is that the same command gives the same numbers on every
supported stack (the library versions setup.cfg allows, any x86-64 processor). The digest holds it to
that: `DIGEST_RUNS` covers every loader (CloudSimPy's jobs.csv, Alibaba v2017 and v2018, the Standard
Workload Format, the openb GPU lists, the generators), every family of brokers (first-fit, Tetris,
EASY, SJF; the GPU policies FGD and best-fit, replayed and in the fill experiment; the learned
schedulers of the five papers on a workload of their own) and a run with machine failures. For each
run the digest keeps its summary and its group table (`EpisodeResult.groups`: one row per instance
group, which machine, when) with every field exact, floats as their shortest round-trip text. The
tests recompute it and compare with the committed file (tests/digest.json), and
``python benchmarks/digest.py`` regenerates or checks it, naming for a difference the run, the
table, the first differing row and both values.

The runs read the real samples under `traces.data.data_folder` (``$CLOUDSIM_DATA`` or
``../shared/data``); a run whose files are absent is left out, and said so.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterable

import numpy as np

from cloudsim.run.config import (BrokerConfig, ClusterConfig, DeepRMCompareConfig, RunConfig, SimulationConfig,
                                 WorkloadConfig, compare_config)
from cloudsim.run.episode import RunSpec, run_one
from cloudsim.run.resolve import resolve
from cloudsim.version import __version__

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["DIGEST_RUNS", "DigestRun", "compute", "differences", "read", "write"]

TIMING = ("sim_wall_s", "wall_s")
"""Summary fields that measure the machine, not the simulation: left out of the digest."""
FORMAT = 1


@dataclass(frozen=True)
class DigestRun:
    """One run of the digest: one broker on one episode (`config`), or a fill run (``fill``).

    ``workload``, ``cluster``, ``simulation`` and ``compare`` are the keyword options of the run's
    `WorkloadConfig`, `ClusterConfig`, `SimulationConfig` and a comparison's (`compare_config`; its paths relative to
    the data folder); with ``compare={"env": "deeprm", ...}`` the run is `compare --env deeprm` (the
    policy in DeepRM's own environment), whose table is its rows; ``needs``: the files the run reads;
    ``fill``: the fill experiment's (pods, nodes, seed, factor).
    """

    name: str
    broker: str
    workload: dict = field(default_factory=dict)
    cluster: dict = field(default_factory=dict)
    simulation: dict = field(default_factory=dict)
    compare: dict | None = None
    needs: tuple[str, ...] = ()
    fill: tuple[str, str, int, float] | None = None

    def config(self, data: Path) -> RunConfig:
        """The run's config, its paths under ``data``."""
        workload = dict(self.workload)
        for name in ("source", "machine_table"):  # a generator's name is no path
            if name in workload and (name == "machine_table" or "format" in workload):
                workload[name] = str(data / workload[name])
        sections = dict(workload=WorkloadConfig(**workload), cluster=ClusterConfig(**self.cluster),
                        simulation=SimulationConfig(**self.simulation), brokers=BrokerConfig((self.broker,)))
        if self.compare is None:
            return RunConfig(**sections)
        options = dict(self.compare)
        return compare_config(sections, options, options.pop("env", None))


def _replay(name: str, broker: str, workload: dict, *, cluster: dict | None = None, simulation: dict | None = None,
            needs: tuple[str, ...] = (), compare: dict | None = None) -> DigestRun:
    return DigestRun(name, broker, workload, cluster or {}, simulation or {}, compare, needs)


CLOUDSIMPY = "cloudsimpy/jobs.csv"
V2017, V2017_MACHINES = "alibaba/v2017/batch_task.csv", "alibaba/v2017/server_event.csv"
V2018, V2018_MACHINES = "alibaba/v2018/selected_DAGs.csv", "alibaba/v2018/machine_meta.csv"
SWF = "swf/lublin_256.swf"
PODS, NODES = "alibaba/gpu-v2023/openb_pod_list_default.csv", "alibaba/gpu-v2023/openb_node_list_gpu_node.csv"
HEURISTICS = ("first-fit", "tetris", "easy", "sjf")


def _runs() -> tuple[DigestRun, ...]:
    # Jobs 35-36 of CloudSimPy's trace (in chunk 3, as DeepJS replays it) hold the text pandas' old parser
    # read one unit off (task 37162's submit time).
    chunk = {"source": CLOUDSIMPY, "format": "cloudsimpy", "jobs": (35, 37)}
    five = {"machines": 5, "capacity": {"cpu": 64.0, "memory": 1.0, "disk": 1.0}}
    runs = [_replay(f"cloudsimpy-jobs35-37-{b}", b, chunk, cluster=five, simulation={"tick": 1.0}, needs=(CLOUDSIMPY,))
            for b in HEURISTICS]
    runs += [_replay(f"v2017-jobs0-10-{b}", b, {"source": V2017, "format": "alibaba-v2017", "jobs": (0, 10),
                                                 "machine_table": V2017_MACHINES}, needs=(V2017, V2017_MACHINES))
             for b in HEURISTICS]
    runs += [_replay(f"v2018-jobs0-3-{b}", b, {"source": V2018, "format": "alibaba-v2018", "jobs": (0, 3),
                                                 "machine_table": V2018_MACHINES}, needs=(V2018, V2018_MACHINES))
             for b in HEURISTICS]
    runs += [_replay(f"swf-jobs0-30-{b}", b, {"source": SWF, "format": "swf", "jobs": (0, 30)}, needs=(SWF,))
             for b in HEURISTICS]
    runs += [_replay(f"openb-replay-jobs0-200-{b}", b, {"source": PODS, "format": "openb", "jobs": (0, 200),
                                                        "machine_table": NODES}, needs=(PODS, NODES))
             for b in ("fgd", "gpu-best-fit")]
    runs += [DigestRun(f"openb-fill-{b}", b, fill=(PODS, NODES, 0, 1.3), needs=(PODS, NODES))
             for b in ("fgd", "gpu-best-fit")]
    runs += [
        _replay("cloudsimpy-jobs35-37-deepjs", "deepjs", chunk, cluster=five, simulation={"tick": 1.0},
                needs=(CLOUDSIMPY,)),
        _replay("deeprm-load0.9-deeprm", "deeprm", {"generator": "deeprm", "load": 0.9, "synthetic_jobs": 60}),
        _replay("deeprm-load0.9-deeprm-plus", "deeprm-plus", {"generator": "deeprm", "load": 0.9,
                                                              "synthetic_jobs": 60}),
        _replay("deepk8s-80-deepk8s", "deepk8s", {"generator": "deepk8s", "synthetic_jobs": 80}, needs=(V2017,)),
        _replay("rlsk-60-rlsk", "rlsk", {"generator": "rlsk", "synthetic_jobs": 60}, compare={"env": "rlsk"}),
        # The policies in DeepRM's own environment (the code's job sizes, which their images were trained on).
        *[_replay(f"deeprm-env-load1.3-{b}", b, {"generator": "deeprm", "load": 1.3},
                  compare={"env": "deeprm", "sizes": "code", "seeds": (0, 3)}) for b in ("deeprm", "deeprm-plus")],
        # Machine failures: faults drawn with the run's seed, failed instances re-queued.
        _replay("cloudsimpy-jobs35-37-first-fit-faults", "first-fit", chunk, cluster=five,
                simulation={"tick": 1.0, "mtbf": 150.0, "mttr": 40.0}, needs=(CLOUDSIMPY,)),
    ]
    return tuple(runs)


DIGEST_RUNS: tuple[DigestRun, ...] = _runs()


def _exact(value):
    """A value as kept in the digest: numbers as Python numbers (floats exact), text as text."""
    if isinstance(value, np.generic):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)  # "nan", "inf", "-inf": JSON has no such numbers
    if isinstance(value, (list, tuple)):
        return [_exact(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _exact(v) for k, v in value.items()}
    return value


def _table(frame: pd.DataFrame) -> dict:
    return {"columns": [str(c) for c in frame.columns],
            "rows": [[_exact(v) for v in row] for row in frame.itertuples(index=False, name=None)]}


def _compute_one(run: DigestRun, data: Path) -> dict:
    if run.fill is not None:
        from cloudsim.run.compare_fill import FillSpec, run_fill

        pods, nodes, seed, factor = run.fill
        row = run_fill(FillSpec(str(data / pods), str(data / nodes), run.broker, seed, factor))
        return {"summary": _exact({k: v for k, v in row.items() if k not in TIMING})}
    config = run.config(data)
    if isinstance(config, DeepRMCompareConfig):
        from cloudsim.run.compare_deeprm import compare_deeprm

        runs = compare_deeprm(config).runs
        return {"summary": {}, "groups": _table(runs[[c for c in runs.columns if c not in TIMING]])}
    resolved = resolve(config)
    if len(resolved.episodes) != 1 or len(resolved.brokers) != 1:
        raise ValueError(f"digest run {run.name}: expected one episode and one broker, got "
                         f"{len(resolved.episodes)} and {len(resolved.brokers)}")
    (episode,), (plan,) = resolved.episodes, resolved.brokers
    spec = RunSpec(plan, config.workload.seed, resolved.simulation, label=episode.label, jobs=episode.jobs,
                   place=resolved.place, events=episode.events, keep="result")
    outcome = run_one(spec)
    return {"summary": _exact({k: v for k, v in outcome.summary.items() if k not in TIMING}),
            "groups": _table(outcome.result.groups)}


def compute(data: str | Path | None = None, names: Iterable[str] | None = None,
            on_run: Callable[[str, str | None], None] | None = None) -> dict:
    """The digest of `DIGEST_RUNS` (or of the runs ``names``) on the samples under ``data``
    (default `traces.data.data_folder`): ``{"runs": {name: {"summary", "groups"}}, "missing": {name: why}}``.

    ``on_run(name, why)`` is told of each run as it ends (``why``: None, or why it was left out).
    """
    import warnings

    from traces.data import data_folder

    folder = Path(data) if data is not None else data_folder()
    wanted = None if names is None else set(names)
    unknown = sorted((wanted or set()) - {run.name for run in DIGEST_RUNS})
    if unknown:
        raise ValueError(f"no digest run named {', '.join(unknown)}; "
                         f"the runs are {', '.join(r.name for r in DIGEST_RUNS)}")
    runs, missing = {}, {}
    for run in DIGEST_RUNS:
        if wanted is not None and run.name not in wanted:
            continue
        absent = [need for need in run.needs if not (folder / need).is_file()]
        if absent:
            missing[run.name] = f"{folder / absent[0]} is absent"
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # a run's warnings (a learned broker off its cluster) are no result
                runs[run.name] = _compute_one(run, folder)
        if on_run is not None:
            on_run(run.name, missing.get(run.name))
    return {"format": FORMAT, "runs": runs, "missing": missing}


def _text(value) -> str:
    return json.dumps(value, sort_keys=True)


def _first_difference(a, b) -> tuple[str, object, object] | None:
    """(where, committed, now) of the first difference between two summary values, descending into mappings."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b), key=lambda k: (len(k), k)):
            found = _first_difference(a.get(key, "(absent)"), b.get(key, "(absent)"))
            if found is not None:
                return f"[{key!r}]{found[0]}", found[1], found[2]
        return None
    return None if _text(a) == _text(b) else ("", a, b)


def differences(expected: dict, got: dict, limit: int = 20) -> list[str]:
    """One line per run whose results differ (at most ``limit``): the run, the table, the first differing
    row (or summary field) and both values; runs computed on one side only are named too."""
    lines = []
    before, now = expected.get("runs", {}), got.get("runs", {})
    for name in before:
        if name not in now:
            if name not in got.get("missing", {}):
                lines.append(f"{name}: in the committed digest, not computed now")
            continue
        old, new = before[name], now[name]
        found = _first_difference(old["summary"], new["summary"])
        if found is not None:
            where, a, b = found
            lines.append(f"{name}: summary{where}: committed {_text(a)}, now {_text(b)}")
        if "groups" in old or "groups" in new:
            a, b = old.get("groups", {"columns": [], "rows": []}), new.get("groups", {"columns": [], "rows": []})
            if a["columns"] != b["columns"]:
                lines.append(f"{name}: groups columns: committed {a['columns']}, now {b['columns']}")
            else:
                for i, (x, y) in enumerate(zip(a["rows"], b["rows"])):
                    if _text(x) != _text(y):
                        column = next(c for c, u, v in zip(a["columns"], x, y) if _text(u) != _text(v))
                        k = a["columns"].index(column)
                        lines.append(f"{name}: groups row {i}, column {column!r}: committed {_text(x[k])}, now "
                                     f"{_text(y[k])} (rows: committed {_text(x)}, now {_text(y)})")
                        break
                else:
                    if len(a["rows"]) != len(b["rows"]):
                        lines.append(f"{name}: groups: committed {len(a['rows'])} rows, now {len(b['rows'])}")
    lines += [f"{name}: computed now, not in the committed digest" for name in now if name not in before]
    return lines[:limit] + ([f"... and {len(lines) - limit} more"] if len(lines) > limit else [])


def write(digest: dict, path: str | Path) -> Path:
    """Write ``digest`` as JSON, one group row a line (so that a change reads as a short diff), atomically."""
    path = Path(path)
    out = ['{"format": %d, "cloudsim": %s, "runs": {' % (digest.get("format", FORMAT), json.dumps(__version__))]
    names = list(digest["runs"])
    for i, name in enumerate(names):
        run = digest["runs"][name]
        out.append(f'  {json.dumps(name)}: {{"summary": {json.dumps(run["summary"], sort_keys=True)}'
                   + ("," if "groups" in run else "}" + ("," if i < len(names) - 1 else "")))
        if "groups" in run:
            rows = run["groups"]["rows"]
            out.append(f'   "groups": {{"columns": {json.dumps(run["groups"]["columns"])}, "rows": [')
            out += [f"    {json.dumps(row)}" + ("," if j < len(rows) - 1 else "") for j, row in enumerate(rows)]
            out.append("   ]}}" + ("," if i < len(names) - 1 else ""))
    out.append("}}")
    temporary = path.with_name(f".{path.name}.partial")
    temporary.write_text("\n".join(out) + "\n")
    temporary.replace(path)
    return path


def read(path: str | Path) -> dict:
    """A digest `write` wrote."""
    return json.loads(Path(path).read_text())
