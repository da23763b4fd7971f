"""`--device` and `--threads` of the training commands: auto is the CPU without a GPU, cuda without one is
one line and nothing written; a training runs on its own fixed thread count, so its numbers do not
depend on the machine's cores. (That the CPU trainings are what they were before the options is checked
side by side in the issue's notes; the GPU path runs only where there is a GPU.)"""

from __future__ import annotations

import pytest
import torch

from agents.kit import DEVICES, read_checkpoint, training_device
from cloudsim.cli import main


def test_the_devices_and_what_auto_picks():
    assert DEVICES == ("auto", "cpu", "cuda")
    assert training_device("cpu") == torch.device("cpu")
    assert training_device("auto") == torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with pytest.raises(ValueError, match="device must be one of auto, cpu, cuda, got 'gpu'"):
        training_device("gpu")


@pytest.mark.parametrize("argv", [["train", "deeprm"], ["train", "deeprm-plus"], ["train", "deepk8s"],
                                  ["train", "deepk8s", "--algo", "dagger"], ["train", "deepk8s", "--algo", "a2c"],
                                  ["train", "rlsk"], ["tune", "deepk8s"], ["train", "deepjs"]])
def test_cuda_without_a_gpu_is_one_line_and_nothing_is_written(tmp_path, capsys, argv):
    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU: --device cuda is allowed here")
    out = tmp_path / "run"
    assert main([*argv, "--out", str(out), "--device", "cuda"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("cloudsim: --device cuda: ") and "use --device cpu" in err and len(err.splitlines()) == 1
    assert not out.exists()


def test_a_training_gives_the_same_weights_whatever_thread_count_torch_had_before_it(tmp_path):
    # Before the trainers fixed their own count, DeepRM's training ran on torch's, and two of its threads
    # added the backward's parts in whatever order they finished: three runs of this training on two
    # threads gave three different weights. Now DeepRM runs on one thread unless told otherwise, and on
    # two with torch's deterministic algorithms, so each gives the same weights every time.
    from agents.deeprm import train
    from agents.deeprm.config import DeepRMConfig

    config = DeepRMConfig(slots=5, simu_len=10, jobsets=2, episodes=3, iterations=2, max_actions=60)
    before = torch.get_num_threads()

    def weights(folder, count, **threads):
        torch.set_num_threads(count)
        train(config, tmp_path / folder, progress=False, **threads)
        assert torch.get_num_threads() == threads.get("threads", 1)
        return read_checkpoint(tmp_path / folder / "policy.pt", agent="deeprm")["model"]

    try:
        runs = [weights("a", 1), weights("b", 3), weights("c", 1, threads=2), weights("d", 3, threads=2)]
    finally:
        torch.set_num_threads(before)
    for one, other in ((runs[0], runs[1]), (runs[2], runs[3])):
        assert all(torch.equal(one[k], other[k]) for k in one)


@pytest.mark.parametrize("argv", [["train", "deeprm"], ["train", "deepk8s"], ["train", "rlsk"], ["train", "deepjs"]])
@pytest.mark.parametrize("threads", ["0", "-2", "two"])
def test_threads_below_one_is_one_line_and_nothing_is_written(tmp_path, capsys, argv, threads):
    out = tmp_path / "run"
    assert main([*argv, "--out", str(out), "--threads", threads]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith(f"cloudsim: --threads {threads}") and len(err.splitlines()) == 1
    assert not out.exists()


def test_the_summary_names_the_threads_the_training_ran_on(tmp_path, capsys):
    import json

    before = torch.get_num_threads()
    try:
        assert main(["train", "deeprm", "--iterations", "1", "--jobsets", "1", "--episodes", "2", "--threads", "1",
                     "--out", str(tmp_path / "run")]) == 0
    finally:
        torch.set_num_threads(before)
    summary = json.loads(capsys.readouterr().out.strip().splitlines()[-1])
    assert summary["threads"] == 1


def test_the_deterministic_algorithms_are_for_the_cpu_and_a_users_own_choice_is_kept():
    from agents.kit import training_threads

    before, count = torch.are_deterministic_algorithms_enabled(), torch.get_num_threads()
    try:
        torch.use_deterministic_algorithms(False)
        training_threads(2, torch.device("cpu"))
        assert torch.are_deterministic_algorithms_enabled() and torch.get_num_threads() == 2
        training_threads(1, torch.device("cuda"))  # a GPU training after a CPU one: torch's usual algorithms
        assert not torch.are_deterministic_algorithms_enabled() and torch.get_num_threads() == 1
        torch.use_deterministic_algorithms(True)  # the user's own choice stays, whatever the device
        training_threads(1, torch.device("cuda"))
        assert torch.are_deterministic_algorithms_enabled()
        with pytest.raises(ValueError, match="threads must be a whole number >= 1, got 0"):
            training_threads(0)
    finally:
        torch.use_deterministic_algorithms(before)
        torch.set_num_threads(count)
