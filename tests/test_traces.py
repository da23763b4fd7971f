import pytest

from cloudsim import JobSpec
from conftest import task
from traces import chunk_count, iter_chunks, job_chunk, job_range, load_cloudsimpy, rebase
from traces.cloudsimpy import TraceFormatError

HEADER = ",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk\n"


def jobs_at(*times):
    return [JobSpec(f"j{i}", t, (task(1, 1, 1, 0, 1),)) for i, t in enumerate(times)]


def test_chunks_sort_by_submit_time_stably_and_rebase():
    jobs = jobs_at(3, 1, 7, 7, 10)  # j1 (1), j0 (3), j2 (7), j3 (7), j4 (10)
    assert chunk_count(jobs, 2) == 3
    chunks = dict(iter_chunks(jobs, 2))
    assert [(j.id, j.submit_time) for j in chunks[0]] == [("j1", 0), ("j0", 2)]
    assert [(j.id, j.submit_time) for j in chunks[1]] == [("j2", 0), ("j3", 0)]
    assert [(j.id, j.submit_time) for j in chunks[2]] == [("j4", 0)]
    assert job_chunk(jobs, 2, 1) == chunks[1]
    assert [j.submit_time for j in job_range(jobs, 1, 4)] == [0, 4, 4]
    assert rebase([]) == []


def test_chunk_errors_say_what_exists():
    jobs = jobs_at(0, 1, 2)
    with pytest.raises(ValueError, match="chunks 0..1 of 2"):
        job_chunk(jobs, 2, 2)
    with pytest.raises(ValueError, match="outside the workload's 3 jobs"):
        job_range(jobs, 2, 5)


def test_loader_builds_jobs_as_cloudsimpy_does(tmp_path):
    # Job 5 appears first but its last row says submit 20; job 3 is at 10: so 3 comes first.
    path = tmp_path / "jobs.csv"
    path.write_text(
        HEADER
        + "0,0,2.5,0.5,0.01,5,11,3,0\n"
        + "1,10,4.0,1.0,0.02,3,1,1,0\n"
        + "2,20,1.0,0.5,0.03,5,12,2,0\n"
    )
    jobs = load_cloudsimpy(path)
    assert [(j.id, j.submit_time) for j in jobs] == [(3, 10), (5, 20)]
    assert [t.id for t in jobs[1].tasks] == [11, 12]
    first = jobs[1].tasks[0]
    assert (first.instances, first.duration, dict(first.demand)) == (3, 2.5, {"cpu": 0.5, "memory": 0.01, "disk": 0})


@pytest.mark.parametrize(
    "rows, message",
    [
        ("0,0,1.0,0.5,0.01,1,1,2,0\n1,0,1.0,,0.01,1,2,2,0\n",
         r"column 'cpu' is empty or not a number on 1 line\(s\): 3"),
        ("0,0,1.0,0.5,0.01,1,1,2,0\n1,0,-1.0,0.5,0.01,1,2,2,0\n", r"column 'duration' is negative on 1 line\(s\): 3"),
        ("0,0,1.0,0.5,0.01,1,1,2.5,0\n", r"column 'instances_num' is not a whole number on 1 line\(s\): 2"),
        ("0,0,1.0,0.5,0.01,1,1,0,0\n", r"column 'instances_num' is below 1 on 1 line\(s\): 2"),
        ("0,0,1.0,0.5,0.01,1,1,1,0\n1,0,1.0,0.5,0.01,1,1,1,0\n",
         r"column 'task_id' repeats a task id of the same job on 1 line\(s\): 3"),
    ],
)
def test_loader_errors_name_file_line_and_column(tmp_path, rows, message):
    path = tmp_path / "bad.csv"
    path.write_text(HEADER + rows)
    with pytest.raises(TraceFormatError, match=f"bad.csv: {message}"):
        load_cloudsimpy(path)


def test_loader_reads_headerless_files_in_the_published_column_order(tmp_path):
    rows = "0,10,4.0,1.0,0.02,3,1,1,0\n1,20,1.0,0.5,0.03,5,12,2,0\n"
    with_index, without = tmp_path / "a.csv", tmp_path / "b.csv"
    with_index.write_text(rows)
    without.write_text("".join(line.split(",", 1)[1] + "\n" for line in rows.splitlines()))
    headered = tmp_path / "c.csv"
    headered.write_text(HEADER + rows)
    assert load_cloudsimpy(with_index) == load_cloudsimpy(without) == load_cloudsimpy(headered)
    assert [(j.id, j.submit_time) for j in load_cloudsimpy(without)] == [(3, 10), (5, 20)]
    (tmp_path / "d.csv").write_text("0,10,4.0,1.0,0.02,3,1,-1,0\n")
    with pytest.raises(TraceFormatError, match=r"column 'instances_num' is negative on 1 line\(s\): 1"):
        load_cloudsimpy(tmp_path / "d.csv")
    (tmp_path / "e.csv").write_text("10,4.0,1.0\n")
    with pytest.raises(TraceFormatError, match="line 1 has 3 columns and no header"):
        load_cloudsimpy(tmp_path / "e.csv")


def test_loader_names_missing_columns(tmp_path):
    path = tmp_path / "other.csv"
    path.write_text("a,b\n1,2\n")
    with pytest.raises(TraceFormatError, match=r"missing column\(s\) \['submit_time'"):
        load_cloudsimpy(path)
    with pytest.raises(FileNotFoundError, match="no such trace file"):
        load_cloudsimpy(tmp_path / "absent.csv")


def test_real_trace_has_the_published_totals(jobs_csv):
    jobs = load_cloudsimpy(jobs_csv)
    assert len(jobs) == 5216
    assert sum(len(j.tasks) for j in jobs) == 31756
    assert sum(j.instances for j in jobs) == 2551075
    assert chunk_count(jobs, 10) == 522


def test_alibaba_like_is_reproducible():
    from traces import alibaba_like

    a, b, c = alibaba_like(20, seed=1), alibaba_like(20, seed=1), alibaba_like(20, seed=2)
    assert a == b and a != c
    assert a[0].submit_time == 0 and all(x.submit_time <= y.submit_time for x, y in zip(a, a[1:]))


def test_the_format_of_a_file_follows_its_name_unless_said():
    from traces.formats import TRACE_FORMATS, format_of, formats_taking

    assert [format_of(name) for name in ("log.swf", "LOG.SWF.GZ", "jobs.csv", "batch_task.csv.gz", "x.swf.txt")] == [
        "swf", "swf", "cloudsimpy", "cloudsimpy", "cloudsimpy"]
    assert formats_taking("instances") == ("alibaba-v2017", "alibaba-v2018")
    assert formats_taking("machine_table") == ("alibaba-v2017", "alibaba-v2018", "openb")
    assert formats_taking("softerror_downtime") == ("alibaba-v2017",)
    for spec in TRACE_FORMATS.values():
        assert not spec.streams or spec.selects_jobs, spec.name  # a stream reads its jobs in ranges


def test_a_trace_format_declared_wrongly_is_refused():
    from traces.formats import TraceFormat, load_swf

    with pytest.raises(ValueError, match="takes windows, which no run gives"):
        TraceFormat("mine", "my format", load_swf, frozenset({"windows"}))
    with pytest.raises(ValueError, match="a format that takes machine_table has a machines reader"):
        TraceFormat("mine", "my format", load_swf, frozenset({"machine_table"}))
