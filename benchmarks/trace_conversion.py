"""How fast raw Alibaba CSV tables become the Parquet cache, and proof that the conversion streams.

The published Alibaba v2018 batch tables are far larger than memory (batch_instance is
about 20 GB as .tar.gz), so `traces.cache` converts them once, batch by batch, into a
Parquet cache. This benchmark answers three questions a user asks before pointing the
loaders at the full trace:

1. How long does converting each real sample take (rows, wall seconds as the median of
   fresh processes with an empty cache, rows/s, peak RSS), and how long does the second,
   cached load take? Samples: v2017 batch_task.csv and server_event.csv, v2018
   selected_DAGs.csv (a batch_task sample) and machine_meta.csv.
2. What does that rate project for the full v2018 batch_task and batch_instance tables?
3. Does peak memory stay flat as the file grows? Synthetic v2018-style batch_instance
   files (headerless, the 14 columns of the official schema, values shaped like the real
   ones) of 0.5M to 5M rows are generated into a temporary directory (never kept) and
   converted through the loader's instance path (`load_alibaba_v2018` with a tiny
   matching batch_task, which calls `cached_parquet` with `_convert_instances`).

Every measurement runs in a fresh Python process with its own empty cache directory;
peak RSS is that process's high-water mark (``VmHWM``; ``ru_maxrss`` is not used
because Linux carries it over from the parent across fork and exec). The conversion time is taken around the
loader's own `cached_parquet` call (wrapped in the child process), so it excludes
imports and job building; the whole first and second loads are reported too.

    python benchmarks/trace_conversion.py                  # everything (about 5 minutes on 2 cores)
    python benchmarks/trace_conversion.py --stream-rows 500000,1000000 --repeats 1   # quicker

Writes benchmarks/results/trace_conversion.{md,json} and conversion_memory.png.

It calls the loaders directly, not `cloudsim.run`, because it measures the conversion to Parquet
(`cached_parquet`) and its peak memory, with nothing simulated; a replay would add building the jobs, its checks
and the runs to each process.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmark_common import code_version

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
DEFAULT_DATA = ROOT.parent / "shared" / "data" / "alibaba"

# Approximate sizes of the full published v2018 tables. trace_2018.md (alibaba/clusterdata)
# gives the archive sizes (batch_task.tar.gz 125 MB, batch_instance.tar.gz 20 GB) but no
# row counts; the row counts are the commonly quoted line counts of the extracted files.
FULL_V2018 = {
    "batch_task": {"rows": 14_295_731, "archive": "batch_task.tar.gz, 125 MB"},
    "batch_instance": {"rows": 1_351_255_775, "archive": "batch_instance.tar.gz, 20 GB"},
}

# The real samples: (case name, loader call in the child, file under --data, table).
SAMPLES = [
    ("v2017 batch_task", "load_alibaba_v2017", "v2017/batch_task.csv", "V2017_BATCH_TASK"),
    ("v2017 server_event", "machines_v2017", "v2017/server_event.csv", "V2017_SERVER_EVENT"),
    ("v2018 batch_task (selected_DAGs)", "load_alibaba_v2018", "v2018/selected_DAGs.csv", "V2018_BATCH_TASK"),
    ("v2018 machine_meta", "machines_v2018", "v2018/machine_meta.csv", "V2018_MACHINE_META"),
]

CHILD = r"""
import json, os, resource, sys, time
def rss_mb():
    # VmHWM: the peak RSS of this process's own address space. ru_maxrss would not do:
    # Linux carries it over fork and exec, so it starts at the parent's RSS.
    try:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
def current_rss_mb():
    with open("/proc/self/status") as status:
        return next(int(l.split()[1]) / 1024 for l in status if l.startswith("VmRSS:"))
started = time.perf_counter()
spec = json.loads(sys.argv[1])
import traces.alibaba as ta
from traces.rawcsv import stream_table
imports_s = time.perf_counter() - started
baseline_rss = rss_mb()
calls = []
original = ta.cached_parquet
def timed_cached_parquet(*args, **kwargs):
    t = time.perf_counter()
    target, report = original(*args, **kwargs)
    calls.append({"kind": args[1], "seconds": time.perf_counter() - t, "rss_mb": rss_mb(),
                  "report": report, "parquet_bytes": target.stat().st_size})
    return target, report
