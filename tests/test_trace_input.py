"""Trace input that is damaged, marked, compressed, empty or dirty: what the loaders make of it."""


import pytest

from cloudsim import MachineEvent, TaskSpec
from conftest import write
from traces import (
    EmptyWorkloadError,
    TraceFormatError,
    load_alibaba_v2017,
    load_alibaba_v2018,
    load_cloudsimpy,
    machines_v2017,
    machines_v2018,
)
from traces.alibaba import (V2017_BATCH_INSTANCE, V2017_BATCH_TASK, V2017_SERVER_EVENT, V2018_BATCH_INSTANCE,
                            V2018_BATCH_TASK, V2018_MACHINE_META)
from traces.rawcsv import has_header

BOM = "\ufeff"
# v2017 batch_task: create, end, job, task, instances, status, plan_cpu, plan_mem
V2017 = "10,40,1,1,2,Terminated,50,0.01\n12,30,1,2,1,Terminated,100,0.02\n5,20,2,7,3,Terminated,100,0.03\n"
# v2018 batch_task: task_name, instance_num, job_name, task_type, status, start, end, plan_cpu, plan_mem
V2018 = ("M1,2.0,j_1,1,Terminated,100,110,100.0,0.5\n"
         "R2_1,1.0,j_1,1,Terminated,110,130,50.0,1.0\n"
         "task_Nzg3ODAwNDgzMTAwNTIxNTM4NQ==,3.0,j_2,1,Terminated,50,60,100.0,0.2\n")
CLOUDSIMPY_HEADER = ",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk\n"
CLOUDSIMPY = "0,10,4.0,1.0,0.02,3,1,1,0\n1,20,1.0,0.5,0.03,5,12,2,0\n"


def ids(workload):
    return [(j.id, j.submit_time) for j in workload.jobs]


# ----------------------------------------------------------------- header or not
def test_header_rows_are_recognised_by_their_names():
    # The real v2017 sample's header: other names than the schema's, some with a leading space.
    real = ["task_create_time", " task_end_time", " job_id", " task_id", "number_of_instances", " status",
            " number_of_cpus_requested_per_instance_in_the_task",
            "normalized_memory_requested_per_instance_in_the_task"]
    assert has_header(V2017_BATCH_TASK, real)
    assert has_header(V2017_BATCH_TASK, [BOM + "Task_Create_Time", "end", "job", "task", "n", "s", "cpu", "mem"])
    assert has_header(V2018_BATCH_TASK, [f" {c.upper()} " for c in V2018_BATCH_TASK.columns])
    # Data rows, even damaged ones: a numeric column still holds a number.
    assert not has_header(V2017_BATCH_TASK, [BOM + "10", "40", "x1", "1", "2", "Terminated", "50", "0.01"])
    assert not has_header(V2017_BATCH_TASK, ["10", "40", "1", "1", "2", "Terminated", "inf", "nan"])
    assert not has_header(V2018_BATCH_TASK, ["M1", "", "j_1", "1", "Waiting", "0", "0", "", ""])


def test_a_byte_order_mark_does_not_hide_the_first_row(tmp_path, cache):
    plain = load_alibaba_v2017(write(tmp_path, "plain.csv", V2017), cache=cache)
    marked = load_alibaba_v2017(write(tmp_path, "marked.csv", BOM + V2017), cache=cache)
    packed = load_alibaba_v2017(write(tmp_path, "packed.csv.gz", BOM + V2017), cache=cache)
    # Job 2 (created at 5) and job 1, whose first row is line 1: with the row lost job 1 would start at 12.
    assert ids(plain) == ids(marked) == ids(packed) == [("2", 5.0), ("1", 10.0)]
    assert plain.jobs == marked.jobs == packed.jobs


@pytest.mark.parametrize("first, message", [
    ("10,40,x1,1,2,Terminated,50,0.01\n", r"line 1, column 'job_id': 'x1' is not a number"),
    (BOM + "10,40,1,1,2,Terminated,5o,0.01\n", r"line 1, column 'plan_cpu': '5o' is not a number"),
    ("10,40,1,1,2,Exploded,50,0.01\n", r"column 'status' is not one of .* on 1 line\(s\): 1 "),
])
def test_a_damaged_first_row_is_an_error_at_line_1_not_a_dropped_header(tmp_path, cache, first, message):
    with pytest.raises(TraceFormatError, match=f"first.csv: {message}"):
        load_alibaba_v2017(write(tmp_path, "first.csv", first + V2017), cache=cache)


