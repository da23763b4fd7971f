"""A resume of every `cloudsim train AGENT` checks everything that made the run, and a folder says what it holds.

Each agent is trained once, as small as it goes (a few iterations, one jobset or environment); each test works on
a copy of that folder. Every refusal is one line on stderr, exit 2, and leaves the folder as it was.
"""

from __future__ import annotations

import importlib.util
import math
import os
import shlex
import shutil
from pathlib import Path

import numpy as np
import pytest

from cloudsim.cli import main

AGENTS = ("deeprm", "deeprm-plus", "deepk8s ppo", "deepk8s dagger", "rlsk", "deepjs")
"""Every training command, Deepk8s's two kinds of state (Stable-Baselines3's, DAgger's) apart."""

SMALL = {
    "deeprm": ["train", "deeprm", "--iterations", "2", "--jobsets", "1", "--episodes", "1", "--slots", "5"],
    "deeprm-plus": ["train", "deeprm-plus", "--iterations", "2", "--jobsets", "1", "--episodes", "1", "--slots", "5",
                    "--clone-jobsets", "2", "--clone-epochs", "1"],
    "deepk8s ppo": ["train", "deepk8s", "--algo", "ppo", "--tasks", "20", "--iterations", "2", "--envs", "1",
                    "--steps-per-env", "16"],
    "deepk8s dagger": ["train", "deepk8s", "--algo", "dagger", "--tasks", "20", "--iterations", "2",
                       "--dagger-episodes", "1", "--dagger-updates", "2"],
    "rlsk": ["train", "rlsk", "--jobs", "30", "--sequences", "2", "--envs", "1", "--timesteps", "70"],
    "deepjs": ["train", "deepjs", "TRACE", "--chunk-size", "2", "--chunks", "0:2", "--machines", "2", "--capacity",
               "cpu=4,memory=1,disk=1", "--iterations", "1", "--trajectories", "2", "--workers", "1"],
}
"""The smallest training of each agent, into --out DIR (TRACE: the trace `trained` writes)."""

LENGTH = {"deeprm": "--iterations", "deeprm-plus": "--iterations", "deepk8s ppo": "--iterations",
          "deepk8s dagger": "--iterations", "rlsk": "--timesteps"}
"""The option that says how long each training runs (DeepJS's length is its --chunks)."""

DONE = {"deeprm": 2, "deeprm-plus": 2, "deepk8s ppo": 2, "deepk8s dagger": 2,
        "rlsk": math.ceil(70 / 4) * 4}
"""What each small training has done: its iterations; RLSK's DQN steps by --train-freq (4) steps at a time, so
--timesteps 70 ends at the first multiple of 4 past it."""

STATE = {"policy.pt", "model.zip", "dagger.pt", "replay.pkl", "preprocess.pkl", "reward_scale.pkl"}
"""The files a save writes that a resume reads back."""


def write_trace(folder: Path, jobs: int = 8) -> Path:
    """``jobs`` small jobs in CloudSimPy's format (eight: four chunks of two)."""
    rng = np.random.default_rng(6)
    rows = [",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk"]
    for j in range(jobs):
        for t in range(2):
            rows.append(f"{len(rows)},{2.0 * j},{int(rng.integers(1, 5))},{int(rng.integers(1, 4))},0.1,{j},{t},"
                        f"{int(rng.integers(1, 4))},0")
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "jobs.csv").write_text("\n".join(rows) + "\n")
    return folder / "jobs.csv"


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Each agent's small training, done once: its folder by agent, and the DeepJS trace."""
    root = tmp_path_factory.mktemp("trained")
    trace = write_trace(root / "in")
    folders = {}
    for agent in AGENTS:
        folders[agent] = root / agent.replace(" ", "-")
        argv = [str(trace) if word == "TRACE" else word for word in SMALL[agent]]
        assert main([*argv, "--out", str(folders[agent])]) == 0, agent
    return folders, trace


def command(agent: str, trace: Path) -> list[str]:
    """The training's command line, without --out."""
    return [str(trace) if word == "TRACE" else word for word in SMALL[agent]]


def copy(trained, agent: str, tmp_path: Path) -> Path:
    folders, _ = trained
    out = tmp_path / agent.replace(" ", "-")
    shutil.copytree(folders[agent], out)
    return out


