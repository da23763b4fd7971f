"""The Standard Workload Format: what a log's lines become, what is skipped and counted, what is refused,
and replays of SWF logs worked out by hand."""

from __future__ import annotations

import gzip
import json

import pytest

from cloudsim import ClusterSpec, JobSpec, Simulation
from cloudsim.cli import main
from conftest import DATA
from traces import EmptyWorkloadError, TraceFormatError, load_swf, machines_swf

HEADER = "; Version: 2.2\n; MaxNodes: 4\n; MaxProcs: 8\n"


def line(job, submit, run, allocated, requested=-1, requested_time=-1, status=1):
    """An SWF line: the 18 fields, with -1 in those the replay does not read."""
    fields = [job, submit, -1, run, allocated, -1, -1, requested, requested_time, -1, status] + [-1] * 7
    return " ".join(str(f) for f in fields) + "\n"


def write_log(tmp_path, body, header=HEADER, name="log.swf"):
    path = tmp_path / name
    path.write_text(header + body)
    return path


def test_each_line_becomes_one_task_whose_instances_are_its_processors(tmp_path):
    path = write_log(tmp_path, line(1, 0, 100, 2, requested_time=300)
                     + line(2, 5, 50, -1, requested=3)          # allocation unknown: the requested processors
                     + line(3, 5, 7.5, 1, status=0))           # failed, but it ran: replayed
    workload = load_swf(path)
    assert [(j.id, j.submit_time) for j in workload.jobs] == [(1, 0.0), (2, 5.0), (3, 5.0)]
    tasks = [job.tasks[0] for job in workload.jobs]
    assert [t.instances for t in tasks] == [2, 3, 1]
    assert [t.duration for t in tasks] == [100.0, 50.0, 7.5]
    assert all(dict(t.demand) == {"cpu": 1.0} for t in tasks)
    assert [t.estimate for t in tasks] == [300.0, None, None]
    assert workload.skipped == {}


def test_lines_not_replayed_are_counted_by_reason(tmp_path):
    body = (line(1, 0, 10, 1)
            + line(2, 1, 10, 1, status=2)          # a partial execution (checkpointed job)
            + line(2, 1, 10, 1, status=3)          # its last part: the summary line is job 3 below
            + line(3, 2, 20, 1, status=1)
            + line(4, 3, -1, -1, requested=2, status=5)  # cancelled before it started
            + line(5, 3, 6, 2, status=5)           # cancelled after 6 s on 2 processors: kept
            + line(6, 4, -1, 2)                    # run time unknown
            + line(7, 4, 10, -1, requested=-1)     # processors unknown
            + line(8, -1, 10, 1)                   # submit time unknown
            + line(9, 5, 10, 9))                   # 9 processors on a machine of 8
    workload = load_swf(write_log(tmp_path, body))
    assert [j.id for j in workload.jobs] == [1, 3, 5]
    assert workload.jobs[2].tasks[0].instances == 2 and workload.jobs[2].tasks[0].duration == 6.0
    assert workload.skipped == {"partial_execution": 2, "cancelled_before_start": 1, "unknown_run_time": 1,
                                "unknown_processors": 1, "unknown_submit_time": 1, "larger_than_machine": 1}
    assert len(workload.jobs) + sum(workload.skipped.values()) == 10  # every line accounted for


def test_jobs_are_sorted_by_submit_time_keeping_file_order_on_ties(tmp_path):
    workload = load_swf(write_log(tmp_path, line(1, 9, 1, 1) + line(2, 3, 1, 1) + line(3, 3, 1, 1)))
    assert [j.id for j in workload.jobs] == [2, 3, 1]


def test_the_logged_machine_comes_from_the_header(tmp_path):
    assert machines_swf(write_log(tmp_path, line(1, 0, 1, 1))) == ClusterSpec.uniform(4, {"cpu": 2.0})
    nodes_only = write_log(tmp_path, line(1, 0, 1, 1), header="; MaxNodes: 3\n", name="n.swf")
    assert machines_swf(nodes_only) == ClusterSpec.uniform(3, {"cpu": 1.0})
    procs_only = write_log(tmp_path, line(1, 0, 1, 1), header="; MaxProcs: 5\n", name="p.swf")
    assert machines_swf(procs_only) == ClusterSpec.uniform(5, {"cpu": 1.0})


@pytest.mark.parametrize("header, words", [
    ("", ["neither MaxNodes nor MaxProcs", "--machines N --capacity cpu=P"]),
    ("; MaxNodes: 3\n; MaxProcs: 8\n", ["MaxProcs 8 does not split evenly over MaxNodes 3", "--machines"]),
])
def test_an_unknown_machine_says_how_to_give_one(tmp_path, header, words):
    with pytest.raises(TraceFormatError) as error:
        machines_swf(write_log(tmp_path, line(1, 0, 1, 1), header=header))
    assert all(w in str(error.value) for w in words)


@pytest.mark.parametrize("body, header, words", [
    ("1 0 -1 10 1\n", HEADER, ["line 4", "expected 18 fields", "found 5"]),
    (line(1, 0, 10, 1).replace(" 10 ", " ten ", 1), HEADER, ["line 4", "field 4 (run_time)", "'ten'"]),
    (line(1, 0, 10, -5), HEADER, ["line 4", "field 5 (allocated_processors) is -5", "-1 for unknown"]),
    (line(1, 0, 10, 2.5), HEADER, ["line 4", "allocated_processors", "not a whole number"]),
    (line(1, 0, 10, 1, status=7), HEADER, ["line 4", "status", "7", "not a status SWF defines"]),
    (line(1, 0, 10, 1) + line(1, 2, 10, 1), HEADER, ["line 5", "job number 1", "already given on line 4"]),
    (line(1, 0, "inf", 1), HEADER, ["line 4", "run_time", "not a finite number"]),
    (line(1, 0, 2**53, 1), HEADER, ["line 4", "run_time", "2**53"]),
    (line(1, 0, 10, 1), "; MaxNodes: many\n", ["line 1", "MaxNodes", "'many'", "whole number >= 1"]),
    (line(1, 0, 10, 1), "; MaxProcs: 0\n", ["line 1", "MaxProcs", "whole number >= 1"]),
])
def test_a_damaged_log_is_refused_naming_line_and_field(tmp_path, body, header, words):
    with pytest.raises(TraceFormatError) as error:
        load_swf(write_log(tmp_path, body, header=header))
    assert all(w in str(error.value) for w in words), str(error.value)


