"""Shared fixtures: small hand-made workloads, the real trace samples when present, optional packages.

A test that needs a package of an optional extra (setup.cfg's ``[options.extras_require]``) says so with
``@pytest.mark.needs("ray")``: without the package it is skipped, with the extra to install as the reason,
so that the README's set-up (``.[test]`` alone) runs green and every extra installed runs those tests too.
"""

from __future__ import annotations

import configparser
import gzip
import importlib.util
import os
import re
from pathlib import Path

import pytest

from cloudsim import ClusterSpec, JobSpec, TaskSpec

DATA = Path(os.environ.get("CLOUDSIM_DATA", Path(__file__).resolve().parents[2] / "shared" / "data"))
JOBS_CSV = DATA / "cloudsimpy" / "jobs.csv"


def _optional_packages() -> dict[str, str]:
    """Each package of an optional extra of setup.cfg (all but `test`), with its extra.

    Their import names are their distribution names (ray, tensorboard), so find_spec can look for them.
    """
    config = configparser.ConfigParser()
    config.read(Path(__file__).resolve().parents[1] / "setup.cfg")
    return {re.match(r"[A-Za-z0-9_.-]+", line).group(0): extra
            for extra, requirements in config["options.extras_require"].items() if extra != "test"
            for line in requirements.split("\n") if line.strip()}


OPTIONAL_PACKAGES = _optional_packages()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs(package): the test needs a package of an optional extra; "
                                       f"skipped without it (one of {', '.join(OPTIONAL_PACKAGES)})")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for mark in item.iter_markers("needs"):
        (package,) = mark.args
        if package not in OPTIONAL_PACKAGES:
            raise ValueError(f"{item.nodeid}: @pytest.mark.needs({package!r}) names no optional package; "
                             f"known: {', '.join(OPTIONAL_PACKAGES)} (declare it in an extra of setup.cfg)")
        if importlib.util.find_spec(package) is None:
            pytest.skip(f"{package} is not installed (pip install -e '.[{OPTIONAL_PACKAGES[package]}]')")


@pytest.fixture
def jobs_csv() -> Path:
    if not JOBS_CSV.is_file():
        pytest.skip(f"real CloudSimPy trace not found at {JOBS_CSV} (set CLOUDSIM_DATA to its folder)")
    return JOBS_CSV


def task(id, instances, cpu, memory, duration, parents=()):
    return TaskSpec(id=id, instances=instances, demand={"cpu": cpu, "memory": memory}, duration=duration,
                    parents=parents)


@pytest.fixture
def two_machines() -> ClusterSpec:
    """m0 = (cpu 4, memory 4), m1 = (cpu 2, memory 8)."""
    return ClusterSpec(("cpu", "memory"), ((4, 4), (2, 8)))


@pytest.fixture
def three_tasks() -> list[JobSpec]:
    """Job A at t=0: a1 (2 x (2, 1), 5 s), a2 (1 x (2, 4), 3 s); job B at t=1: b1 (1 x (1, 1), 2 s)."""
    return [
        JobSpec("A", 0, (task("a1", 2, 2, 1, 5), task("a2", 1, 2, 4, 3))),
        JobSpec("B", 1, (task("b1", 1, 1, 1, 2),)),
    ]


def write(tmp_path: Path, name: str, content: str | bytes) -> Path:
    """Write a test file: text as UTF-8, bytes as they are, a ``.gz`` name gzip-compressed."""
    path = tmp_path / name
    if name.endswith(".gz"):
        path.write_bytes(gzip.compress(content.encode("utf-8") if isinstance(content, str) else content))
    elif isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    return path


def work_in(tmp_path: Path, monkeypatch, jobs: str) -> Path:
    """Make ``tmp_path`` the current folder, with a cache of its own and the trace ``jobs`` at inputs/jobs.csv."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("CLOUDSIM_CACHE", str(tmp_path / "cache"))
    Path("inputs").mkdir()
    Path("inputs/jobs.csv").write_text(jobs)
    return tmp_path


@pytest.fixture
def cache(tmp_path: Path) -> Path:
    """A fresh Parquet cache folder for one test."""
    return tmp_path / "cache"


def cli(argv: list[str], capsys) -> tuple[int, str, str]:
    """Run the command line in this process: (exit status, stdout, stderr); argparse's usage errors too."""
    from cloudsim.cli import main

    try:
        code = main(argv)
    except SystemExit as done:
        code = done.code
    out, err = capsys.readouterr()
    return code, out, err