def test_cloudsimpy_first_rows(tmp_path):
    headered = load_cloudsimpy(write(tmp_path, "h.csv", BOM + CLOUDSIMPY_HEADER + CLOUDSIMPY))
    marked = load_cloudsimpy(write(tmp_path, "m.csv", BOM + CLOUDSIMPY))
    packed = load_cloudsimpy(write(tmp_path, "jobs.csv.gz", CLOUDSIMPY_HEADER + CLOUDSIMPY))
    assert headered == marked == packed
    assert [(j.id, j.submit_time) for j in packed] == [(3, 10), (5, 20)]
    # Row 1 of a headerless file with one bad value: reported at line 1, not taken for a header.
    with pytest.raises(TraceFormatError, match=r"d.csv: column 'submit_time' is empty or not a number on 1 "
                                               r"line\(s\): 1 \(first value: 'ten'\)"):
        load_cloudsimpy(write(tmp_path, "d.csv", "0,ten,4.0,1.0,0.02,3,1,1,0\n" + CLOUDSIMPY))


# ----------------------------------------------------------------- empty tables
def test_empty_files_and_header_only_tables_say_so(tmp_path, cache):
    with pytest.raises(TraceFormatError, match=r"empty.csv: the file is empty \(no header, no rows\)"):
        load_alibaba_v2017(write(tmp_path, "empty.csv", ""), cache=cache)
    with pytest.raises(TraceFormatError, match=r"empty.csv.gz: the file is empty"):
        load_alibaba_v2018(write(tmp_path, "empty.csv.gz", ""), cache=cache)
    header = ",".join(V2018_BATCH_TASK.columns) + "\n"
    with pytest.raises(TraceFormatError, match=r"header.csv: has a header row but no data rows"):
        load_alibaba_v2018(write(tmp_path, "header.csv", header), cache=cache)
    with pytest.raises(TraceFormatError, match=r"cs_empty.csv: the file is empty"):
        load_cloudsimpy(write(tmp_path, "cs_empty.csv", ""))
    with pytest.raises(EmptyWorkloadError, match=r"cs_header.csv: has a header row but no data rows"):
        load_cloudsimpy(write(tmp_path, "cs_header.csv", CLOUDSIMPY_HEADER))


def test_a_trace_with_no_replayable_job_is_an_error_with_the_skip_counts(tmp_path, cache):
    text = "10,40,1,1,2,Failed,50,0.01\n-1,40,2,1,2,Terminated,50,0.01\n12,30,2,2,1,Waiting,,\n"
    with pytest.raises(EmptyWorkloadError, match=r"dead.csv: no replayable job \(2 job\(s\) there, 3 task\(s\) "
                                                 r"skipped: before_window 1, status_Failed 1, status_Waiting 1\)"):
        load_alibaba_v2017(write(tmp_path, "dead.csv", text), cache=cache)


def test_an_empty_window_or_selection_is_an_error_naming_it(tmp_path, cache):
    path = write(tmp_path, "tasks.csv", V2017 + "30,35,3,1,1,Failed,50,0.01\n")
    with pytest.raises(EmptyWorkloadError, match=r"no replayable job submitted in the window \[20, 40\) s \(1 "
                                                 r"job\(s\) there, 1 task\(s\) skipped: status_Failed 1; the trace's "
                                                 r"jobs are submitted from 5 to 30 s, 2 of them replayable\)"):
        load_alibaba_v2017(path, window=(20, 40), cache=cache)
    with pytest.raises(EmptyWorkloadError, match=r"jobs 2:5 select no job: the trace has 2 replayable job\(s\) "
                                                 r"\(1 task\(s\) skipped: status_Failed 1\)"):
        load_alibaba_v2017(path, jobs=(2, 5), cache=cache)
    with pytest.raises(EmptyWorkloadError, match=r"jobs 1: select no job: the trace has 1 replayable job\(s\) "
                                                 r"submitted in the window \[0, 8\) s"):
        load_alibaba_v2017(path, window=(0, 8), jobs=(1, None), cache=cache)


