"""`--device` of the training commands: auto is the CPU without a GPU, cuda without one is one line and
nothing written. (That the CPU trainings are what they were before the option is checked side by side
in the issue's notes; the GPU path runs only where there is a GPU.)"""

from __future__ import annotations

import pytest
import torch

from agents.kit import DEVICES, training_device
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