def test_a_log_without_jobs_or_with_none_left_says_so(tmp_path):
    with pytest.raises(EmptyWorkloadError, match="no job lines"):
        load_swf(write_log(tmp_path, ""))
    with pytest.raises(EmptyWorkloadError, match="1 cancelled_before_start"):
        load_swf(write_log(tmp_path, line(1, 0, -1, -1, status=5)))


def test_a_gzipped_log_reads_as_the_plain_one_and_a_cut_one_is_refused(tmp_path):
    plain = write_log(tmp_path, line(1, 0, 10, 2) + line(2, 1, 5, 1))
    packed = tmp_path / "log.swf.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert load_swf(packed).jobs == load_swf(plain).jobs
    cut = tmp_path / "cut.swf.gz"
    cut.write_bytes(packed.read_bytes()[:-12])
    with pytest.raises(TraceFormatError, match="not a whole gzip file"):
        load_swf(cut)


def test_replay_of_a_log_on_its_logged_machine_worked_by_hand(tmp_path, capsys):
    # 2 nodes of 1 processor. Job 1 takes both for 10 s from t=0; job 2 (1 processor, 5 s) arrives at
    # t=1 and waits for them: it runs 10..15. Job 3 (1 processor, 4 s) arrives at t=12 and takes the
    # other node: 12..16. Makespan 16; job completion times 10, 14, 4: mean 28/3.
    path = write_log(tmp_path, line(1, 0, 10, 2) + line(2, 1, 5, 1) + line(3, 12, 4, 1),
                     header="; MaxNodes: 2\n")
    assert main(["replay", str(path), "--broker", "first-fit", "--json"]) == 0
    row, summary = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert row["makespan"] == 16
    assert row["avg_job_completion"] == pytest.approx(28 / 3)
    assert (summary["jobs"], summary["instances"]) == (3, 4)


def test_a_cluster_option_overrides_the_logged_machine(tmp_path, capsys):
    # With 4 machines the three jobs never wait: job 2 ends at 6, job 3 at 16.
    path = write_log(tmp_path, line(1, 0, 10, 2) + line(2, 1, 5, 1) + line(3, 12, 4, 1),
                     header="; MaxNodes: 2\n")
    assert main(["replay", str(path), "--machines", "4", "--broker", "first-fit", "--json"]) == 0
    row = json.loads(capsys.readouterr().out.splitlines()[0])
    assert row["makespan"] == 16 and row["avg_job_completion"] == pytest.approx((10 + 5 + 4) / 3)


def test_the_skipped_lines_reach_the_summary(tmp_path, capsys):
    path = write_log(tmp_path, line(1, 0, 10, 1) + line(2, 1, -1, 1))
    assert main(["replay", str(path), "--broker", "first-fit", "--json"]) == 0
    summary = json.loads(capsys.readouterr().out.splitlines()[-1])
    assert summary["skipped"] == {"unknown_run_time": 1}


@pytest.mark.parametrize("extra, words", [
    (["--machine-table", "log.swf"], ["--machine-table", "not to swf"]),
    (["--window", "0:10"], ["--window", "not to swf"]),
])
def test_options_of_other_formats_are_refused_for_swf(tmp_path, monkeypatch, capsys, extra, words):
    monkeypatch.chdir(tmp_path)
    write_log(tmp_path, line(1, 0, 10, 1))
    assert main(["replay", "log.swf", *extra]) == 2
    err = capsys.readouterr().err
    assert all(w in err for w in words) and "Traceback" not in err


def test_a_damaged_log_on_the_command_line_is_one_line(tmp_path, capsys):
    path = write_log(tmp_path, line(1, 0, 10, 1) + "2 5 -1 10\n")
    assert main(["replay", str(path)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "line 5: expected 18 fields" in err[0]


def test_the_real_sample_loads_whole():
    path = DATA / "swf" / "lublin_256.swf"
    if not path.is_file():
        pytest.skip(f"real sample {path} not found (set CLOUDSIM_DATA)")
    workload = load_swf(path)
    # From the data README: 10,000 jobs for a 256-node machine; every line has status 1 and a known
    # allocation, and field 5 sums to 221,010 processors (awk '!/^;/ {s += $5} END {print s}').
    assert len(workload.jobs) == 10_000 and workload.skipped == {}
    assert sum(job.instances for job in workload.jobs) == 221_010
    assert machines_swf(path) == ClusterSpec.uniform(256, {"cpu": 1.0})
    assert isinstance(workload.jobs[0], JobSpec) and workload.jobs[0].submit_time == 5094.0


def test_a_broker_sees_the_requested_time_as_the_estimate(tmp_path):
    workload = load_swf(write_log(tmp_path, line(1, 0, 10, 1, requested_time=30) + line(2, 0, 5, 1)))
    sim = Simulation(ClusterSpec.uniform(1, {"cpu": 1.0}), workload.jobs)
    view = sim.next_decision()
    assert list(view.duration) == [10.0, 5.0]
    assert view.estimate[0] == 30.0 and view.estimate[1] != view.estimate[1]  # NaN: no estimate given