# ----------------------------------------------------------------- values
@pytest.mark.parametrize("row, message", [
    ("10,40,2,1,2,Terminated,1e999,0.01\n", r"line 4, column 'plan_cpu': '1e999' is not a finite number"),
    ("10,40,2,1,inf,Terminated,50,0.01\n", r"line 4, column 'instances': 'inf' is not a finite number"),
    ("10,40,99999999999999999999,1,2,Terminated,50,0.01\n",
     r"line 4, column 'job_id': '99999999999999999999' is beyond the 64-bit integer range"),
    ("10,4e1,2,1,2,Terminated,50,0.01\n", r"line 4, column 'task_end_time': '4e1' is not written as an integer"),
])
def test_infinite_and_overflowing_values_name_line_and_column(tmp_path, cache, row, message):
    with pytest.raises(TraceFormatError, match=f"values.csv: {message}"):
        load_alibaba_v2017(write(tmp_path, "values.csv", V2017 + row), cache=cache)


# A valid data row of every raw table, and a loader that reads that table alone.
V2017_INSTANCE = "101,104,2,7,1,Terminated,1,1,0,0,0,0\n"  # start, end, job, task, machine, status, seq, 5 more
V2018_INSTANCE = "ins_1,M1,j_1,1,Terminated,101,104,m_1,1,1,0,0,0,0\n"
SERVER_EVENT = "0,1,add,,64,0.5,1\n"
MACHINE_META = "m_1,0,1,1,96,100,USING\n"
READERS = {
    "alibaba-v2017 batch_task": (V2017, lambda path, cache: load_alibaba_v2017(path, cache=cache)),
    "alibaba-v2018 batch_task": (V2018, lambda path, cache: load_alibaba_v2018(path, cache=cache)),
    "alibaba-v2017 batch_instance": (V2017_INSTANCE, lambda path, cache: load_alibaba_v2017(
        write(path.parent, "tasks.csv", V2017), path, cache=cache)),
    "alibaba-v2018 batch_instance": (V2018_INSTANCE, lambda path, cache: load_alibaba_v2018(
        write(path.parent, "tasks.csv", V2018), path, cache=cache)),
    "alibaba-v2017 server_event": (SERVER_EVENT, lambda path, cache: machines_v2017(path)),
    "alibaba-v2018 machine_meta": (MACHINE_META, lambda path, cache: machines_v2018(path)),
}
SPECS = {spec.name: spec for spec in (V2017_BATCH_TASK, V2018_BATCH_TASK, V2017_BATCH_INSTANCE,
                                      V2018_BATCH_INSTANCE, V2017_SERVER_EVENT, V2018_MACHINE_META)}
NUMERIC_COLUMNS = [(table, column) for table, spec in SPECS.items() for column, kind in spec.types.items()
                   if kind != "string"]


def test_every_table_has_a_valid_row_to_damage():
    assert set(READERS) == set(SPECS)
    assert len(NUMERIC_COLUMNS) == 26  # 7 + 5 + 4 + 2 + 5 + 3 numeric columns read


@pytest.mark.parametrize("value", ["9007199254740993", "-9007199254740993", "1e300", "-1e308"])
@pytest.mark.parametrize("table, column", NUMERIC_COLUMNS)
def test_a_number_beyond_2_53_in_any_column_names_line_and_column(tmp_path, cache, table, column, value):
    # 2**53 + 1 is the first whole number a float64 cannot hold: it would be rounded, a count of 1e300
    # would overflow the engine's int64 arrays. Each is refused on its line (2: after a valid row).
    row, read = READERS[table]
    fields = row.splitlines()[0].split(",")
    integer = SPECS[table].types[column] == "int64"
    if integer and "e" in value:
        value = value.replace("e300", "0" * 300).replace("e308", "0" * 308)  # written as a whole number
    fields[SPECS[table].columns.index(column)] = value
    path = write(tmp_path, "damaged.csv", row.splitlines()[0] + "\n" + ",".join(fields) + "\n")
    beyond = "is beyond the 64-bit integer range" if integer and len(value.lstrip("-")) > 19 else "reaches 2\\*\\*53"
    with pytest.raises(TraceFormatError, match=f"damaged.csv: line 2, column '{column}': '{value}' {beyond}"):
        read(path, cache)