ta.cached_parquet = timed_cached_parquet
import pyarrow as pa
loads = []
streams = {}  # file -> [(rows read so far, current RSS MB, Arrow-allocated MB)] per batch, first load only
def traced(original):
    # Wraps the loader's batch reader (stream_table yields frames, stream_batches (line, batch) pairs).
    def reader(path, *args, **kwargs):
        rows, trace = 0, []
        if not loads:
            streams[str(path)] = trace
        for item in original(path, *args, **kwargs):
            rows += item[1].num_rows if isinstance(item, tuple) else len(item)
            trace.append((rows, round(current_rss_mb(), 1), round(pa.total_allocated_bytes() / 2**20, 1)))
            yield item
    return reader
for name in ("stream_table", "stream_batches"):
    if hasattr(ta, name):
        setattr(ta, name, traced(getattr(ta, name)))
func = getattr(ta, spec["call"])
def call():
    if spec["call"].startswith("machines_"):
        table = func(spec["path"])
        return {"machines": table.cluster.machines, "events": len(table.events)}
    workload = func(*spec["args"], cache=spec["cache"])
    return {"jobs": len(workload.jobs), "skipped": workload.skipped}
for _ in range(2):
    t = time.perf_counter()
    info = call()
    loads.append({"seconds": time.perf_counter() - t, "rss_mb": rss_mb(), **info})
row = {"imports_s": imports_s, "baseline_rss_mb": baseline_rss, "loads": loads, "calls": calls, "streams": streams,
       "arrow_pool": pa.default_memory_pool().backend_name}
if spec.get("count_rows"):  # after the measurements: it would only add to them
    row["rows"] = sum(len(f) for f in stream_table(spec["path"], getattr(ta, spec["table"])))
