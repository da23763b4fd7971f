"""The Parquet cache of converted traces: concurrent use, damaged entries, stale files, and job selection."""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import traces.cache
from conftest import DATA, write
from traces import CacheError, EmptyWorkloadError, load_alibaba_v2017, load_alibaba_v2018
from traces.cache import cached_parquet

ROOT = Path(__file__).resolve().parents[1]
# v2017 batch_task: create, end, job, task, instances, status, plan_cpu, plan_mem
V2017 = "10,40,1,1,2,Terminated,50,0.01\n12,30,1,2,1,Terminated,100,0.02\n5,20,2,7,3,Terminated,100,0.03\n"
# Submit order, worked out by hand: 11 (5), 3 (10), 4 (10: tie, its first kept row comes after 3's),
# 5 (20: its Failed task created at 20 counts), 6 (20, tie), 9 (30), 8 (30: its first row is skipped, its
# first kept row comes after 9's). Job 10 was created before the trace window: skipped.
TIES = (
    "20,30,5,1,1,Failed,50,0.01\n"
    "10,30,3,1,1,Terminated,50,0.01\n"
    "10,25,4,1,1,Terminated,50,0.01\n"
    "25,40,5,2,1,Terminated,50,0.01\n"
    "20,30,6,1,1,Terminated,50,0.01\n"
    "40,50,6,2,1,Terminated,50,0.01\n"
    "30,40,8,1,1,Waiting,,\n"
    "30,45,9,1,1,Terminated,50,0.01\n"
    "30,50,8,2,1,Terminated,50,0.01\n"
    "-5,10,10,1,1,Terminated,50,0.01\n"
    "5,15,11,1,1,Terminated,50,0.01\n"
)
TIES_ORDER = ["11", "3", "4", "5", "6", "9", "8"]
# v2018: j_f (45), then j_a and j_b tied at 50 (file order); j_c has a Running task (whole job skipped),
# j_d's tasks need each other, j_e's task needs a task j_e does not have.
DAGS = (
    "M1,1.0,j_a,1,Terminated,50,60,100.0,0.5\n"
    "R2_1,1.0,j_a,1,Terminated,60,70,100.0,0.5\n"
    "M1,1.0,j_b,1,Terminated,50,55,100.0,0.5\n"
    "M1,1.0,j_c,1,Running,40,0,100.0,0.5\n"
    "R2_1,1.0,j_c,1,Terminated,45,50,100.0,0.5\n"
    "R1_2,1.0,j_d,1,Terminated,20,30,100.0,0.5\n"
    "R2_1,1.0,j_d,1,Terminated,20,30,100.0,0.5\n"
    "R2_1,1.0,j_e,1,Terminated,10,30,100.0,0.5\n"
    "task_Nzg3ODAwNDgzMTAwNTIxNTM4NQ==,2.0,j_f,1,Terminated,45,50,50.0,0.2\n"
)


def entries(cache, kind="tasks"):
    return sorted(cache.glob(f"*.{kind}.*.parquet"))


def leftovers(cache):
    return sorted(p.name for p in cache.iterdir() if p.name.endswith((".tmp", ".partial")))


# ----------------------------------------------------------------- concurrent use
CONVERT_AT_ONCE = r"""
import json, os, sys, time
from pathlib import Path
import traces.alibaba as ta
trace, barrier, cache = sys.argv[1:4]
original = ta._convert_tasks
def convert_when_both_are_ready(*args, **kwargs):
    convert = original(*args, **kwargs)
    def run(write):
        Path(barrier, f"ready-{os.getpid()}").touch()
        deadline = time.time() + 30
        while len(list(Path(barrier).glob("ready-*"))) < 2 and time.time() < deadline:
            time.sleep(0.01)
        return convert(write)
    return run
ta._convert_tasks = convert_when_both_are_ready
workload = ta.load_alibaba_v2017(trace, cache=cache)
print(json.dumps([[j.id, j.submit_time] for j in workload.jobs]))
"""


