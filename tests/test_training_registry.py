"""A learned agent is its package plus one `register_training` entry: the command, its options, texts, resume and
folder checks all come from its `agents.registry.TrainingSpec`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from agents.registry import TrainingSpec, register_training, training_names, training_spec

ROOT = Path(__file__).resolve().parents[1]

TOY = textwrap.dedent('''
    """A toy agent, declared as a package of agents declares one."""
    import json
    from dataclasses import asdict, dataclass
    from pathlib import Path

    from agents.kit import save_checkpoint
    from agents.kit.settings import SettingProblem, setting
    from agents.registry import TrainingSpec, register_training


    @dataclass(frozen=True)
    class ToyConfig:
        iterations: int = setting(3, "iterations to train")
        seed: int = setting(0, "the seed")
        width: int = 4  # not an option


    @dataclass(frozen=True)
    class ToyOptions:
        copies: int = setting(1, "copies of the policy to keep", metavar="N")


    def check(command):
        if command.copies > command.agent.iterations:
            raise SettingProblem("copies", "keep at most one copy per iteration")


    def run_training(agent, out, *, resume, tensorboard, progress, save_every, device, copies, threads=None):
        out = Path(out)
        out.mkdir(parents=True, exist_ok=True)
        (out / "config.json").write_text(json.dumps(asdict(agent)))
        save_checkpoint(out / "policy.pt", agent="toy", config=agent, model={},
                        extra={"iterations": agent.iterations})
        return {"agent": "toy", "iterations": agent.iterations, "resumed": resume, "copies": copies,
                "threads_asked": threads}


    register_training(TrainingSpec(
        "toy", "Toy", ToyConfig, "toyagent:run_training", summary="a toy agent (counts)",
        description="Train the toy agent.", describe=lambda agent: f"Toy for {agent.iterations} iterations",
        writes="folder for policy.pt and config.json", threads=1, options=ToyOptions, check=check))
''')

DRIVER = ("import sys, toyagent\nfrom cloudsim.cli import main\nsys.exit(main(sys.argv[1:]))\n")


def toy_cli(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess:
    (tmp_path / "toyagent.py").write_text(TOY)
    return subprocess.run([sys.executable, "-c", DRIVER, *argv], capture_output=True, text=True, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])})


def test_a_registered_training_is_a_command_with_its_options_resume_and_checks(tmp_path):
    listed = toy_cli(tmp_path, "train", "--help")
    assert listed.returncode == 0 and "a toy agent (counts)" in listed.stdout and "toy" in listed.stdout
    helped = toy_cli(tmp_path, "train", "toy", "--help")
    assert helped.returncode == 0
    for words in ("--iterations N", "--copies N", "copies of the policy to keep", "--out DIR", "--threads N",
                  "--device", "--resume", "folder for policy.pt and config.json", "Toy:"):
        assert words in helped.stdout, words
    assert "--width" not in helped.stdout  # a field made without `setting` is no option

    done = toy_cli(tmp_path, "train", "toy", "--out", "run", "--iterations", "2", "--copies", "2", "--threads", "3")
    assert done.returncode == 0, done.stderr
    assert "training Toy for 2 iterations into run" in done.stderr
    summary = json.loads(done.stdout)
    assert (summary["agent"], summary["iterations"], summary["resumed"], summary["copies"]) == ("toy", 2, False, 2)
    assert summary["threads_asked"] == 3
    assert json.loads((tmp_path / "run" / "config.json").read_text()) == {"iterations": 2, "seed": 0, "width": 4}

    # A resume reads the saved agent back and may lengthen it; a folder that holds it is named by other trainings.
    resumed = toy_cli(tmp_path, "train", "toy", "--out", "run", "--resume", "--iterations", "5")
    assert resumed.returncode == 0, resumed.stderr
    assert json.loads(resumed.stdout)["resumed"] is True and json.loads(resumed.stdout)["iterations"] == 5
    again = toy_cli(tmp_path, "train", "toy", "--out", "run")
    assert again.returncode == 2
    assert "cloudsim train toy --out run --resume" in again.stderr
    other = toy_cli(tmp_path, "train", "rlsk", "--out", "run", "--resume")
    assert other.returncode == 2 and "holds a toy training, not rlsk" in other.stderr, other.stderr

    # Its own check, and the settings' own, name the option.
    refused = toy_cli(tmp_path, "train", "toy", "--out", "new", "--iterations", "1", "--copies", "3")
    assert refused.returncode == 2
    assert refused.stderr.strip().endswith("--copies 3: keep at most one copy per iteration"), refused.stderr
    assert not (tmp_path / "new").exists()


def test_the_declared_trainings_are_the_five_papers_agents_each_with_its_threads():
    from agents.kit import TRAINING_THREADS

    assert training_names() == ("deepjs", "deepk8s", "deeprm", "deeprm-plus", "rlsk")
    # The counts their committed trainings ran on (docs/guide/train.md).
    assert dict(TRAINING_THREADS) == {"deepjs": 2, "deepk8s": 1, "deeprm": 1, "deeprm-plus": 2, "rlsk": 1}
    assert training_spec("deeprm-plus").checkpoint_agent == "deeprm"
    with pytest.raises(KeyError, match="no training 'nothing'; choose one of deepjs"):
        training_spec("nothing")


@pytest.mark.parametrize("change, message", [
    ({"name": "deeprm"}, "training 'deeprm' is already declared"),
    ({"train": "agents.toy"}, "train must be 'module:function'"),
    ({"threads": 0}, "threads must be a whole number >= 1"),
    ({"trains_on": "trace"}, "trains_on must be one of environment, chunks"),
])
def test_a_training_declared_wrongly_is_refused(change, message):
    spec = {"name": "unlisted", "title": "Unlisted", "config": object, "train": "agents.toy:train", "summary": "",
            "description": "", "describe": str, "writes": "", "threads": 1, **change}
    with pytest.raises(ValueError, match=message):
        register_training(TrainingSpec(**spec))
    assert "unlisted" not in training_names()
