"""The learning kit (agents/kit/): returns and baselines by hand, checkpoints that resume exactly and refuse
damaged files by name, the training log that survives a killed run, and evaluation episodes."""

import errno
import importlib.util
import json
import math
import random
import sys
from dataclasses import dataclass
from functools import partial

import numpy as np
import pandas as pd
import pytest
import torch

from agents import FirstFit, kit
from agents.kit import (
    CheckpointError,
    CheckpointNotFoundError,
    TrainingLog,
    baselines,
    evaluate,
    read_checkpoint,
    restore_rng,
    returns_to_go,
    rng_state,
    save_checkpoint,
)
from cloudsim import ClusterSpec, JobSpec, Simulation
from cloudsim.engine.runner import Runner
from conftest import task

FIX = "train one with `cloudsim train toy --out DIR` (it writes DIR/policy.pt), or pass another checkpoint with " \
      "--checkpoint"


@dataclass(frozen=True)
class ToyConfig:
    hidden: tuple[int, ...] = (4, 2)
    learning_rate: float = 0.01
    name: str = "toy"

    def __post_init__(self) -> None:
        if any(size < 1 for size in self.hidden):
            raise ValueError(f"ToyConfig.hidden={self.hidden}: every layer needs a size of at least 1")


def toy_model():
    torch.manual_seed(0)
    return torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))


def toy_checkpoint(path, **overrides):
    model = toy_model()
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
    arguments = dict(agent="toy", config=ToyConfig(), model=model.state_dict(), optimizer=optimizer.state_dict(),
                     rng=rng_state(), extra={"episodes": 3})
    return save_checkpoint(path, **{**arguments, **overrides})


# ------------------------------------------------------------------ returns and baselines
def test_returns_to_go_by_hand():
    # q_0 = 1 + 0.5*2 + 0.25*3 = 2.75, q_1 = 2 + 0.5*3 = 3.5, q_2 = 3.
    assert returns_to_go([1, 2, 3], gamma=0.5).tolist() == [2.75, 3.5, 3.0]
    # Undiscounted by default: the sums of the tails.
    assert returns_to_go([1, 2, 3]).tolist() == [6.0, 5.0, 3.0]
    assert returns_to_go([-1, -1, -1, -1], gamma=0.0).tolist() == [-1.0, -1.0, -1.0, -1.0]
    assert returns_to_go([]).tolist() == []


def test_baselines_are_the_zero_padded_mean_by_hand():
    # [6, 5, 3], [4, 2] (padded to [4, 2, 0]) and [1] (padded to [1, 0, 0]):
    # (6 + 4 + 1) / 3, (5 + 2 + 0) / 3, (3 + 0 + 0) / 3.
    b = baselines([np.array([6.0, 5.0, 3.0]), np.array([4.0, 2.0]), np.array([1.0])])
    assert b.tolist() == pytest.approx([11 / 3, 7 / 3, 1.0])
    assert baselines([np.array([2.0, 1.0])]).tolist() == [2.0, 1.0]
    with pytest.raises(ValueError, match="no trajectories to average"):
        baselines([])


def test_deepjs_still_exports_the_moved_names():
    import agents.deepjs as deepjs

    assert deepjs.returns_to_go is kit.returns_to_go and deepjs.baselines is kit.baselines
    assert deepjs.CheckpointError is kit.CheckpointError
    assert deepjs.CheckpointMismatchError is kit.CheckpointMismatchError


# ------------------------------------------------------------------ random states
def test_restored_random_states_draw_the_same_numbers_again():
    np_rng = np.random.default_rng(42)
    np_rng.random(5)  # part-way through its stream
    random.random()
    torch.rand(2)
    state = rng_state(np_rng)
    first = (np_rng.random(4), [random.random() for _ in range(4)], torch.rand(4))
    restore_rng(state, np_rng)
    second = (np_rng.random(4), [random.random() for _ in range(4)], torch.rand(4))
    assert np.array_equal(first[0], second[0]) and first[1] == second[1] and torch.equal(first[2], second[2])


def test_a_checkpoint_round_trip_continues_every_random_stream(tmp_path):
    np_rng = np.random.default_rng(7)
    np_rng.integers(0, 100, 3)
    model = toy_model()  # seeds torch: the state is taken after it
    path = save_checkpoint(tmp_path / "toy.pt", agent="toy", config=ToyConfig(), model=model.state_dict(),
                           rng=rng_state(np_rng))
    expected = (np_rng.random(6), random.getrandbits(64), torch.randn(6))
    # Other draws in between (another run, another process): the checkpoint puts every generator back.
    np_rng.random(100), random.random(), torch.randn(100)
    fresh = np.random.default_rng(0)
    restore_rng(read_checkpoint(tmp_path / "toy.pt", agent="toy"), fresh)
    assert np.array_equal(fresh.random(6), expected[0])
    assert random.getrandbits(64) == expected[1] and torch.equal(torch.randn(6), expected[2])
    assert path == tmp_path / "toy.pt"