def test_a_count_of_1e308_instances_is_named_in_every_format(tmp_path, cache):
    with pytest.raises(TraceFormatError, match=r"v17.csv: line 4, column 'instances': '1e308' reaches 2\*\*53"):
        load_alibaba_v2017(write(tmp_path, "v17.csv", V2017 + "10,40,2,1,1e308,Terminated,50,0.01\n"), cache=cache)
    with pytest.raises(TraceFormatError, match=r"v18.csv: line 4, column 'instance_num': '1e308' reaches 2\*\*53"):
        load_alibaba_v2018(write(tmp_path, "v18.csv", V2018 + "M1,1e308,j_3,1,Terminated,100,110,100.0,0.5\n"),
                           cache=cache)
    with pytest.raises(TraceFormatError, match=r"cs.csv: column 'instances_num' is beyond the 64-bit integer range "
                                               r"on 1 line\(s\): 3"):
        load_cloudsimpy(write(tmp_path, "cs.csv", CLOUDSIMPY_HEADER + CLOUDSIMPY.replace("12,2,0", "12,1e308,0")))
    with pytest.raises(TraceFormatError, match=r"cs2.csv: column 'duration' reaches 2\*\*53 .* on 1 line\(s\): 2"):
        load_cloudsimpy(write(tmp_path, "cs2.csv", CLOUDSIMPY_HEADER + CLOUDSIMPY.replace("0,10,4.0", "0,10,1e300")))
    with pytest.raises(ValueError, match=r"task 't': instances must be a whole number >= 1 and below 2\*\*53"):
        TaskSpec("t", 10**308, {"cpu": 1}, 1.0)  # the engine's own spec refuses it too


def test_a_machine_number_beyond_2_53_is_named(tmp_path):
    # The machines are ordered by their number: one read as a rounded or wrapped integer would move.
    with pytest.raises(TraceFormatError, match=r"big.csv: column 'machine_id' has a number that reaches 2\*\*53 .* "
                                               r"on 1 line\(s\): 2 \(first value: 'm_99999999999999999999'\)"):
        machines_v2018(write(tmp_path, "big.csv", MACHINE_META + "m_99999999999999999999,0,1,1,96,100,USING\n"))


@pytest.mark.parametrize("table", sorted(READERS))
def test_a_byte_order_mark_before_a_headerless_first_row_is_ignored_in_every_table(tmp_path, cache, table):
    row, read = READERS[table]
    results = []
    for folder, text in (("plain", row), ("marked", BOM + row)):
        (tmp_path / folder).mkdir()
        result = read(write(tmp_path / folder, "t.csv", text), cache)  # a workload also names its file
        results.append((result.jobs, result.skipped, result.notes) if hasattr(result, "jobs") else result)
    assert results[0] == results[1]


def test_bytes_that_are_not_utf8_name_line_and_column(tmp_path, cache):
    latin = (V2018 + "M1,1.0,j_caf\xe9,1,Terminated,5,6,100,1\n").encode("latin-1")
    with pytest.raises(TraceFormatError, match=r"latin.csv: line 4, column 'job_name': byte 0xe9 is not UTF-8; "
                                               r"convert the file to UTF-8"):
        load_alibaba_v2018(write(tmp_path, "latin.csv", latin), cache=cache)
    with pytest.raises(TraceFormatError, match=r"latin.csv.gz: line 4, column 'job_name': byte 0xe9"):
        load_alibaba_v2018(write(tmp_path, "latin.csv.gz", latin), cache=cache)
    cloudsimpy = (CLOUDSIMPY_HEADER + CLOUDSIMPY + "2,30,1.0,0.5,0.03,7,1\xe9,2,0\n").encode("latin-1")
    with pytest.raises(TraceFormatError, match=r"cs.csv: line 4, column 'task_id': byte 0xe9 is not UTF-8"):
        load_cloudsimpy(write(tmp_path, "cs.csv", cloudsimpy))