def test_two_processes_converting_the_same_trace_at_once_both_succeed(tmp_path, cache):
    trace = write(tmp_path, "batch_task.csv", V2017)
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    processes = [subprocess.Popen([sys.executable, "-c", CONVERT_AT_ONCE, str(trace), str(barrier), str(cache)],
                                  env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                 for _ in range(2)]
    outputs = [p.communicate(timeout=60) for p in processes]
    assert [p.returncode for p in processes] == [0, 0], [err for _, err in outputs]
    assert len(list(barrier.glob("ready-*"))) == 2  # both were converting at the same time
    assert [json.loads(out) for out, _ in outputs] == [[["2", 5.0], ["1", 10.0]]] * 2
    assert len(entries(cache)) == 1 and leftovers(cache) == []
    assert [(j.id, j.submit_time) for j in load_alibaba_v2017(trace, cache=cache).jobs] == [("2", 5.0), ("1", 10.0)]


def test_the_report_travels_inside_the_parquet_file(tmp_path, cache):
    trace = write(tmp_path, "t.csv", "x")
    schema = pa.schema([("a", pa.int64())])

    def convert(write_table):
        write_table(pa.table({"a": [1, 2, 3]}))
        return {"rows": 3, "skipped": {"odd": 1}}

    path, report = cached_parquet(trace, "demo", {}, convert, schema, cache)
    assert report == {"rows": 3, "skipped": {"odd": 1}}
    assert [p.name for p in cache.iterdir()] == [path.name]  # one file: data and report cannot part
    assert cached_parquet(trace, "demo", {}, lambda write_table: pytest.fail("converted twice"), schema, cache) == \
        (path, report)


# ----------------------------------------------------------------- damaged entries
def damage_by_truncation(path):
    data = path.read_bytes()
    path.write_bytes(data[: len(data) // 2])


def damage_with_garbage(path):
    path.write_bytes(b"not parquet at all" * 50)


def damage_the_report(path):
    table = pq.read_table(path)
    pq.write_table(table.replace_schema_metadata({"cloudsim.rows": "999", "cloudsim.report": "{}",
                                                  "cloudsim.token": "x"}), path)


def damage_by_dropping_the_report(path):
    pq.write_table(pq.read_table(path).replace_schema_metadata({}), path)


@pytest.mark.parametrize("damage, reason", [
    (damage_by_truncation, "magic bytes not found"),
    (damage_with_garbage, "magic bytes not found"),
    (damage_the_report, "3 rows where its report says 999"),
    (damage_by_dropping_the_report, "no conversion report in its metadata"),
])
def test_a_damaged_entry_is_removed_and_rebuilt_with_a_note(tmp_path, cache, capsys, damage, reason):
    trace = write(tmp_path, "batch_task.csv", V2017)
    first = load_alibaba_v2017(trace, cache=cache)
    [entry] = entries(cache)
    damage(entry)
    again = load_alibaba_v2017(trace, cache=cache)
    assert again.jobs == first.jobs and again.skipped == first.skipped
    err = capsys.readouterr().err
    assert f"cloudsim: cache entry {entry} was damaged (" in err and reason in err and err.endswith("; rebuilding\n")
    assert entries(cache) == [entry] and leftovers(cache) == []


def test_an_entry_whose_data_cannot_be_read_is_rebuilt(tmp_path, cache, capsys):
    trace = write(tmp_path, "batch_task.csv", "".join(f"{10 + i},{50 + i},{i % 7 + 1},{i},2,Terminated,50,0.01\n"
                                                      for i in range(1, 400)))
    first = load_alibaba_v2017(trace, cache=cache)
    [entry] = entries(cache)
    data = bytearray(entry.read_bytes())
    data[100:2000] = bytes((b * 7 + 3) % 256 for b in data[100:2000])  # pages scrambled, footer intact
    entry.write_bytes(bytes(data))
    assert load_alibaba_v2017(trace, cache=cache).jobs == first.jobs
    assert f"cache entry {entry} was damaged" in capsys.readouterr().err


def test_a_damaged_job_index_is_rebuilt(tmp_path, cache, capsys):
    trace = write(tmp_path, "batch_task.csv", V2017)
    first = load_alibaba_v2017(trace, jobs=(1, 2), cache=cache)
    [index] = entries(cache, "jobs-drop")
    damage_by_truncation(index)
    assert load_alibaba_v2017(trace, jobs=(1, 2), cache=cache).jobs == first.jobs
    assert f"cache entry {index} was damaged" in capsys.readouterr().err


# ----------------------------------------------------------------- temporary files
def test_failed_and_interrupted_conversions_leave_no_temporary_file(tmp_path, cache):
    bad = write(tmp_path, "bad.csv", V2017 + "1,2,3,4,5,Exploded,1,1\n")
    with pytest.raises(ValueError, match="column 'status' is not one of"):
        load_alibaba_v2017(bad, cache=cache)
    assert list(cache.iterdir()) == []

    def interrupted(write_table):
        write_table(pa.table({"a": [1]}))
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        cached_parquet(bad, "demo", {}, interrupted, pa.schema([("a", pa.int64())]), cache)
    assert list(cache.iterdir()) == []


def test_stale_temporaries_of_dead_conversions_are_removed_at_the_next_use(tmp_path, cache):
    cache.mkdir()
    stale, fresh = cache / ".a.tasks.0123456789abcdef.parquet.4242-0a0b0c0d.tmp", cache / ".b.parquet.4243-0c0d0e0f.tmp"
    old_style, foreign = cache / "a.tasks.0123456789abcdef.partial", cache / "someone-elses.tmp"
    for path in (stale, fresh, old_style, foreign):
        path.write_bytes(b"half a conversion")
    two_hours_ago = time.time() - 7200
    for path in (stale, old_style, foreign):
        os.utime(path, (two_hours_ago, two_hours_ago))
    load_alibaba_v2017(write(tmp_path, "t.csv", V2017), cache=cache)
    # The fresh one may still be being written; a file of another program is not ours to remove.
    assert leftovers(cache) == [fresh.name, foreign.name]


# ----------------------------------------------------------------- the key
def test_an_edited_file_is_never_served_stale(tmp_path, cache):
    trace = write(tmp_path, "batch_task.csv", V2017)
    assert [j.submit_time for j in load_alibaba_v2017(trace, cache=cache).jobs] == [5.0, 10.0]
    before = trace.stat()
    trace.write_text(V2017.replace("5,20,2,7", "6,20,2,7"))  # same size
    os.utime(trace, ns=(before.st_atime_ns, before.st_mtime_ns))  # and the old modification time
    assert trace.stat().st_size == before.st_size and trace.stat().st_mtime_ns == before.st_mtime_ns
    assert [j.submit_time for j in load_alibaba_v2017(trace, cache=cache).jobs] == [6.0, 10.0]


# ----------------------------------------------------------------- the folder
def test_a_cache_folder_that_cannot_be_used_is_a_clear_error(tmp_path):
    trace = write(tmp_path, "t.csv", V2017)
    occupied = write(tmp_path, "occupied", "a file where the folder should be")
    with pytest.raises(CacheError, match=f"cache folder {occupied} cannot be used \\(it is a file, not a folder\\); "
                                         f"pass --cache DIR or set CLOUDSIM_CACHE to a folder you can write"):
        load_alibaba_v2017(trace, cache=occupied)
    below = occupied / "cache"
    with pytest.raises(CacheError, match=f"cache folder {below} cannot be used \\(Not a directory\\); pass --cache"):
        load_alibaba_v2017(trace, cache=below)


def test_the_default_folder_comes_from_the_environment(tmp_path, monkeypatch):
    monkeypatch.setenv("CLOUDSIM_CACHE", str(tmp_path / "from-env"))
    load_alibaba_v2017(write(tmp_path, "t.csv", V2017))
    assert len(entries(tmp_path / "from-env")) == 1


# ----------------------------------------------------------------- job selection
def test_job_ranges_equal_a_full_load_sliced_with_ties_and_skips(tmp_path, cache):
    trace = write(tmp_path, "ties.csv", TIES)
    full = load_alibaba_v2017(trace, cache=cache)
    assert [j.id for j in full.jobs] == TIES_ORDER
    assert full.total_jobs == 7
    assert full.skipped == {"before_window": 1, "status_Failed": 1, "status_Waiting": 1}
    for start in range(7):
        for stop in [*range(start + 1, 9), None]:
            part = load_alibaba_v2017(trace, jobs=(start, stop), cache=cache)
            assert part.jobs == full.jobs[start:stop], (start, stop)
            assert (part.total_jobs, part.skipped) == (7, full.skipped)  # whole-trace counts
    windowed = load_alibaba_v2017(trace, window=(10, 30), cache=cache)
    assert [j.id for j in windowed.jobs] == ["3", "4", "5", "6"] and windowed.total_jobs == 4
    assert windowed.skipped == {"status_Failed": 1}
    part = load_alibaba_v2017(trace, window=(10, 30), jobs=(1, 3), cache=cache)
    assert part.jobs == windowed.jobs[1:3] and part.total_jobs == 4 and part.skipped == windowed.skipped


def test_dag_job_ranges_equal_a_full_load_sliced(tmp_path, cache):
    trace = write(tmp_path, "dags.csv", DAGS)
    full = load_alibaba_v2018(trace, cache=cache)
    assert [(j.id, j.submit_time) for j in full.jobs] == [("j_f", 45.0), ("j_a", 50.0), ("j_b", 50.0)]
    assert full.skipped == {"status_Running": 1, "job_incomplete": 1, "dependency_cycle": 2, "unknown_parent": 1}
    for start, stop in [(0, 1), (1, 3), (2, None), (0, 3)]:
        part = load_alibaba_v2018(trace, jobs=(start, stop), cache=cache)
        assert part.jobs == full.jobs[start:stop] and part.skipped == full.skipped and part.total_jobs == 3


def test_a_selection_reads_only_the_row_groups_of_its_jobs(tmp_path, cache, monkeypatch):
    monkeypatch.setattr(traces.cache, "ROW_GROUP_ROWS", 2)  # rows 2k and 2k+1 of the table (lines 2k+1, 2k+2) per group
    trace = write(tmp_path, "ties.csv", TIES)
    load_alibaba_v2017(trace, cache=cache)  # converts and indexes: reads everything once
    read = []
    original = pq.ParquetFile.read_row_group
    monkeypatch.setattr(pq.ParquetFile, "read_row_group",
                        lambda self, i, *args, **kwargs: read.append(i) or original(self, i, *args, **kwargs))
    assert [j.id for j in load_alibaba_v2017(trace, jobs=(0, 1), cache=cache).jobs] == ["11"]
    assert read == [5]  # job 11 is line 11 alone
    read.clear()
    assert [j.id for j in load_alibaba_v2017(trace, jobs=(1, 3), cache=cache).jobs] == ["3", "4"]
    assert read == [0, 1]  # lines 2 and 3
    read.clear()
    assert [j.id for j in load_alibaba_v2017(trace, jobs=(3, 4), cache=cache).jobs] == ["5"]
    assert read == [0, 1]  # job 5: lines 1 and 4


def test_bad_job_ranges_are_refused(tmp_path, cache):
    trace = write(tmp_path, "t.csv", V2017)
    for jobs in [(2, 1), (-1, 2), (1, 1), ("a", 2), (1.5, 3)]:
        with pytest.raises(ValueError, match="jobs must be"):
            load_alibaba_v2017(trace, jobs=jobs, cache=cache)
    with pytest.raises(EmptyWorkloadError, match="jobs 2:3 select no job: the trace has 2 replayable job"):
        load_alibaba_v2017(trace, jobs=(2, 3), cache=cache)
    assert [j.id for j in load_alibaba_v2017(trace, jobs=(1, 10), cache=cache).jobs] == ["1"]  # up to the end


def real(*parts):
    path = DATA.joinpath("alibaba", *parts)
    if not path.is_file():
        pytest.skip(f"real sample {path} not found (set CLOUDSIM_DATA)")
    return path


@pytest.mark.parametrize("load, sample, window", [
    (load_alibaba_v2017, ("v2017", "batch_task.csv"), (1000, 30000)),
    (load_alibaba_v2018, ("v2018", "selected_DAGs.csv"), (86400, 172800)),
])
def test_job_ranges_of_the_real_samples_equal_a_full_load_sliced(cache, load, sample, window):
    path = real(*sample)
    full = load(path, cache=cache)
    count = len(full.jobs)
    for start, stop in [(0, 3), (100, 200), (count - 5, None)]:
        part = load(path, jobs=(start, stop), cache=cache)
        assert part.jobs == full.jobs[start:stop] and part.skipped == full.skipped and part.total_jobs == count
    windowed = load(path, window=window, cache=cache)
    part = load(path, window=window, jobs=(10, 20), cache=cache)
    assert part.jobs == windowed.jobs[10:20] and part.total_jobs == len(windowed.jobs)