def test_restore_rng_says_what_is_missing():
    with pytest.raises(ValueError, match="no random state to restore"):
        restore_rng({"model": {}})
    with pytest.raises(ValueError, match="no numpy_rng state"):
        restore_rng(rng_state(), np.random.default_rng(0))
    with pytest.raises(TypeError, match="not a numpy.random.Generator"):
        rng_state(np.random.RandomState(0))


# ------------------------------------------------------------------ checkpoints
def test_a_checkpoint_round_trip_keeps_everything(tmp_path):
    toy_checkpoint(tmp_path / "toy.pt")
    saved = read_checkpoint(tmp_path / "toy.pt", agent="toy", config_type=ToyConfig, keys=("episodes",))
    assert saved["agent"] == "toy" and saved["config"] == ToyConfig() and saved["episodes"] == 3
    for name, weight in toy_model().state_dict().items():
        assert torch.equal(saved["model"][name], weight)
    assert saved["optimizer"]["param_groups"][0]["lr"] == 0.01
    # Without config_type the config stays what the file holds: tuples written as lists.
    raw = read_checkpoint(tmp_path / "toy.pt", agent="toy")
    assert raw["config"] == {"hidden": [4, 2], "learning_rate": 0.01, "name": "toy"}


def test_a_missing_file_is_a_checkpoint_error_and_file_not_found(tmp_path):
    path = tmp_path / "nowhere" / "toy.pt"
    with pytest.raises(CheckpointNotFoundError) as caught:
        read_checkpoint(path, agent="toy")
    assert str(caught.value) == f"{path}: no toy checkpoint there; {FIX}"
    assert isinstance(caught.value, CheckpointError) and isinstance(caught.value, FileNotFoundError)
    assert caught.value.path == path


