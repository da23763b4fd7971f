"""Which code made a result: `cloudsim --version`, and the version in every run's summary.json."""

import json
import subprocess
import sys

import cloudsim
from agents import make_broker
from cloudsim import ClusterSpec, JobSpec, TaskSpec, simulate


def test_the_command_line_prints_the_package_version():
    out = subprocess.run([sys.executable, "-m", "cloudsim", "--version"], capture_output=True, text=True)
    assert out.returncode == 0 and out.stdout.strip() == f"cloudsim {cloudsim.__version__}"


def test_a_results_folder_names_the_version_that_wrote_it(tmp_path):
    jobs = [JobSpec(0, 0.0, (TaskSpec(0, 1, {"cpu": 1.0}, 2.0),))]
    result = simulate(ClusterSpec.uniform(1, {"cpu": 1.0}), jobs, make_broker("first-fit"))
    result.to_parquet(tmp_path)
    written = json.loads((tmp_path / "summary.json").read_text())
    assert written["cloudsim_version"] == cloudsim.__version__
    assert written["makespan"] == 2.0 and "cloudsim_version" not in result.summary


def test_a_trained_checkpoint_names_the_version_that_wrote_it(tmp_path):
    from dataclasses import dataclass

    from agents.kit import read_checkpoint, save_checkpoint

    @dataclass(frozen=True)
    class Settings:
        rate: float = 0.1

    save_checkpoint(tmp_path / "policy.pt", agent="toy", config=Settings(), model={})
    assert read_checkpoint(tmp_path / "policy.pt", agent="toy")["cloudsim_version"] == cloudsim.__version__
