"""A new user's mistakes, as the command line answers them: one line on stderr that names the option
(or file) and the value, says what to do, and a non-zero exit; never a traceback, never a silent success.

Exit status 2: options that cannot work (refused before anything is loaded or simulated, or right
after loading, before the first episode); 1: bad input files and other failures.
"""

from __future__ import annotations

import errno
import gzip
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import cli


JOBS = ",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk\n" \
       "0,10,3.0,1.0,0.1,7,1,2,0\n1,12,2.0,1.0,0.1,8,1,1,0\n2,15,4.0,2.0,0.1,9,1,1,0\n"
CLUSTER = ["--machines", "1", "--capacity", "cpu=2,memory=1,disk=1"]


@pytest.fixture
def files(tmp_path, monkeypatch):
    """A 3-job CloudSimPy trace (last job at t=5, one task of 2 cpu), a plain file, a non-empty folder."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLOUDSIM_CACHE", str(tmp_path / "cache"))
    Path("jobs.csv").write_text(JOBS)
    Path("afile").write_text("x\n")
    Path("full").mkdir()
    Path("full/old.txt").write_text("an earlier run\n")
    return tmp_path


TRACE = ["jobs.csv", *CLUSTER]

CASES = [
    # (argv, exit status, words stderr must hold)
    (["replay", "--machines", "0"], 2, ["--machines 0", ">= 1"]),
    (["replay", "--machines", "-3"], 2, ["--machines -3", ">= 1"]),
    (["replay", "--machines", "two"], 2, ["--machines two", "not a whole number"]),
    (["replay", "--chunk-size", "0"], 2, ["--chunk-size 0", ">= 1"]),
    (["replay", "--tick", "0"], 2, ["--tick 0", "> 0", "leave it out"]),
    (["replay", "--tick", "nan"], 2, ["--tick nan", "finite"]),
    (["replay", "--seed", "-1"], 2, ["--seed -1", ">= 0"]),
    (["replay", "--workers", "0"], 2, ["--workers 0", ">= 1"]),
    (["compare", "deeprm", "--loads", "0.1:0.9:0"], 2, ["--loads 0.1:0.9:0", "step"]),
    (["compare", "deeprm", "--loads", "0.5,-1"], 2, ["--loads", "> 0"]),
    (["compare", "deeprm", "--load", "inf"], 2, ["--load inf", "finite"]),
    (["replay", *TRACE, "--jobs", "0:99"], 2, ["--jobs 0:99", "3 jobs", "0:3"]),
    (["replay", *TRACE, "--jobs", "3:1"], 2, ["--jobs 3:1", "A < B"]),
    (["replay", *TRACE, "--chunk-size", "2", "--chunks", "0:99"], 2, ["--chunks 0:99", "2 chunks", "0:2"]),
    (["replay", *TRACE, "--chunk-size", "2", "--chunks", "5"], 2, ["--chunks 5:6", "2 chunks"]),
    (["replay", *TRACE, "--format", "alibaba-v2018", "--window", "nan:5"], 2, ["--window nan:5", "finite"]),
    (["replay", *TRACE, "--format", "alibaba-v2018", "--window", "5"], 2, ["--window 5", "START:END"]),
    (["replay", "jobs.csv", "--capacity", "cpu=64"], 2, ["--capacity cpu=64", "memory"]),
    (["replay", "jobs.csv", "--capacity", "cpu=1,memory=1,disk=1"], 2,
     ["--capacity", "job 9", "no machine can hold", "larger machines"]),
    (["replay", "--capacity", "cpu"], 2, ["--capacity cpu", "NAME=NUMBER"]),
    (["replay", "--capacity", "cpu=-1"], 2, ["--capacity cpu=-1", "NAME=NUMBER"]),
    (["replay", "--capacity", "cpu=0,memory=0"], 2, ["--capacity", "no task could ever run"]),
    (["replay", *TRACE, "--window", "0:5"], 2, ["--window 0:5", "not to cloudsimpy"]),
    (["replay", *TRACE, "--instances", "jobs.csv"], 2, ["--instances jobs.csv", "not to cloudsimpy"]),
    (["replay", *TRACE, "--status-policy", "keep"], 2, ["--status-policy keep", "not to cloudsimpy"]),
    (["replay", *TRACE, "--softerror-downtime", "5"], 2, ["--softerror-downtime 5", "v2017 machine table"]),
    (["replay", *TRACE, "--machine-events"], 2, ["--machine-events", "--machine-table"]),
    (["check-broker", "first-fit", "--seed", "-1"], 2, ["--seed -1", "whole number >= 0"]),
    (["check-broker", "first-fit", "--timeout", "nan"], 2, ["--timeout nan", "finite number > 0 (seconds)"]),
    (["check-broker"], 2, ["BROKER", "give the broker to check"]),
    (["replay", *TRACE, "--cache", "converted"], 2,
     ["--cache converted", "applies to --format alibaba-v2017 or alibaba-v2018, not to cloudsimpy"]),
    (["replay", *TRACE, "--machine-table", "jobs.csv"], 2,
     ["--machine-table jobs.csv", "alibaba-v2017, alibaba-v2018 or openb, not to cloudsimpy"]),
    (["replay", *TRACE, "--format", "alibaba-v2017", "--machine-table", "nowhere.csv"], 2,
     ["--machine-table nowhere.csv", "no such file"]),
    (["compare", "deeprm", "--generator", "rlsk"], 2, ["--generator rlsk", "disagrees", "deeprm"]),
    (["replay", "jobs.csv", "--generator", "rlsk"], 2, ["--generator rlsk", "no trace file"]),
    (["replay", "--format", "alibaba-v2017"], 2, ["--format alibaba-v2017", "trace files only"]),
    (["replay", "--load", "0.5"], 2, ["--load 0.5", "alibaba-like", "no target load"]),
    (["replay", *TRACE, "--synthetic-jobs", "5"], 2, ["--synthetic-jobs 5", "generators"]),
    (["replay", "--synthetic-jobs", "0"], 2, ["--synthetic-jobs 0", ">= 1"]),
    (["replay", "--brokers", "sjf,sjf"], 2, ["--brokers sjf,sjf", "named twice"]),
    (["replay", "--broker", "nope"], 2, ["nope", "unknown broker", "first-fit"]),
    (["replay", "--brokers", "sjf,"], 2, ["--brokers", "one or more broker names"]),
    (["replay", "nowhere.csv"], 2, ["WORKLOAD nowhere.csv", "no such file", "generator"]),
    (["replay", "full"], 2, ["WORKLOAD full", "not a file"]),
    (["replay", "--mttr", "5"], 2, ["--mttr 5", "needs --mtbf"]),
    # A cluster no memory could hold hung while its machines were built.
    (["replay", "--machines", "99999999999999999999"], 2,
     ["--machines 99999999999999999999", "GiB of memory", "give fewer machines"]),
    (["replay", "--mtbf", "0"], 2, ["--mtbf 0", "> 0"]),
    (["replay", *TRACE, "--tick", "1e-9"], 2, ["--tick 1e-09", "wake", "leave --tick out"]),
    (["replay", "deeprm", "--mtbf", "0.5"], 2, ["--mtbf 0.5", "tries", "would not end", "--on-failure fail"]),
    (["replay", "--overwrite"], 2, ["--overwrite", "needs --out"]),
    (["replay", "--stream"], 2, ["--stream", "add --out DIR"]),
    (["compare", "--stream", "--out", "new"], 2, ["--stream", "applies to replay"]),
    (["replay", "--out", "afile"], 2, ["--out afile", "is a file"]),
    (["replay", "--out", "full"], 2, ["--out full", "already holds files", "--overwrite"]),
    (["replay", "--address", "auto"], 2, ["--address auto", "--executor ray"]),
    (["replay", "--checkpoint", "x.pt"], 2, ["--checkpoint x.pt", "deepjs"]),
    (["replay", "--brokers", "deepjs", "--checkpoint", "x.pt"], 2, ["--checkpoint x.pt", "no such file"]),
    (["replay", *TRACE, "--chunks", "0:2"], 2, ["--chunks 0:2", "needs --chunk-size"]),
    (["replay", *TRACE, "--jobs", "0:2", "--chunk-size", "1"], 2, ["--jobs", "not both"]),
    (["bench", *TRACE], 2, ["--chunk-size", "bench compares chunks"]),
    (["bench", *TRACE, "--chunk-size", "1", "--candidate", "nope"], 2, ["--candidate nope", "--brokers"]),
    (["bench", *TRACE, "--chunk-size", "1", "--brokers", "sjf"], 2, ["--brokers sjf", "two or more"]),
    (["bench", *TRACE, "--chunk-size", "1", "--plots", "afile"], 2, ["--plots afile", "is a file"]),
    (["compare", *TRACE, "--loads", "0.5"], 2, ["--loads 0.5", "generators"]),
    (["compare", "alibaba-like", "--loads", "0.5"], 2, ["--loads 0.5", "not alibaba-like"]),
    (["compare", "deeprm", "--seeds", "0"], 2, ["--seeds 0", ">= 1"]),
    (["compare", "deeprm", "--load", "0.5", "--loads", "0.5,0.7"], 2, ["--loads", "either --load or --loads"]),
    (["train", "deepjs", *TRACE, "--iterations", "0", "--out", "d"], 2, ["iterations", "0", ">= 1"]),
    (["train", "deepjs", *TRACE, "--hidden", "3,0,6", "--out", "d"], 2, ["hidden", "size 0"]),
    # A learning rate beyond float32 failed inside torch's optimiser with no word of the option.
    (["train", "deepjs", *TRACE, "--learning-rate", "1e39", "--out", "d"], 2,
     ["--learning-rate 1e+39", "largest float32"]),
    (["train", "deepk8s", "--learning-rate", "1e39", "--out", "k"], 2, ["--learning-rate 1e+39", "largest float32"]),
    (["train", "deeprm", "--learning-rate", "1e39", "--out", "r"], 2, ["--learning-rate 1e+39", "largest float32"]),
    (["train", "rlsk", "--learning-rate", "1e39", "--out", "q"], 2, ["--learning-rate 1e+39", "largest float32"]),
    (["train", "deepjs", *TRACE, "--chunks", "0:99", "--out", "d"], 2, ["--chunks 0:99", "chunk"]),
    (["train", "deepjs", *TRACE, "--jobs", "0:2"], 2, ["--jobs 0:2", "chunks"]),
    (["train", "deepjs", *TRACE, "--resume", "--out", "d"], 2, ["--resume d", "policy.pt is missing",
                                                                "leave out --resume"]),
    (["train", "deepjs", *TRACE, "--out", "afile"], 2, ["--out afile", "is a file; give a folder"]),
    # DeepJS wrote to --checkpoint FILE and --log DIR before it wrote into --out DIR, as every training does.
    (["train", "deepjs", *TRACE, "--checkpoint", "d.pt"], 2, ["--checkpoint/--log d.pt", "--out DIR"]),
    (["train", "deepjs", *TRACE, "--log", "logs"], 2, ["--checkpoint/--log logs", "--out DIR"]),
    (["replay", "--executor", "ray", "--address", "http://x:y"], 2, ["--address http://x:y", "HOST:PORT"]),
    (["compare", "deeprm", "--loads", "0.5,0.5"], 2, ["--loads 0.5,0.5", "twice"]),
    (["compare", "deeprm", "--seeds", "100000000"], 2, ["--seeds 100000000", "at most"]),
    (["replay", "--out", ""], 2, ["--out", "is empty"]),
    (["replay", "--out", "afile/sub"], 2, ["--out afile/sub", "is a file, not a folder"]),
    (["bench", *TRACE, "--chunk-size", "1", "--brokers", "first-fit,tetris", "--plots", "afile/sub"], 2,
     ["--plots afile/sub", "is a file, not a folder"]),
    (["train", "deepjs", *TRACE, "--out", "afile/d"], 2, ["--out afile/d", "is a file"]),
    # Bad files: exit 1, the file named.
    (["replay", "afile"], 1, ["afile", "column"]),
    (["replay", *TRACE, "--format", "alibaba-v2018"], 1, ["jobs.csv", "column"]),
    (["replay", "--brokers", "deepjs", "--checkpoint", "afile"], 1, ["afile", "not a usable DeepJS checkpoint"]),
    # argparse's own: unknown options and choices.
    (["replay", "--nope"], 2, ["unrecognized arguments: --nope"]),
    (["replay", "--format", "csv"], 2, ["--format", "invalid choice"]),
    (["replay", "--work", "2"], 2, ["unrecognized arguments: --work"]),
]


@pytest.mark.parametrize("argv, status, words", CASES, ids=[" ".join(c[0]) for c in CASES])
def test_a_mistake_gets_one_clear_message(files, capsys, argv, status, words):
    code, out, err = cli(argv, capsys)
    assert code == status, err
    assert "Traceback" not in err and "Traceback" not in out
    for word in words:
        assert word in err, f"{word!r} not in {err!r}"
    assert not list(files.glob(".*partial*")), "a refused run left a staging folder behind"
    assert (files / "full" / "old.txt").is_file()  # a refused run never touches an existing folder


def test_refusals_come_before_any_work(files, capsys):
    # An option that cannot work is refused before the trace is even read: no cache entry appears.
    code, _, err = cli(["replay", "jobs.csv", "--format", "alibaba-v2018", "--machines", "0"], capsys)
    assert code == 2 and "--machines 0" in err
    assert not (files / "cache").exists()


@pytest.mark.parametrize("fmt", ["cloudsimpy", "alibaba-v2017"])
@pytest.mark.parametrize("rows", [3, 50_000], ids=["cut in the first line", "cut after many lines"])
def test_a_damaged_gzip_file_is_named(files, capsys, fmt, rows):
    if fmt == "cloudsimpy":
        text = JOBS.splitlines(keepends=True)[0] + "".join(f"{i},{i},1,0.5,0.01,{i},1,1,0\n" for i in range(rows))
    else:
        text = "".join(f"{100 + i},{200 + i},{i},1,1,Terminated,50,0.01\n" for i in range(rows))
    whole = gzip.compress(text.encode())
    Path("cut.csv.gz").write_bytes(whole[: len(whole) // 2])
    code, _, err = cli(["replay", "cut.csv.gz", "--format", fmt], capsys)
    assert code == 1 and "Traceback" not in err
    assert "cut.csv.gz: is not a whole gzip file" in err and "compress or download it again" in err


def test_a_file_that_is_not_gzip_is_named(files, capsys):
    Path("plain.csv.gz").write_text(JOBS)
    code, _, err = cli(["replay", "plain.csv.gz"], capsys)
    assert code == 1 and "plain.csv.gz: is not a whole gzip file" in err


def test_frequent_failures_with_requeue_are_warned_about_with_the_numbers(files, capsys):
    # The longest task lasts 4: with a failure every 1 time unit on average it needs about
    # exp(4 / 1) = 54.6 tries. It runs, with a warning that says so.
    code, out, err = cli(["replay", *TRACE, "--mtbf", "1", "--json"], capsys)
    assert code == 0
    assert "warning: --mtbf 1:" in err and "about 54.6 tries" in err and "--on-failure fail" in err
    summary = json.loads(out.splitlines()[-1])
    assert summary["finished"]["first-fit"] == summary["instances"] == 4


def test_a_full_disk_is_one_message_and_leaves_no_half_written_folder(files, capsys, monkeypatch):
    from cloudsim.engine.metrics import EpisodeResult

    def disk_full(self, directory):
        raise OSError(errno.ENOSPC, "No space left on device", str(Path(directory) / "tasks.parquet"))

    monkeypatch.setattr(EpisodeResult, "to_parquet", disk_full)
    code, _, err = cli(["replay", *TRACE, "--chunk-size", "1", "--out", "results"], capsys)
    assert code == 1 and "Traceback" not in err
    assert "no space left on the device" in err and "tasks.parquet" in err and "write elsewhere" in err
    assert not Path("results").exists() and not Path("results.incomplete").exists()  # nothing finished
    assert not list(files.glob(".results*"))


def test_a_diverging_training_is_stopped_not_saved_as_nan(files, capsys, jobs_csv, monkeypatch):
    # A huge learning rate makes weights overflow only for some gradients (1e30 stayed finite with some builds
    # of torch), so the optimiser's step is made to leave a NaN, as a diverging update does.
    import torch

    adam_step = torch.optim.Adam.step

    def diverging_step(self, *args, **kwargs):
        result = adam_step(self, *args, **kwargs)
        with torch.no_grad():
            self.param_groups[0]["params"][0].fill_(float("nan"))
        return result

    monkeypatch.setattr(torch.optim.Adam, "step", diverging_step)
    code, _, err = cli(["train", "deepjs", str(jobs_csv), "--chunk-size", "5", "--chunks", "0:2", "--iterations",
                        "2", "--trajectories", "2", "--machines", "5", "--capacity", "cpu=64,memory=1,disk=1",
                        "--learning-rate", "0.5", "--workers", "1", "--out", "d"], capsys)
    assert code == 1 and "training diverged" in err and "smaller --learning-rate" in err
    assert not Path("d").exists()  # nothing to resume, so nothing left


def test_debug_shows_the_traceback(files, capsys):
    code, _, err = cli(["--debug", "replay", "afile"], capsys)
    assert code == 1 and "Traceback" in err and "afile" in err


def test_json_output_is_strict(files, capsys):
    # A resource with no capacity has no utilisation (NaN in Python); JSON says null, never NaN.
    code, out, _ = cli(["replay", "jobs.csv", "--machines", "1", "--capacity", "cpu=2,memory=1,disk=0", "--json"],
                       capsys)
    assert code == 0

    def refuse(token):
        raise AssertionError(f"non-standard JSON token {token}")

    lines = [json.loads(line, parse_constant=refuse) for line in out.splitlines()]
    assert lines[0]["utilisation_disk"] is None and lines[-1]["summary"] is True


def test_the_summary_accounts_for_every_instance(files, capsys):
    code, out, _ = cli(["replay", *TRACE, "--tick", "1", "--json"], capsys)
    *rows, summary = [json.loads(line) for line in out.splitlines()]
    assert code == 0
    # 3 jobs: 2 + 1 + 1 instances; each finished.
    assert summary["instances"] == 4 and summary["finished"] == {"first-fit": 4} and summary["failed"] == {
        "first-fit": 0}


def _slow_replay(out: Path, extra=()) -> list[str]:
    # 12 chunks of the built-in workload, one at a time: long enough to interrupt in the middle.
    return [sys.executable, "-m", "cloudsim", "replay", "--synthetic-jobs", "240", "--chunk-size", "20",
            "--brokers", "random", "--workers", "1", "--json", "--out", str(out), *extra]


def _as_from_a_terminal() -> None:
    # A shell starts background jobs with SIGINT ignored, and children inherit that: a test run
    # started that way would send Ctrl-C to a replay that cannot receive it. A terminal's does.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _interrupt_after_first_row(argv: list[str], cwd: Path) -> subprocess.CompletedProcess:
    process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_as_from_a_terminal)
    first = process.stdout.readline()  # the first episode finished
    assert first.startswith("{"), process.stderr.read()
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=60)
    return subprocess.CompletedProcess(argv, process.returncode, first + out, err)


def test_ctrl_c_ends_cleanly_and_keeps_finished_runs_aside(tmp_path):
    out = tmp_path / "results"
    done = _interrupt_after_first_row(_slow_replay(out), tmp_path)
    assert done.returncode == 130, done.stderr
    assert "Traceback" not in done.stderr and "interrupted" in done.stderr
    assert not out.exists()  # nothing under the name a later run would take for complete
    kept = tmp_path / "results.incomplete"
    assert (kept / "INCOMPLETE.txt").is_file() and str(kept) in done.stderr
    finished = [p for p in kept.glob("episode-*/random") if (p / "summary.json").is_file()]
    assert finished and all((p / "tasks.parquet").is_file() for p in finished)
    assert not list(tmp_path.glob(".results.partial*"))


def test_sigterm_ends_like_ctrl_c_without_worker_tracebacks(tmp_path):
    out = tmp_path / "results"
    argv = _slow_replay(out)
    argv[argv.index("--workers") + 1] = "2"
    process = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert process.stdout.readline().startswith("{")
    process.send_signal(signal.SIGTERM)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 143 and "terminated" in err and "Traceback" not in err
    assert not out.exists() and not list(tmp_path.glob(".results.partial*"))
    kept = tmp_path / "results.incomplete"
    assert all(any(p.iterdir()) for p in kept.glob("episode-*"))  # no empty episode folder is kept


def test_output_closed_early_stops_the_run_and_says_so(tmp_path):
    # `cloudsim ... | head -1`: the run cannot report its rows any more; it stops with one line, not 0.
    argv = _slow_replay(tmp_path / "results")
    process = subprocess.Popen(argv, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    process.stdout.readline()
    process.stdout.close()
    err = process.stderr.read()
    process.wait(timeout=60)
    assert process.returncode == 141 and "broken pipe" in err and "Traceback" not in err
    assert not (tmp_path / "results").exists()


def test_configs_built_in_python_are_checked_as_the_command_line_is():
    from cloudsim.run import BrokerConfig, ConfigError, SimulationConfig, WorkloadConfig

    with pytest.raises(ConfigError, match="--format bogus: is not one of cloudsimpy"):
        WorkloadConfig("deeprm", format="bogus")
    with pytest.raises(ConfigError, match="--on-failure x: is not one of requeue, fail"):
        SimulationConfig(on_failure="x")
    with pytest.raises(ConfigError, match="as a tuple"):
        BrokerConfig("first-fit")


def test_an_interrupted_overwrite_leaves_the_old_results_whole(tmp_path):
    out = tmp_path / "results"
    out.mkdir()
    (out / "episodes.csv").write_text("the earlier, complete run\n")
    done = _interrupt_after_first_row(_slow_replay(out, ["--overwrite"]), tmp_path)
    assert done.returncode == 130
    assert (out / "episodes.csv").read_text() == "the earlier, complete run\n"
    assert sorted(p.name for p in out.iterdir()) == ["episodes.csv"]


def test_a_completed_run_replaces_the_old_folder_whole(files, capsys):
    assert cli(["replay", *TRACE, "--chunk-size", "2", "--out", "full", "--overwrite"], capsys)[0] == 0
    names = sorted(p.name for p in Path("full").iterdir())
    assert names == [".cloudsim-results", "brokers.json", "episode-0", "episode-1",
                     "episodes.csv"]  # the old file is gone
    assert not list(files.glob(".full*"))


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere: a read-only folder refuses nobody")
def test_an_unwritable_out_folder_is_refused_before_running(files, capsys):
    Path("locked").mkdir()
    os.chmod("locked", 0o500)
    code, _, err = cli(["replay", *TRACE, "--out", "locked/results"], capsys)
    assert code == 1 and "cannot write" in err


def test_the_command_line_starts_fast_enough_to_refuse_in_under_a_second(files):
    # Measured, not asserted as a time: the refusal must not import torch (seconds) or touch the trace.
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "cloudsim", "replay", "--machines", "0"],
                          capture_output=True, text=True, cwd=files)
    assert done.returncode == 2
    assert " torch" not in done.stderr.replace("torch.", "")  # no line of the import log names torch
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "cloudsim", "replay", "--machines", "0"], capture_output=True, cwd=files)
    print(f"refusal took {time.perf_counter() - started:.2f} s")