def test_cloudsimpy_infinite_and_overflowing_values(tmp_path):
    with pytest.raises(TraceFormatError, match=r"inf.csv: column 'duration' is not a finite number on 1 "
                                               r"line\(s\): 3 \(first value: '1e999'\)"):
        load_cloudsimpy(write(tmp_path, "inf.csv", CLOUDSIMPY_HEADER + CLOUDSIMPY.replace("1.0,0.5", "1e999,0.5")))
    with pytest.raises(TraceFormatError, match=r"big.csv: column 'job_id' is beyond the 64-bit integer range on 1 "
                                               r"line\(s\): 2"):
        load_cloudsimpy(write(tmp_path, "big.csv",
                              CLOUDSIMPY_HEADER + "0,10,4.0,1.0,0.02,99999999999999999999,1,1,0\n"))


def test_compressed_files_work_for_every_format(tmp_path, cache):
    assert load_alibaba_v2018(write(tmp_path, "t.csv.gz", V2018), cache=cache).jobs == \
        load_alibaba_v2018(write(tmp_path, "t.csv", V2018), cache=cache).jobs
    assert load_cloudsimpy(write(tmp_path, "c.csv.gz", CLOUDSIMPY)) == \
        load_cloudsimpy(write(tmp_path, "c.csv", CLOUDSIMPY))
    meta = "m_1,0,1,1,96,100,USING\nm_2,0,1,2,96,50,USING\n"
    assert machines_v2018(write(tmp_path, "m.csv.gz", meta)).cluster.capacities == ((96, 1.0), (96, 0.5))
    assert machines_v2017(write(tmp_path, "e.csv.gz", "0,1,add,,64,0.5,1\n")).cluster.machine_ids == (1,)


# ----------------------------------------------------------------- dependency cycles
def test_jobs_whose_dependencies_loop_are_skipped_whole_and_counted(tmp_path, cache):
    text = (V2018
            + "R1_2,1.0,j_3,1,Terminated,70,80,100.0,0.2\n"  # 1 needs 2, 2 needs 1
            + "R2_1,1.0,j_3,1,Terminated,70,80,100.0,0.2\n"
            + "M3,1.0,j_3,1,Terminated,70,80,100.0,0.2\n"
            + "R1_1,1.0,j_4,1,Terminated,75,80,100.0,0.2\n")  # a task that needs itself
    workload = load_alibaba_v2018(write(tmp_path, "loops.csv", text), cache=cache)
    assert ids(workload) == [("j_2", 50.0), ("j_1", 100.0)]
    assert workload.skipped == {"dependency_cycle": 4}
    assert workload.total_jobs == 2


# ----------------------------------------------------------------- batch_instance rows no task explains
def test_instance_rows_of_unknown_jobs_and_tasks_are_counted(tmp_path, cache):
    # instance_name, task_name, job_name, task_type, status, start, end, machine, seq_no, total_seq_no, 4 usage
    instances = ("ins_1,M1,j_1,1,Terminated,101,104,m_1,1,1,0,0,0,0\n"
                 "ins_2,M9,j_1,1,Terminated,101,104,m_1,1,1,0,0,0,0\n"  # j_1 has no task M9
                 "ins_3,M1,j_7,1,Terminated,101,104,m_1,1,1,0,0,0,0\n"  # no job j_7 in batch_task
                 "ins_4,M1,j_7,1,Terminated,101,104,m_1,1,1,0,0,0,0\n"
                 "ins_5,M1,j_7,1,Failed,101,104,m_1,1,1,0,0,0,0\n")  # not a run: not counted
    workload = load_alibaba_v2018(write(tmp_path, "tasks.csv", V2018), write(tmp_path, "inst.csv", instances),
                                  cache=cache)
    assert workload.notes == {"instance_rows_unknown_job": 2, "instance_rows_unknown_task": 1,
                              "tasks_timed_by_instances": 1, "instances_without_terminated_row": 1}
    assert [(t.id, t.instances, t.duration) for t in workload.jobs[1].tasks] == [("1", 1, (3.0,)), ("2", 1, 20.0)]


