"""Nothing lost, nothing mislabelled: where a command may write, what it leaves when stopped, how it names runs.

Each rule is tried on every command it applies to: an output folder may not be the current folder or one
above it, may not lie inside another command's results, and may not hold or lie inside anything the
command reads; a run is named by the broker it was asked for; a leaderboard cell that failed is not kept;
what an interrupted training leaves can be resumed, or is gone.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from conftest import cli, work_in

from cloudsim.run.output import RESULTS_MARK, resumable_or_nothing

JOBS = ",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk\n" \
       "0,10,3.0,1.0,0.1,7,1,2,0\n1,12,2.0,1.0,0.1,8,1,1,0\n2,15,4.0,2.0,0.1,9,1,1,0\n"
CLUSTER = ["--machines", "1", "--capacity", "cpu=2,memory=1,disk=1"]
CHECKPOINTS = Path(__file__).resolve().parents[1] / "agents" / "checkpoints"


@pytest.fixture
def here(tmp_path, monkeypatch):
    return work_in(tmp_path, monkeypatch, JOBS)


def refused(argv, capsys, *words) -> None:
    code, _, err = cli(argv, capsys)
    assert code == 2 and all(word in err for word in words) and "Traceback" not in err, (code, err)


REPLAY = ["replay", "inputs/jobs.csv", *CLUSTER]
COMMANDS_WITH_OUT = {
    "replay": REPLAY,
    "compare": ["compare", "inputs/jobs.csv", *CLUSTER, "--brokers", "first-fit,sjf"],
    "bench": ["bench", "inputs/jobs.csv", *CLUSTER, "--chunk-size", "1", "--chunks", "0:1", "--brokers",
              "first-fit,sjf"],
    "leaderboard": ["leaderboard", "--workloads", "synthetic", "--brokers", "first-fit", "--seeds", "1"],
    "train deeprm": ["train", "deeprm", "--iterations", "1", "--jobsets", "1", "--episodes", "1"],
    "tune": ["tune", "deepk8s", "--trials", "1"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS_WITH_OUT))
@pytest.mark.parametrize("out", [".", "..", "./"])
def test_the_current_folder_or_one_above_is_no_output_folder(here, capsys, command, out):
    refused([*COMMANDS_WITH_OUT[command], "--out", out], capsys, f"--out {out}", "the current folder or one above it")
    assert sorted(p.name for p in here.iterdir()) == ["inputs"]  # nothing written, nothing deleted


@pytest.mark.parametrize("command", ["replay", "compare", "bench"])
def test_an_output_folder_never_holds_the_trace_it_reads_even_with_overwrite(here, capsys, command):
    refused([*COMMANDS_WITH_OUT[command], "--out", "inputs", "--overwrite"], capsys, "--out inputs",
            "holds WORKLOAD inputs/jobs.csv, which this command reads")
    assert Path("inputs/jobs.csv").read_text() == JOBS


def test_checkpoints_machine_tables_and_data_folders_are_inputs_too(here, capsys):
    shutil.copy(CHECKPOINTS / "deepjs_5x64.pt", "inputs/deepjs.pt")
    refused(["replay", "deeprm", "--brokers", "deepjs", "--checkpoint", "deepjs=inputs/deepjs.pt", "--out",
             "inputs", "--overwrite"], capsys, "holds --checkpoint inputs/deepjs.pt")
    refused(["leaderboard", "--data", "inputs", "--out", "inputs/board"], capsys, "--out inputs/board",
            "is inside --data inputs, which this command reads")
    refused(["leaderboard", "--data", "inputs", "--out", "inputs", "--overwrite"], capsys, "holds --data inputs")
    refused(["tune", "deepk8s", "--init", "inputs/deepjs.pt", "--out", "inputs"], capsys, "holds --init")
    assert sorted(p.name for p in Path("inputs").iterdir()) == ["deepjs.pt", "jobs.csv"]


def test_an_output_folder_inside_another_commands_results_is_refused(here, capsys):
    assert cli([*REPLAY, "--out", "first"], capsys)[0] == 0
    assert (Path("first") / RESULTS_MARK).is_file()
    for command in ("replay", "compare", "leaderboard", "train deeprm"):
        refused([*COMMANDS_WITH_OUT[command], "--out", "first/inner"], capsys, "is inside",
                "the results of another command")
    refused([*COMMANDS_WITH_OUT["bench"], "--plots", "first/plots"], capsys, "--plots first/plots", "is inside")


def test_bench_plots_into_a_folder_with_files_asks_for_overwrite(here, capsys):
    Path("elsewhere").mkdir()
    Path("elsewhere/notes.txt").write_text("mine\n")
    refused([*COMMANDS_WITH_OUT["bench"], "--plots", "elsewhere"], capsys, "--plots elsewhere", "add --overwrite")
    assert cli([*COMMANDS_WITH_OUT["bench"], "--plots", "elsewhere", "--overwrite"], capsys)[0] == 0
    assert (Path("elsewhere") / "makespan_difference.png").is_file()


def test_a_run_is_named_by_the_broker_it_was_asked_for_and_its_counts_add_up(here, capsys):
    dagger = str(CHECKPOINTS / "deepk8s-dagger.pt")
    code, _, err = cli([*REPLAY, "--brokers", "deepk8s-a2c", "--checkpoint", f"deepk8s-a2c={dagger}"], capsys)
    assert code == 1 and "holds a Deepk8s dagger policy, not a2c" in err and "--brokers deepk8s-dagger" in err
    for argv in (REPLAY, COMMANDS_WITH_OUT["compare"]):
        code, out, _ = cli([*argv[:1], *argv[1:], "--brokers", "deepk8s-dagger", "--checkpoint",
                            f"deepk8s-dagger={dagger}", "--json"], capsys)
        rows = [json.loads(line) for line in out.splitlines()]
        runs, total = rows[:-1], rows[-1]
        assert code == 0 and {r["broker"] for r in runs} == {"deepk8s-dagger"}
        if "finished" in total:
            assert total["finished"] == {"deepk8s-dagger": sum(r["instances_finished"] for r in runs)} != {
                "deepk8s-dagger": 0}


def test_options_echo_what_was_typed_and_empty_ones_are_refused(here, capsys):
    deepjs = str(CHECKPOINTS / "deepjs_5x64.pt")
    refused([*REPLAY, "--brokers", "deepjs", "--checkpoint", f"deepjs={deepjs},deepjs={deepjs}"], capsys,
            f"--checkpoint deepjs={deepjs},deepjs={deepjs}: names a broker twice")
    refused([*REPLAY, "--cache", ""], capsys, '--cache "": is empty')
    refused(["compare", "deeprm", "--env", "deeprm", "--brokers", "sjf,tetris-star", "--knobs", "0.5,0.5"], capsys,
            "--knobs 0.5,0.5: names a knob twice")
    refused(["compare", "rlsk", "--env", "rlsk", "--nodes", "1000000"], capsys, "--nodes 1000000", "at most")
    refused(["compare", "rlsk", "--env", "rlsk", "--nodes", "5000", "--seeds", "1"], capsys, "--nodes 5000",
            "no machine can hold")
    refused(["leaderboard", "--data", "inputs/jobs.csv", "--out", "board"], capsys, "--data inputs/jobs.csv: is a file")


def test_deeprm_s_own_environment_works_with_every_default(here, capsys):
    code, out, _ = cli(["compare", "deeprm", "--env", "deeprm", "--seeds", "1", "--json"], capsys)
    assert code == 0 and "deeprm" in {json.loads(line).get("broker") for line in out.splitlines()}
    refused(["compare", "deeprm", "--env", "deeprm", "--seeds", "1", "--sizes", "paper", "--load", "0.5"], capsys,
            "--sizes paper", "deeprm.pt", "images (20, 224)")


def test_a_leaderboard_cell_that_failed_is_not_kept_and_the_board_says_so(here, capsys):
    data = Path("data/swf")
    data.mkdir(parents=True)
    (data / "lublin_256.swf").write_text("; MaxNodes: 8\n1 0 0 10 4 -1 -1 4 10 -1 1 1 1 1 1 1 -1 -1\n2 0 0 damaged\n")
    board = ["leaderboard", "--data", "data", "--workloads", "swf", "--brokers", "first-fit", "--out", "board"]
    code, _, err = cli(board, capsys)
    assert code == 1 and "1 cell(s) failed and are not kept (swf first-fit seed 0)" in err and "line 3" in err
    assert "data/swf/lublin_256.swf" in err and "$CLOUDSIM_DATA" not in err  # the folder as --data gave it
    assert not list(Path("board/cells").glob("*.json"))
    # Mended: 200 jobs, the workload's range (a trace too short for it would fail the cell, not be "not run").
    (data / "lublin_256.swf").write_text("; MaxNodes: 8\n" + "".join(f"{k} {k} 0 10 4 -1 -1 4 10 -1 1 1 1 1 1 1 -1 -1\n"
                                                                     for k in range(1, 201)))
    code, out, err = cli(board, capsys)
    assert code == 0 and "1 cell(s) run now, 0 kept from before" in out, err
    Path("board/cells/swf--first-fit--s0.json").write_text('{"foo": 1}')
    code, out, err = cli(board, capsys)
    assert code == 0 and "board/cells/swf--first-fit--s0.json is damaged" in err and "1 cell(s) run now" in out


def test_a_gpu_policy_on_workloads_without_gpus_is_refused_before_any_folder(here, capsys):
    refused(["leaderboard", "--workloads", "swf", "--brokers", "fgd", "--seeds", "1", "--out", "board"], capsys,
            "fgd is a GPU policy", "none of --workloads swf has GPUs")
    assert not Path("board").exists()


@pytest.mark.parametrize("existed", [False, True])
def test_a_command_stopped_before_its_state_is_saved_leaves_nothing(tmp_path, existed):
    folder = tmp_path / "run"
    if existed:
        folder.mkdir()
        (folder / "mine.txt").write_text("kept\n")
    with pytest.raises(KeyboardInterrupt):
        with resumable_or_nothing(folder, folder / "policy.pt"):
            folder.mkdir(exist_ok=True)
            (folder / "config.json").write_text("{}")
            (folder / "log.csv").write_text("iteration\n1\n")
            raise KeyboardInterrupt
    assert sorted(p.name for p in folder.iterdir()) == ["mine.txt"] if existed else not folder.exists()
    folder.mkdir(exist_ok=True)
    with pytest.raises(KeyboardInterrupt):  # once the state is saved, everything stays: it can be resumed
        with resumable_or_nothing(folder, folder / "policy.pt"):
            (folder / "policy.pt").write_text("state")
            raise KeyboardInterrupt
    assert (folder / "policy.pt").is_file()


def test_a_resume_must_find_the_same_agent_and_a_usable_state(here, capsys):
    assert cli(["train", "deeprm", "--iterations", "1", "--jobsets", "1", "--episodes", "1", "--out", "run"],
               capsys)[0] == 0
    refused(["train", "deeprm-plus", "--out", "run", "--resume", "--iterations", "2"], capsys,
            "--resume run: holds a deeprm training, not deeprm-plus", "cloudsim train deeprm --out run --resume")
    Path("run/policy.pt").write_bytes(b"garbage")
    code, _, err = cli(["train", "deeprm", "--out", "run", "--resume", "--iterations", "2"], capsys)
    assert code == 1 and "cannot be resumed; start it afresh in another folder" in err and "--checkpoint" not in err


def test_plot_draws_nothing_when_one_run_cannot_be_read(here, capsys):
    assert cli([*REPLAY, "--chunk-size", "2", "--out", "runs"], capsys)[0] == 0
    Path("runs/episode-1/first-fit/groups.parquet").write_bytes(b"damaged")
    code, _, err = cli(["plot", "runs"], capsys)
    assert code == 1 and "episode-1/first-fit/groups.parquet: cannot be read as Parquet" in err
    assert not list(Path("runs").rglob("*.png"))