print(json.dumps(row), flush=True)
# Leave without interpreter shutdown: up to commit 4919adc, a process that had read CSV through
# traces.rawcsv.stream_batches (Python file callbacks from Arrow's reader threads) sometimes
# aborted at exit ("terminate called without an active exception"), after all its work.
os._exit(0)
"""


def run_child(spec: dict, cache: Path) -> dict:
    """One fresh process with an empty private cache; returns its measurements."""
    if cache.exists():
        shutil.rmtree(cache)
    cache.mkdir(parents=True)
    env = {**os.environ, "CLOUDSIM_CACHE": str(cache), "PYTHONPATH": str(ROOT)}
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", CHILD, json.dumps({**spec, "cache": str(cache)})],
                         cwd=ROOT, env=env, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"child failed for {spec}:\n{out.stderr[-3000:]}")
    row = json.loads(out.stdout.splitlines()[-1])
    row["process_s"] = time.perf_counter() - started
    return row


def progress(message: str) -> None:
    print(f"[trace_conversion {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


def summarise(name: str, runs: list[dict], rows: int, file_bytes: int) -> dict:
    """Medians over the runs of one case."""
    cached = bool(runs[0]["calls"])
    first = [r["calls"][0]["seconds"] if cached else r["loads"][0]["seconds"] for r in runs]
    convert_s = statistics.median(first)
    row = {
        "case": name,
        "rows": rows,
        "file_mb": round(file_bytes / 1e6, 2),
        "runs": len(runs),
        "parquet_cache": cached,
        "convert_s": round(convert_s, 3),
        "rows_per_s": round(rows / convert_s) if convert_s > 0 else None,
        "first_load_s": round(statistics.median(r["loads"][0]["seconds"] for r in runs), 3),
        "second_load_s": round(statistics.median(r["loads"][1]["seconds"] for r in runs), 3),
        "cache_hit_s": round(statistics.median(r["calls"][-1]["seconds"] for r in runs), 4) if cached else None,
        "baseline_rss_mb": round(statistics.median(r["baseline_rss_mb"] for r in runs)),
        "convert_peak_rss_mb": round(max(r["calls"][0]["rss_mb"] for r in runs)) if cached else None,
        "peak_rss_mb": round(max(r["loads"][-1]["rss_mb"] for r in runs)),
        "parquet_mb": round(runs[0]["calls"][0]["parquet_bytes"] / 1e6, 2) if cached else None,
        "process_s": round(statistics.median(r["process_s"] for r in runs), 2),
    }
    if cached:
        row["report"] = runs[0]["calls"][0]["report"]
    info = {k: v for k, v in runs[0]["loads"][0].items() if k not in ("seconds", "rss_mb")}
    row.update(info)
    return row


def real_samples(data: Path, repeats: int, cache_root: Path) -> list[dict]:
    rows = []
    for name, call, relative, table in SAMPLES:
        path = data / relative
        if not path.is_file():
            sys.exit(f"sample not found: {path} (pass --data DIR holding v2017/ and v2018/)")
        spec = {"call": call, "path": str(path), "args": [str(path)], "table": table}
        runs = []
        for k in range(repeats):
            progress(f"sample {name}: run {k + 1}/{repeats}")
            runs.append(run_child({**spec, "count_rows": k == 0}, cache_root / f"sample-{len(rows)}-{k}"))
        count = runs[0]["calls"][0]["report"]["rows"] if runs[0]["calls"] else runs[0]["rows"]
        rows.append(summarise(name, runs, count, path.stat().st_size))
        progress(f"sample {name}: {json.dumps({k: v for k, v in rows[-1].items() if k != 'report'})}")
    return rows


# ----------------------------------------------------------------- synthetic batch_instance
TASKS_PER_JOB = 10
INSTANCES_PER_TASK = 100
CHUNK_ROWS = 250_000


def _instance_chunk(first: int, count: int, seed: int):
    """Rows first..first+count-1 of a v2018-style batch_instance table, as a pyarrow Table.

    Job j_<n> has TASKS_PER_JOB tasks in a chain (M1, R2_1, R3_2, ...), each of
    INSTANCES_PER_TASK instances; statuses are mostly Terminated, values within the
    ranges of the real trace. The same rows come out whatever the chunking.
    """
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    rng = np.random.default_rng([seed, first])
    i = np.arange(first, first + count, dtype=np.int64)
    job = i // (TASKS_PER_JOB * INSTANCES_PER_TASK) + 1
    task = (i // INSTANCES_PER_TASK) % TASKS_PER_JOB + 1

    def text(prefix: str, numbers) -> pa.Array:
        return pc.binary_join_element_wise(prefix, pc.cast(pa.array(numbers), pa.string()), "")

    task_name = pc.if_else(pa.array(task == 1), "M1",
                           pc.binary_join_element_wise(text("R", task), pc.cast(pa.array(task - 1), pa.string()), "_"))
    statuses = np.array(["Terminated", "Failed", "Running", "Waiting", "Interrupted"])
    status = statuses[rng.choice(len(statuses), size=count, p=[0.95, 0.03, 0.01, 0.005, 0.005])]
    start = (job * 7919) % 600_000 + (task - 1) * 300 + rng.integers(1, 60, size=count)
    end = start + rng.integers(1, 3_000, size=count)
    end[status == "Running"] = 0
    cpu_avg = np.round(rng.uniform(1, 100, size=count), 2)
    mem_avg = np.round(rng.uniform(0.01, 2.0, size=count), 2)
    return pa.table({
        "instance_name": text("ins_", i + 1),
        "task_name": task_name,
        "job_name": text("j_", job),
        "task_type": rng.integers(1, 13, size=count),
        "status": pa.array(status),
        "start_time": start,
        "end_time": end,
        "machine_id": text("m_", rng.integers(1, 4035, size=count)),
        "seq_no": np.ones(count, dtype=np.int64),
        "total_seq_no": np.ones(count, dtype=np.int64),
        "cpu_avg": cpu_avg,
        "cpu_max": np.round(cpu_avg + rng.uniform(0, 50, size=count), 2),
        "mem_avg": mem_avg,
        "mem_max": np.round(mem_avg + rng.uniform(0, 0.5, size=count), 2),
    })


def write_instances(path: Path, rows: int, seed: int) -> None:
    """A headerless batch_instance CSV of ``rows`` rows, written chunk by chunk."""
    import pyarrow.csv as pacsv

    options = pacsv.WriteOptions(include_header=False)
    first_chunk = _instance_chunk(0, min(CHUNK_ROWS, rows), seed)
    with pacsv.CSVWriter(path, first_chunk.schema, write_options=options) as writer:
        writer.write_table(first_chunk)
        for first in range(CHUNK_ROWS, rows, CHUNK_ROWS):
            writer.write_table(_instance_chunk(first, min(CHUNK_ROWS, rows - first), seed))


def write_tiny_tasks(path: Path) -> None:
    """A headerless v2018 batch_task with job j_1 only, matching the synthetic instances."""
    lines = []
    for t in range(1, TASKS_PER_JOB + 1):
        name = "M1" if t == 1 else f"R{t}_{t - 1}"
        lines.append(f"{name},{INSTANCES_PER_TASK}.0,j_1,1,Terminated,{t * 300},{t * 300 + 200},100.0,0.5")
    path.write_text("\n".join(lines) + "\n")


def streaming(sizes: list[int], repeats: int, seed: int, work: Path, cache_root: Path) -> list[dict]:
    tasks = work / "tiny_batch_task.csv"
    write_tiny_tasks(tasks)
    rows = []
    for size in sizes:
        path = work / f"batch_instance_{size}.csv"
        started = time.perf_counter()
        write_instances(path, size, seed)
        progress(f"stream {size:,} rows: wrote {path.stat().st_size / 1e6:.0f} MB in "
                 f"{time.perf_counter() - started:.1f} s")
        spec = {"call": "load_alibaba_v2018", "path": str(path), "args": [str(tasks), str(path)]}
        runs = []
        for k in range(repeats):
            progress(f"stream {size:,} rows: run {k + 1}/{repeats}")
            runs.append(run_child(spec, cache_root / f"stream-{size}-{k}"))
        # calls: [tasks convert, instances convert, tasks hit, instances hit]; keep the instance ones
        for r in runs:
            instance_calls = [c for c in r["calls"] if c["kind"] == "instances"]
            if len(instance_calls) != 2:
                raise RuntimeError("load_alibaba_v2018 no longer calls traces.alibaba.cached_parquet for instances")
            r["calls"] = instance_calls
        row = summarise(f"batch_instance {size:,} rows", runs, runs[0]["calls"][0]["report"]["rows"],
                        path.stat().st_size)
        row["rows_generated"] = size
        row["arrow_pool"] = runs[0]["arrow_pool"]
        traces = [r["streams"].get(str(path), []) for r in runs]
        if not all(traces):
            progress("warning: the loader's batch reader was not traced (renamed?); no per-batch memory")
        row["batches"] = len(traces[0]) or None
        allocated = [b[2] for t in traces for b in t]
        row["arrow_allocated_max_mb"] = round(max(allocated)) if allocated else None
        row["batch_trace"] = traces[0]  # rows read, RSS MB, Arrow-allocated MB after each batch (first run)
        rows.append(row)
        progress(f"stream {size:,} rows: "
                 f"{json.dumps({k: v for k, v in row.items() if k not in ('report', 'batch_trace')})}")
        path.unlink()  # several hundred MB: only one file on disk at a time
    return rows


def stream_note(stream: list[dict]) -> str:
    if not stream:
        return "Skipped."
    a, b = stream[0], stream[-1]
    text = (
        f"The file grew {b['rows'] / a['rows']:.0f}-fold ({a['file_mb']:,.0f} to {b['file_mb']:,.0f} MB of CSV) "
        f"and the peak RSS of the conversion went from {a['convert_peak_rss_mb']} to {b['convert_peak_rss_mb']} MB "
        f"({b['convert_peak_rss_mb'] / a['convert_peak_rss_mb']:.1f}-fold).")
    if len(stream) > 1:
        c = stream[-2]
        text += (f" From {c['rows']:,} to {b['rows']:,} rows ({b['rows'] / c['rows']:.1f}x) the peak moved by "
                 f"{b['convert_peak_rss_mb'] - c['convert_peak_rss_mb']:+} MB.")
    trace = b["batch_trace"]
    if not trace:
        return text
    second_half = [t[1] for t in trace[len(trace) // 2:]]
    text += (
        f" During the {b['rows']:,}-row conversion ({len(trace)} batches) the RSS over the second half of the "
        f"batches stayed between {min(second_half):.0f} and {max(second_half):.0f} MB. Arrow's own pool "
        f"({a['arrow_pool']}) held at most {max(r['arrow_allocated_max_mb'] or 0 for r in stream)} MB between "
        f"batches; the CSV reader parses blocks of traces.rawcsv.BLOCK_BYTES ahead of the conversion, "
        f"and this read-ahead "
        f"(with the allocators' freed pages) fills up over the first few tens of batches and then stops growing "
        f"(right panel of the plot). Memory is therefore bounded by the block size and the read-ahead, not by the "
        f"file size: {b['convert_peak_rss_mb'] - b['baseline_rss_mb']} MB above the imports here, and files of "
        f"only a few batches stay below it.")
    return text


def projections(samples: list[dict], stream: list[dict]) -> list[dict]:
    out = []
    task_rate = next(r for r in samples if r["case"].startswith("v2018 batch_task"))["rows_per_s"]
    basis = [("batch_task", task_rate, "v2018 selected_DAGs.csv conversion (median)")]
    rates = [r["rows_per_s"] for r in stream]
    if stream:
        largest = max(stream, key=lambda r: r["rows"])
        basis.append(("batch_instance", round(statistics.median(rates)),
                      f"synthetic batch_instance conversions: median of the {len(rates)} file sizes' median rates "
                      f"(range {min(rates):,} to {max(rates):,})"))
        bytes_per_row = largest["file_mb"] * 1e6 / largest["rows"]
        parquet_per_row = largest["parquet_mb"] * 1e6 / largest["rows"]
    for table, rate, source in basis:
        rows = FULL_V2018[table]["rows"]
        seconds = rows / rate
        row = {"table": f"v2018 {table} (full)", "rows_assumed": rows, "archive": FULL_V2018[table]["archive"],
               "rate_rows_per_s": rate, "rate_from": source, "projected_s": round(seconds),
               "projected_h": round(seconds / 3600, 2)}
        if table == "batch_instance":
            row["projected_range_s"] = [round(rows / max(rates)), round(rows / min(rates))]
            row["csv_gb_estimate"] = round(rows * bytes_per_row / 1e9)
            row["parquet_gb_estimate"] = round(rows * parquet_per_row / 1e9)
        out.append(row)
    return out


# ----------------------------------------------------------------------------- output
def plot_memory(stream: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    rows = [r["rows"] / 1e6 for r in stream]
    mb = [r["file_mb"] for r in stream]
    fig, (left, right) = plt.subplots(1, 2, figsize=(13.5, 4.8))
    peaks = [r["convert_peak_rss_mb"] for r in stream]
    left.plot(rows, peaks, "o-", label="peak RSS of the conversion (max over runs)")
    left.plot(rows, [r["baseline_rss_mb"] for r in stream], "^:", label="RSS after imports (baseline)")
    left.plot(rows, [r["arrow_allocated_max_mb"] for r in stream], "s--", label="Arrow-allocated memory, max per batch")
    for x, y, size in zip(rows, peaks, mb):
        left.annotate(f"{size:,.0f} MB", (x, y), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=8)
    left.set_xscale("log")
    left.set_ylim(0, max(peaks) * 1.6)
    left.margins(x=0.1)
    left.set_xlabel("rows in batch_instance CSV (millions, log scale); labels: CSV size")
    left.set_ylabel("memory (MB)")
    left.set_title("Peak memory vs file size")
    left.grid(True, which="both", alpha=0.3)
    left.legend(loc="upper left", fontsize=8)
    bytes_per_row = mb[-1] / rows[-1]
    top = left.secondary_xaxis("top", functions=(lambda r: r * bytes_per_row, lambda m: m / bytes_per_row))
    top.set_xlabel("CSV file size (MB)")
    for r in stream:
        trace = r["batch_trace"]
        right.plot([b[0] / 1e6 for b in trace], [b[1] for b in trace], "-", lw=1.2,
                   label=f"RSS, {r['rows'] / 1e6:g}M-row file")
    largest = stream[-1]["batch_trace"]
    right.plot([b[0] / 1e6 for b in largest], [b[2] for b in largest], "k:", lw=1.2,
               label="Arrow-allocated, largest file")
    right.set_xlabel("rows converted so far (millions)")
    right.set_ylabel("memory after each batch (MB)")
    right.set_title("Memory during one conversion, batch by batch")
    right.set_ylim(bottom=0)
    right.grid(True, alpha=0.3)
    right.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.suptitle("Streaming conversion of synthetic v2018 batch_instance CSV to the Parquet cache "
                 f"(Arrow pool: {stream[0]['arrow_pool']})")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)


def write_markdown(result: dict, path: Path) -> None:
    lines = ["# Trace conversion: raw CSV to the Parquet cache", "",
             f"Command: `{result['command']}`", "",
             f"Code: {result['code']}.", "",
             f"Machine: {result['machine']}. Every case runs in a fresh process with an empty cache directory; "
             f"seconds are medians over the runs, peak RSS the largest over the runs.", "",
             "## Real samples", "",
             "| table | rows | file MB | runs | convert s | rows/s | RSS after imports MB | peak RSS MB, conversion | "
             "peak RSS MB, process | first load s | second load s | cache hit s | Parquet MB |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["samples"]:
        cache = r["cache_hit_s"] if r["parquet_cache"] else "no cache"
        peak = r["convert_peak_rss_mb"] if r["parquet_cache"] else r["peak_rss_mb"]
        lines.append(f"| {r['case']} | {r['rows']:,} | {r['file_mb']} | {r['runs']} | {r['convert_s']} | "
                     f"{r['rows_per_s']:,} | {r['baseline_rss_mb']} | {peak} | {r['peak_rss_mb']} | "
                     f"{r['first_load_s']} | {r['second_load_s']} | {cache} | "
                     f"{r['parquet_mb'] if r['parquet_mb'] is not None else '-'} |")
    lines += ["",
              "convert s: the loader's `cached_parquet` call on an empty cache (CSV read, checks, Parquet write), "
              "timed inside the process. first load s: the whole loader call on the empty cache (conversion, then "
              "reading the cache and building jobs). second load s: the whole loader call again, now reading the cache "
              "(batch_task: reading Parquet and building jobs). cache hit s: the `cached_parquet` call alone on the "
              "second load. `machines_v2017` / `machines_v2018` keep no cache: they stream the CSV on every call, so "
              "their convert s is the whole first call and the second load parses the CSV again.", "",
              "## Projection to the full v2018 tables", "",
              "| table | rows assumed | archive | rate used (rows/s) | rate from | projected time | CSV GB est. "
              "| Parquet GB est. |",
              "|---|---|---|---|---|---|---|---|"]
    for p in result["projections"]:
        minutes = p["projected_s"] < 3600
        when = f"{p['projected_s'] / 60:.1f} min" if minutes else f"{p['projected_h']} h"
        if "projected_range_s" in p:
            low, high = (t / 60 if minutes else t / 3600 for t in p["projected_range_s"])
            when += f"; range {low:.0f} to {high:.0f} min" if minutes else f"; range {low:.2f} to {high:.2f} h"
        lines.append(f"| {p['table']} | {p['rows_assumed']:,} | {p['archive']} | {p['rate_rows_per_s']:,} | "
                     f"{p['rate_from']} | {p['projected_s']:,} s ({when}) | "
                     f"{p.get('csv_gb_estimate', '-')} | {p.get('parquet_gb_estimate', '-')} |")
    lines += ["", result["projection_note"], "",
              "## Streaming proof: synthetic v2018 batch_instance", "",
              "| rows | file MB | batches | runs | convert s | rows/s | peak RSS MB | RSS after imports MB | "
              "peak over imports MB | Arrow-allocated max MB | Terminated rows kept | Parquet MB |",
              "|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["stream"]:
        lines.append(f"| {r['rows']:,} | {r['file_mb']:,.0f} | {r['batches']} | {r['runs']} | {r['convert_s']} | "
                     f"{r['rows_per_s']:,} | {r['convert_peak_rss_mb']} | {r['baseline_rss_mb']} | "
                     f"{r['convert_peak_rss_mb'] - r['baseline_rss_mb']} | {r['arrow_allocated_max_mb']} | "
                     f"{r['report']['terminated_rows']:,} | {r['parquet_mb']} |")
    lines += ["", result["stream_note"], "", "Plot: `benchmarks/results/conversion_memory.png`.", "",
              f"Wall time of the whole benchmark: {result['wall_s']} s.", ""]
    path.write_text("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="folder with v2017/ and v2018/ samples")
    parser.add_argument("--repeats", type=int, default=3, help="fresh-process runs per case (median reported)")
    parser.add_argument("--stream-rows", default="500000,1000000,2000000,5000000,10000000,20000000",
                        help="comma-separated row counts of the synthetic batch_instance files ('' to skip)")
    parser.add_argument("--stream-repeats", type=int, default=3, help="runs per synthetic file")
    parser.add_argument("--seed", type=int, default=0, help="seed of the synthetic rows")
    parser.add_argument("--cache", type=Path, default=None,
                        help="keep caches and generated files here (default: a temporary directory, removed)")
    parser.add_argument("--out", type=Path, default=RESULTS, help="where the results go")
    args = parser.parse_args()
    sizes = [int(s) for s in args.stream_rows.split(",") if s.strip()]
    started = time.perf_counter()
    code_at_start = code_version()
    args.out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="bench-conversion-") as temporary:
        work = Path(args.cache) if args.cache is not None else Path(temporary)
        work.mkdir(parents=True, exist_ok=True)
        samples = real_samples(args.data, args.repeats, work / "caches")
        stream = streaming(sizes, args.stream_repeats, args.seed, work, work / "caches") if sizes else []
    result = {
        "command": "python " + " ".join(shlex.quote(a) for a in [os.path.relpath(sys.argv[0], ROOT), *sys.argv[1:]]),
        "machine": f"{os.cpu_count()} cores, Python {sys.version.split()[0]}",
        "code": code_at_start if code_version() == code_at_start else
        f"{code_at_start} at the start, {code_version()} at the end (the tree changed during the run)",
        "samples": samples,
        "projections": projections(samples, stream),
        "projection_note": (
            "Row counts are approximate. trace_2018.md (alibaba/clusterdata) lists only the archive sizes "
            "(batch_task.tar.gz 125 MB, batch_instance.tar.gz 20 GB); the row counts are the line counts commonly "
            "quoted for the extracted CSV files (about 14.3 million and 1.35 billion). Projected times scale the "
            "measured rates linearly on this machine and leave out decompression: the published files are .tar.gz "
            "archives that must be extracted first (or gunzipped to a plain .csv.gz stream), and the CSV and "
            "Parquet sizes are extrapolated from the synthetic file's bytes per row."),
        "stream": stream,
        "stream_note": stream_note(stream),
        "wall_s": None,
    }
    result["wall_s"] = round(time.perf_counter() - started, 1)
    if stream:
        plot_memory(stream, args.out / "conversion_memory.png")
    (args.out / "trace_conversion.json").write_text(json.dumps(result, indent=1) + "\n")
    write_markdown(result, args.out / "trace_conversion.md")
    progress(f"done in {result['wall_s']} s; wrote {args.out / 'trace_conversion.md'}")


if __name__ == "__main__":
    main()