def _truncated(path):
    whole = toy_checkpoint(path).read_bytes()
    path.write_bytes(whole[: len(whole) // 2])


def _damaged(path):
    whole = bytearray(toy_checkpoint(path).read_bytes())
    whole[: len(whole) // 2] = b"\x00" * (len(whole) // 2)  # the zip headers gone
    path.write_bytes(bytes(whole))


def _with(**entries):
    def make(path):
        toy_checkpoint(path)
        saved = torch.load(path, weights_only=True)
        saved.update(entries)
        torch.save({k: v for k, v in saved.items() if v is not _DROP}, path)
    return make


_DROP = object()


@pytest.mark.parametrize("make, reason", [
    (_truncated, "torch cannot load it ("),
    (_damaged, "torch cannot load it ("),
    (lambda path: path.write_bytes(b""), "the file is empty"),
    (lambda path: path.mkdir(), "it is a directory"),
    (lambda path: torch.save([1, 2], path), "it holds a list, not the dict that `agents.kit.save_checkpoint` writes"),
    (_with(agent="deepjs"), "it is a checkpoint of the agent 'deepjs', not of 'toy'"),
    (_with(optimizer=_DROP, episodes=_DROP), "it lacks optimizer, episodes (a torch file, but not one written by "),
    (_with(agent=_DROP), "it lacks agent (a torch file"),
    (_with(config={"hidden": [4, 0]}), "its config is invalid (ToyConfig.hidden=(4, 0): every layer needs"),
    (_with(config={"layers": 3}), "its config is invalid ("),
    (_with(model=[1.0]), "its model is a list, not the network's weights by name"),
    (_with(model={"0.weight": [1.0]}), "its model entries 0.weight are not tensors"),
    (_with(model={"0.weight": torch.tensor([1.0, math.nan]), "0.bias": torch.tensor([math.inf])}),
     "its weights 0.weight, 0.bias hold NaN or infinite values (the training diverged)"),
])
def test_a_file_that_is_no_usable_checkpoint_is_named_with_the_reason_and_the_fix(tmp_path, make, reason):
    path = tmp_path / "toy.pt"
    make(path)
    with pytest.raises(CheckpointError) as caught:
        read_checkpoint(path, agent="toy", keys=("episodes",), config_type=ToyConfig)
    message = str(caught.value)
    assert message.startswith(f"{path} is not a usable toy checkpoint: {reason}")
    assert message.endswith(f"; {FIX}") and caught.value.path == path


def test_an_unnamed_file_is_read_only_when_allowed(tmp_path):
    path = tmp_path / "old.pt"
    _with(agent=_DROP)(path)
    assert "agent" not in read_checkpoint(path, agent="toy", allow_unnamed=True)


def test_messages_use_the_agents_title_writer_and_fix(tmp_path):
    path = tmp_path / "toy.pt"
    torch.save(torch.zeros(2), path)
    with pytest.raises(CheckpointError) as caught:
        read_checkpoint(path, agent="toy", title="Toy", writer="`ToyTrainer.save`", fix="ask the toy maker")
    assert str(caught.value) == f"{path} is not a usable Toy checkpoint: it holds a Tensor, not the dict that " \
                                f"`ToyTrainer.save` writes; ask the toy maker"
    assert str(kit.unusable_checkpoint(path, "its toys are broken", agent="toy")) == \
        f"{path} is not a usable toy checkpoint: its toys are broken; {FIX}"


def test_save_refuses_what_it_cannot_store_faithfully(tmp_path):
    with pytest.raises(TypeError, match="config must be a dataclass instance"):
        toy_checkpoint(tmp_path / "a.pt", config={"hidden": [4]})
    with pytest.raises(ValueError, match=r"extra entries \['model'\] would replace the kit's own"):
        toy_checkpoint(tmp_path / "a.pt", extra={"model": 1})
    with pytest.raises(ValueError, match=r"unknown random states \['cuda'\]"):
        toy_checkpoint(tmp_path / "a.pt", rng={"cuda": 1})
    assert not any(tmp_path.iterdir())


def test_save_leaves_the_old_checkpoint_whole_on_a_full_disk_or_ctrl_c(tmp_path, monkeypatch):
    path = toy_checkpoint(tmp_path / "toy.pt")
    before = path.read_bytes()

    def disk_full(obj, f):
        f.write(b"PK\x03\x04 half a checkpoint")
        raise OSError(errno.ENOSPC, "No space left on device")

    def ctrl_c(obj, f):
        f.write(b"PK\x03\x04 half a checkpoint")
        raise KeyboardInterrupt

    for failure, error in ((disk_full, OSError), (ctrl_c, KeyboardInterrupt)):
        monkeypatch.setattr(torch, "save", failure)
        with pytest.raises(error):
            toy_checkpoint(path, extra={"episodes": 4})
        assert sorted(p.name for p in tmp_path.iterdir()) == ["toy.pt"] and path.read_bytes() == before


# ------------------------------------------------------------------ training log
def test_training_log_rows_are_readable_by_pandas_after_the_writer_is_dropped(tmp_path):
    log = TrainingLog(tmp_path / "run")
    log.write({"iteration": 0, "reward": -3.5, "loss": np.float32(0.25), "wall_s": 1.0})
    log.write({"iteration": 1, "reward": -2.0, "loss": torch.tensor(0.5), "wall_s": 1.5})
    del log  # never closed: every row was flushed as it was written
    rows = pd.read_csv(tmp_path / "run" / "log.csv")
    assert rows.to_dict("list") == {"iteration": [0, 1], "reward": [-3.5, -2.0], "loss": [0.25, 0.5],
                                    "wall_s": [1.0, 1.5]}
    lines = pd.read_json(tmp_path / "run" / "log.jsonl", lines=True)
    assert lines.to_dict("list") == rows.to_dict("list")


def test_a_resumed_log_appends_and_a_killed_writers_half_line_is_cut(tmp_path):
    with TrainingLog(tmp_path) as log:
        log.write({"iteration": 0, "reward": -3.0})
    with open(tmp_path / "log.csv", "a") as f:
        f.write("1,-2.")  # killed in the middle of a row
    with open(tmp_path / "log.jsonl", "a") as f:
        f.write('{"iteration": 1, "rew')
    with TrainingLog(tmp_path) as log:
        assert log.rows == 1
        log.write({"iteration": 1, "reward": -2.0})
    assert pd.read_csv(tmp_path / "log.csv").to_dict("list") == {"iteration": [0, 1], "reward": [-3.0, -2.0]}
    assert [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()] == [
        {"iteration": 0, "reward": -3.0}, {"iteration": 1, "reward": -2.0}]


def test_new_columns_widen_the_csv_and_missing_or_non_finite_values_are_empty(tmp_path):
    with TrainingLog(tmp_path) as log:
        log.write({"iteration": 0, "reward": -3.0})
        log.write({"iteration": 1, "loss": math.nan, "note": "lr halved"})
        log.write({"iteration": 2, "reward": math.inf, "done": True})
    assert (tmp_path / "log.csv").read_text().splitlines() == [
        "iteration,reward,loss,note,done", "0,-3.0,,,", "1,,nan,lr halved,", "2,inf,,,True"]
    assert [json.loads(line) for line in (tmp_path / "log.jsonl").read_text().splitlines()] == [
        {"iteration": 0, "reward": -3.0}, {"iteration": 1, "loss": None, "note": "lr halved"},
        {"iteration": 2, "reward": None, "done": True}]
    frame = pd.read_csv(tmp_path / "log.csv")
    assert math.isnan(frame["loss"][1]) and frame["reward"][2] == math.inf


def test_training_log_refuses_what_is_not_a_scalar(tmp_path):
    with TrainingLog(tmp_path) as log:
        with pytest.raises(TypeError, match="'losses' is a list, not a scalar"):
            log.write({"iteration": 0, "losses": [1.0, 2.0]})
    with pytest.raises(ValueError, match="is closed"):
        log.write({"iteration": 1})
    (tmp_path / "file").write_text("")
    with pytest.raises(NotADirectoryError, match="is a file"):
        TrainingLog(tmp_path / "file")


@pytest.mark.needs("tensorboard")
def test_training_log_writes_tensorboard_events(tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    with TrainingLog(tmp_path, tensorboard=True) as log:
        log.write({"iteration": 5, "reward": -3.0, "note": "text is not plotted"})
        log.write({"iteration": 6, "reward": -2.0})
    events = EventAccumulator(str(tmp_path))
    events.Reload()
    assert events.Tags()["scalars"] == ["reward"]
    assert [(e.step, e.value) for e in events.Scalars("reward")] == [(5, -3.0), (6, -2.0)]


def test_training_log_without_tensorboard_says_how_to_get_it(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # as if tensorboard were not installed
    with pytest.raises(ImportError, match="needs the tensorboard package: pip install tensorboard"):
        TrainingLog(tmp_path, tensorboard=True)
    TrainingLog(tmp_path).close()  # without TensorBoard the log needs nothing more


# ------------------------------------------------------------------ evaluation
CLUSTER = ClusterSpec.uniform(2, {"cpu": 4, "memory": 1})
WORKLOADS = [[JobSpec(0, 0.0, (task(0, 2, 1, 0.1, 2),))],
             [JobSpec(0, 0.0, (task(0, 4, 1, 0.1, 3),)), JobSpec(1, 1.0, (task(0, 2, 1, 0.1, 2),))]]


def untimed(summaries):
    """The summaries without their wall-clock times, which differ from run to run."""
    return [{k: v for k, v in summary.items() if not k.endswith("wall_s")} for summary in summaries]


def test_evaluate_runs_one_episode_per_workload_in_order():
    here = evaluate(FirstFit, CLUSTER, WORKLOADS)
    # Event-driven; machines of 4 cpu, instances of 1 cpu. First: 2 instances of 2 time units start at 0 on
    # machine 0, done at 2. Second: job 0's 4 instances of 3 units fill machine 0 from 0 to 3; job 1's 2
    # instances of 2 units, submitted at 1, run on machine 1 from 1 to 3.
    assert [summary["makespan"] for summary in here] == [2.0, 3.0]
    assert untimed(here) == untimed([Simulation(CLUSTER, jobs, FirstFit()).run().summary for jobs in WORKLOADS])
    # In tick mode (CloudSimPy's clock) the makespan is the first wake with every job done: one tick later here.
    assert [s["makespan"] for s in evaluate(FirstFit, CLUSTER, WORKLOADS, tick=1)] == [3.0, 4.0]
    with Runner(workers=2, progress=False) as runner:  # worker processes: the same summaries, in the same order
        assert untimed(evaluate(partial(FirstFit), CLUSTER, WORKLOADS, runner=runner)) == untimed(here)


# ------------------------------------------------------------------ the training command's log
def _trace(folder):
    rng = np.random.default_rng(6)
    rows = [",submit_time,duration,cpu,memory,job_id,task_id,instances_num,disk"]
    for j in range(4):
        for t in range(2):
            rows.append(f"{len(rows)},{2.0 * j},{int(rng.integers(1, 5))},{int(rng.integers(1, 4))},0.1,{j},{t},"
                        f"{int(rng.integers(1, 4))},0")
    (folder / "jobs.csv").write_text("\n".join(rows) + "\n")
    return [str(folder / "jobs.csv"), "--chunk-size", "2", "--machines", "2", "--capacity", "cpu=4,memory=1,disk=1",
            "--iterations", "2", "--trajectories", "2", "--workers", "1"]


def test_train_logs_every_iteration_after_its_checkpoint_and_resume_appends(tmp_path, capsys):
    from cloudsim.cli import main

    common = _trace(tmp_path)
    out = tmp_path / "a"
    assert main(["train", "deepjs", *common, "--chunks", "0:1", "--out", str(out)]) == 0
    assert main(["train", "deepjs", *common, "--chunks", "0:2", "--out", str(out), "--resume"]) == 0
    rows = pd.read_csv(out / "log.csv")
    # 2 iterations per chunk; the resumed run trained chunk 1 only and went on counting.
    assert rows["iteration"].tolist() == [0, 1, 2, 3] and rows["chunk"].tolist() == [0, 0, 1, 1]
    assert rows["chunk_iteration"].tolist() == [0, 1, 0, 1]
    assert {"makespan_before", "mean_makespan", "mean_return", "loss", "decisions", "wall_s"} <= set(rows.columns)
    assert pd.read_json(out / "log.jsonl", lines=True)["iteration"].tolist() == [0, 1, 2, 3]
    assert not any(p.name.startswith("events.out.tfevents") for p in out.iterdir())  # TensorBoard only if asked
    summaries = [json.loads(line) for line in capsys.readouterr().out.splitlines() if '"summary"' in line]
    assert [s["log"] for s in summaries] == [str(out), str(out)]
    assert [s["checkpoint"] for s in summaries] == [str(out / "policy.pt")] * 2
    # The same training in another folder ends with the same weights and the same log.
    for chunks, resume in (("0:1", []), ("0:2", ["--resume"])):  # the normaliser is fitted on the first run's chunks
        assert main(["train", "deepjs", *common, "--chunks", chunks, "--out", str(tmp_path / "b"), *resume]) == 0
    first, second = (torch.load(tmp_path / name / "policy.pt", weights_only=True) for name in ("a", "b"))
    assert all(torch.equal(first["model"][k], second["model"][k]) for k in second["model"])
    assert first["log"] == second["log"]


@pytest.mark.needs("tensorboard")
def test_train_with_tensorboard_writes_events_beside_the_log(tmp_path):
    from cloudsim.cli import main
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out = tmp_path / "run"
    assert main(["train", "deepjs", *_trace(tmp_path), "--chunks", "0:1", "--out", str(out), "--tensorboard"]) == 0
    events = EventAccumulator(str(out))
    events.Reload()
    assert [e.step for e in events.Scalars("mean_makespan")] == pd.read_csv(out / "log.csv")["iteration"].tolist()


def test_train_with_tensorboard_missing_says_how_to_get_it(tmp_path, capsys, monkeypatch):
    from cloudsim.cli import main

    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *args: None if name == "tensorboard" else real_find_spec(name, *args))
    assert main(["train", "deepjs", *_trace(tmp_path), "--out", str(tmp_path / "run"), "--tensorboard"]) == 2
    assert "--tensorboard: needs the tensorboard package: pip install tensorboard" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("out, message", [
    ("{tmp}/old/log.csv", "is a file; give a folder"),  # (the trace itself: "holds WORKLOAD ..., which ... reads")
    ("{tmp}/old", "already holds a training log; add --resume to continue that training and its log"),
])
def test_train_refuses_a_folder_it_cannot_write_before_training(tmp_path, capsys, out, message):
    from cloudsim.cli import main

    common = _trace(tmp_path)
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "log.csv").write_text("iteration\n0\n")
    assert main(["train", "deepjs", *common, "--out", out.format(tmp=tmp_path)]) == 2
    assert message in capsys.readouterr().err
    assert (tmp_path / "old" / "log.csv").read_text() == "iteration\n0\n"
    assert not (tmp_path / "old" / "policy.pt").exists()


def test_trim_log_keeps_the_rows_up_to_an_iteration_in_both_files(tmp_path):
    from agents.kit import trim_log

    with TrainingLog(tmp_path) as log:
        for i in range(1, 5):
            log.write({"iteration": i, "reward": -i})
    assert trim_log(tmp_path, 2) == 2
    assert pd.read_csv(tmp_path / "log.csv").iteration.tolist() == [1, 2]
    assert pd.read_json(tmp_path / "log.jsonl", lines=True).reward.tolist() == [-1, -2]
    assert trim_log(tmp_path, 5) == 0