def snapshot(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and err.startswith("cloudsim: ") and "Traceback" not in err, err
    return err.strip()


def with_value(argv: list[str], flag: str, value: str) -> list[str]:
    at = argv.index(flag)
    return [*argv[:at + 1], value, *argv[at + 2:]]


# ------------------------------------------------------------------ what a folder holds
def held(agent: str, trace: Path) -> tuple[str, list[str]]:
    """How a folder of ``agent`` is named, and the command that continues it (without --out), worked out by hand."""
    names = {"deeprm": ("a deeprm training", ["train", "deeprm"]),
             "deeprm-plus": ("a deeprm-plus training", ["train", "deeprm-plus"]),
             "deepk8s ppo": ("a deepk8s ppo training", ["train", "deepk8s", "--algo", "ppo"]),
             "deepk8s dagger": ("a deepk8s dagger training", ["train", "deepk8s", "--algo", "dagger"]),
             "rlsk": ("an rlsk training", ["train", "rlsk"]),
             "deepjs": ("a deepjs training", ["train", "deepjs", str(trace.resolve()), "--format", "cloudsimpy",
                                              "--chunk-size", "2"])}
    return names[agent]


OTHER = {"deeprm": ["train", "deeprm"], "deeprm-plus": ["train", "deeprm-plus"],
         "deepk8s ppo": ["train", "deepk8s", "--algo", "ppo"],
         "deepk8s dagger": ["train", "deepk8s", "--algo", "dagger"], "rlsk": ["train", "rlsk"],
         "deepjs": ["train", "deepjs"]}
"""Each command as a user types it into a folder it did not make."""


@pytest.mark.parametrize("agent", AGENTS)
def test_a_folder_is_named_by_what_it_holds_to_every_other_command_and_no_refusal_loops(trained, agent, tmp_path,
                                                                                        capsys):
    _, trace = trained
    out = copy(trained, agent, tmp_path)
    before = snapshot(out)
    name, continues = held(agent, trace)
    resume = "cloudsim " + shlex.join([*continues, "--out", str(out), "--resume"])
    for other, argv in OTHER.items():
        if other == agent:
            continue
        assert main([*argv, "--out", str(out)]) == 2
        assert one_line(capsys) == (f"cloudsim: --out {out}: already holds a trained policy ({name}); resume it with "
                                    f"`{resume}`, or give another folder")
        assert main([*argv, "--out", str(out), "--resume"]) == 2
        asked = " ".join(argv[1:]).replace("--algo ", "")  # "deepk8s ppo"
        assert one_line(capsys) == (f"cloudsim: --resume {out}: holds {name}, not {asked}; resume it with `{resume}`, "
                                    f"or give another folder")
    assert snapshot(out) == before
    # The command named goes on from the folder (to the length it was made with), rather than refusing in turn.
    assert main(shlex.split(resume)[1:]) == 0, capsys.readouterr().err
    if agent != "deepjs":  # DeepJS's named command takes every chunk of its trace: it trains the two left
        assert (out / "log.csv").read_bytes() == before["log.csv"]


def test_a_deepk8s_resume_without_algo_continues_the_folders_algorithm(trained, tmp_path, capsys):
    out = copy(trained, "deepk8s dagger", tmp_path)
    assert main(["train", "deepk8s", "--out", str(out), "--resume", "--iterations", "3"]) == 0, capsys.readouterr().err
    assert [line.split(",")[0] for line in (out / "log.csv").read_text().splitlines()[1:]] == ["1", "2", "3"]


# ------------------------------------------------------------------ fewer iterations than done
@pytest.mark.parametrize("agent", LENGTH)
def test_a_resume_with_a_length_below_what_is_done_is_refused_naming_it(trained, agent, tmp_path, capsys):
    _, trace = trained
    out = copy(trained, agent, tmp_path)
    before = snapshot(out)
    flag, done = LENGTH[agent], DONE[agent]
    asked = 50 if agent == "rlsk" else 1
    assert main([*with_value(command(agent, trace), flag, str(asked)), "--out", str(out), "--resume"]) == 2
    unit = flag.lstrip("-")
    length = 70 if agent == "rlsk" else 2
    assert one_line(capsys) == (f"cloudsim: {flag} {asked}: the training in {out} has done {done} {unit} already; "
                                f"give more than {done} to go further, or leave {flag} out (its length: {length})")
    assert main([*with_value(command(agent, trace), flag, "0"), "--out", str(out), "--resume"]) == 2
    assert f"{flag} 0: " in one_line(capsys)
    assert snapshot(out) == before  # config.json keeps the length it was made with


def test_a_resume_may_give_the_length_it_was_made_with_though_dqn_passed_it(trained, tmp_path, capsys):
    _, trace = trained
    out = copy(trained, "rlsk", tmp_path)
    log = (out / "log.csv").read_bytes()
    assert main([*command("rlsk", trace), "--out", str(out), "--resume"]) == 0, capsys.readouterr().err
    assert (out / "log.csv").read_bytes() == log  # 72 of 70 steps done: nothing more to train


@pytest.mark.parametrize("agent", AGENTS)
def test_a_resume_from_a_damaged_config_is_one_line_naming_it(trained, agent, tmp_path, capsys):
    _, trace = trained
    out = copy(trained, agent, tmp_path)
    (out / "config.json").write_text("{half")
    assert main([*command(agent, trace), "--out", str(out), "--resume"]) == 2
    err = one_line(capsys)
    assert err.startswith(f"cloudsim: --resume {out}: {out / 'config.json'} is ") and "damaged" in err
    assert err.endswith("start a new training in another folder")


# ------------------------------------------------------------------ DeepJS's workload
@pytest.mark.parametrize("change, message", [
    (lambda argv, other: [other if word.endswith("jobs.csv") else word for word in argv],
     "WORKLOAD {other}: differs from the training being resumed in {out}, made with WORKLOAD {trace}; resume it "
     "with WORKLOAD {trace}, or give another folder"),
    (lambda argv, other: [word for word in argv if not word.endswith("jobs.csv")],
     "WORKLOAD: differs from the training being resumed in {out}, made with WORKLOAD {trace}; resume it with "
     "WORKLOAD {trace}, or give another folder"),
    (lambda argv, other: with_value(argv, "--chunk-size", "3"),
     "--chunk-size 3: differs from the training being resumed in {out}, made with --chunk-size 2; resume it with "
     "--chunk-size 2, or give another folder"),
    (lambda argv, other: [*argv, "--load", "0.9"],
     "--load 0.9: differs from the training being resumed in {out}, made without --load; resume it without "
     "--load, or give another folder"),
    (lambda argv, other: [*argv, "--format", "alibaba-v2017"],
     "--format alibaba-v2017: differs from the training being resumed in {out}, made with --format cloudsimpy; "
     "resume it with --format cloudsimpy, or give another folder"),
    (lambda argv, other: with_value(argv, "--iterations", "3"),
     "--iterations 3: differs from the training being resumed in {out}, made with --iterations 1; leave it out to "
     "keep the saved value"),
], ids=["trace", "no-trace", "chunk-size", "load", "format", "iterations"])
def test_a_deepjs_resume_on_another_workload_is_refused_before_any_chunk(trained, tmp_path, capsys, change, message):
    _, trace = trained
    out = copy(trained, "deepjs", tmp_path)
    other = write_trace(tmp_path / "other", jobs=6)
    before = snapshot(out)
    argv = with_value(command("deepjs", trace), "--chunks", "0:4")
    assert main([*change(argv, str(other)), "--out", str(out), "--resume"]) == 2
    assert one_line(capsys) == "cloudsim: " + message.format(other=other.resolve(), out=out, trace=trace.resolve())
    assert snapshot(out) == before


def test_a_deepjs_resume_names_its_trace_any_way_and_trains_only_the_chunks_left(trained, tmp_path, capsys,
                                                                                 monkeypatch):
    _, trace = trained
    out = copy(trained, "deepjs", tmp_path)
    monkeypatch.chdir(trace.parent)  # the same file, named from its own folder
    argv = [word if not word.endswith("jobs.csv") else "jobs.csv" for word in command("deepjs", trace)]
    assert main([*with_value(argv, "--chunks", "0:3"), "--out", str(out), "--resume"]) == 0
    summary = capsys.readouterr().out.splitlines()[-1]
    assert '"chunks_trained": 1, "chunks": 3, "chunks_skipped_as_done": 2' in summary


def test_a_deepjs_folder_from_before_the_record_resumes_and_records_its_workload(trained, tmp_path, capsys):
    _, trace = trained
    out = copy(trained, "deepjs", tmp_path)
    (out / "config.json").unlink()  # as cloudsim wrote DeepJS's folders before
    assert main([*command("deepjs", trace), "--out", str(out), "--resume"]) == 0
    capsys.readouterr()
    assert main([*with_value(command("deepjs", trace), "--chunk-size", "3"), "--out", str(out), "--resume"]) == 2
    assert "--chunk-size 3: differs from the training being resumed" in one_line(capsys)


def test_deepjs_does_not_train_into_the_folder_of_its_trace(tmp_path, capsys):
    trace = write_trace(tmp_path / "in")
    argv = [str(trace) if word == "TRACE" else word for word in SMALL["deepjs"]]
    assert main([*argv, "--out", str(tmp_path / "in")]) == 2
    assert one_line(capsys) == (f"cloudsim: --out {tmp_path / 'in'}: holds WORKLOAD {trace}, which this command reads "
                                "(--overwrite would delete it); write the results elsewhere")
    assert sorted(p.name for p in (tmp_path / "in").iterdir()) == ["jobs.csv"]


# ------------------------------------------------------------------ stopped while it saves
@pytest.mark.parametrize("agent", AGENTS)
def test_ctrl_c_while_a_training_saves_leaves_no_partial_file_and_the_state_before(trained, agent, tmp_path,
                                                                                   capsys, monkeypatch):
    _, trace = trained
    out = copy(trained, agent, tmp_path)
    before = snapshot(out)
    replace = os.replace
    stopped = []

    def stop_at_the_first_rename_of_a_save(source, target, *args, **kwargs):
        if not stopped and ".partial" in Path(source).name and Path(target).name in STATE:
            stopped.append(Path(target).name)  # every partial file of the save is written by now
            raise KeyboardInterrupt
        return replace(source, target, *args, **kwargs)

    monkeypatch.setattr(os, "replace", stop_at_the_first_rename_of_a_save)
    longer = (with_value(command(agent, trace), "--chunks", "0:3") if agent == "deepjs"
              else with_value(command(agent, trace), LENGTH[agent], "140" if agent == "rlsk" else "3"))
    assert main([*longer, "--out", str(out), "--resume"]) == 130
    assert stopped, "the training never saved"
    assert [p.name for p in out.rglob("*") if ".partial" in p.name] == []
    assert {name: data for name, data in snapshot(out).items() if name in STATE} == {
        name: data for name, data in before.items() if name in STATE}
    capsys.readouterr()


@pytest.mark.parametrize("agent", AGENTS)
def test_a_resume_removes_what_a_killed_save_left(trained, agent, tmp_path, capsys):
    _, trace = trained
    out = copy(trained, agent, tmp_path)
    left = [out / "model.partial.zip", out / "replay.partial.pkl", out / "policy.pt.partial",
            out / ".config.json.partial-4242"]
    for path in left:
        path.write_bytes(b"half a file")
    assert main([*command(agent, trace), "--out", str(out), "--resume"]) == 0, capsys.readouterr().err
    assert [p.name for p in out.rglob("*") if ".partial" in p.name] == []


# ------------------------------------------------------------------ checked before training
@pytest.mark.parametrize("agent", AGENTS)
def test_tensorboard_missing_is_one_line_before_anything_is_written(agent, tmp_path, capsys, monkeypatch):
    trace = write_trace(tmp_path / "in")
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "tensorboard" else real_find_spec(name, *args))
    assert main([*command(agent, trace), "--out", str(tmp_path / "run"), "--tensorboard"]) == 2
    assert one_line(capsys) == ("cloudsim: --tensorboard: needs the tensorboard package: pip install tensorboard (or "
                                "leave --tensorboard out: --out still gets log.csv and log.jsonl)")
    assert not (tmp_path / "run").exists()