# ----------------------------------------------------------------- machine tables
def test_machine_messages_name_the_machine_and_the_right_column(tmp_path):
    with pytest.raises(TraceFormatError, match=r"e1.csv: column 'memory' is empty on an add event \(capacity "
                                               r"unknown\) on 1 line\(s\): 2 \(machine 7; first value: ''\)"):
        machines_v2017(write(tmp_path, "e1.csv", "0,1,add,,64,0.5,1\n0,7,add,,64,,1\n"))
    with pytest.raises(TraceFormatError, match=r"e2.csv: column 'cpus' is negative on 1 line\(s\): 2 \(machine 7; "
                                               r"first value: -64.0\)"):
        machines_v2017(write(tmp_path, "e2.csv", "0,1,add,,64,0.5,1\n0,7,add,,-64,0.5,1\n"))
    with pytest.raises(TraceFormatError, match=r"m1.csv: column 'mem_size' is empty on the machine's first record "
                                               r"\(capacity unknown\) on 1 line\(s\): 2 \(machine m_5; "
                                               r"first value: ''\)"):
        machines_v2018(write(tmp_path, "m1.csv", "m_1,0,1,1,96,100,USING\nm_5,0,1,1,96,,USING\n"))
    with pytest.raises(TraceFormatError, match=r"m2.csv: column 'cpu_num' is negative on 1 line\(s\): 1 "
                                               r"\(machine m_3;"):
        machines_v2018(write(tmp_path, "m2.csv", "m_3,0,1,1,-96,100,USING\n"))


def test_machine_rows_not_used_as_written_are_counted(tmp_path):
    v2017 = machines_v2017(write(tmp_path, "events.csv",
                                 "0,1,add,,64,0.5,1\n-5,2,add,,64,0.5,1\n-3,2,softerror,,0,0,0\n"
                                 ",1,softerror,,0,0,0\n40,1,softerror,,0,0,0\n"))
    # Machine 2 went down before the trace window: out of service from t=0. The row without a time is skipped.
    assert v2017.events == [MachineEvent(0, 1, "down"), MachineEvent(40, 0, "down")]
    assert (v2017.skipped, v2017.notes) == ({"missing_time": 1}, {"before_window": 2})
    v2018 = machines_v2018(write(tmp_path, "meta.csv",
                                 "m_1,0,1,1,96,100,USING\nm_2,-10,1,1,96,100,USING\nm_2,50,1,1,96,100,OFFLINE\n"
                                 "m_1,60,1,1,96,100,\nm_2,70,1,1,96,100,USING\nm_1,,1,1,96,100,IMPORT_INSTALLING\n"))
    # OFFLINE is no status the trace documents: the machine is out of service until USING, and it is counted.
    assert v2018.events == [MachineEvent(50, 1, "down"), MachineEvent(70, 1, "up")]
    assert v2018.skipped == {"missing_status": 1, "missing_time": 1}
    assert v2018.notes == {"before_window": 1, "unknown_status_OFFLINE": 1}


def test_a_row_cut_short_names_its_line_in_the_text_tables(tmp_path):
    from traces.openb import load_openb

    with pytest.raises(TraceFormatError, match=r"cut.csv: line 4 has 4 of 9 columns \(truncated\?\)"):
        load_cloudsimpy(write(tmp_path, "cut.csv", CLOUDSIMPY_HEADER + CLOUDSIMPY + "2,30,1.0,0.5\n"))
    pods = "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,100,0,0\np1,1000\n"
    with pytest.raises(TraceFormatError, match=r"pods.csv: line 3 has 2 of 5 columns \(truncated\?\)"):
        load_openb(write(tmp_path, "pods.csv", pods))
    with pytest.raises(TraceFormatError, match=r"twice.csv: the header names column\(s\) 'cpu' more than once"):
        load_cloudsimpy(write(tmp_path, "twice.csv",
                              CLOUDSIMPY_HEADER.rstrip("\n") + ",cpu\n0,10,4.0,1.0,0.02,3,1,1,0,1\n"))
