"""The results digest: a fixed set of runs over every loader and broker family, identical to the committed one.

A difference means a result changed: if the change is meant, regenerate the digest with
``python benchmarks/digest.py --write`` and say in the change which results moved and why.
"""

import copy

import pytest

from cloudsim.run import digest
from conftest import DATA

COMMITTED = digest.read(__import__("pathlib").Path(__file__).with_name("digest.json"))


@pytest.fixture(scope="module")
def computed():
    return digest.compute(DATA)


def test_the_digest_covers_every_loader_and_broker_family():
    names = [run.name for run in digest.DIGEST_RUNS]
    assert sorted(COMMITTED["runs"]) == sorted(names)
    for family in ("cloudsimpy", "v2017", "v2018", "swf", "openb-replay", "openb-fill", "deeprm", "deeprm-env",
                   "deepk8s", "rlsk"):
        assert any(name.startswith(family) for name in names), family
    for broker in ("first-fit", "tetris", "easy", "sjf", "fgd", "gpu-best-fit", "deepjs", "deeprm", "deeprm-plus",
                   "deepk8s", "rlsk"):
        assert any(run.broker == broker for run in digest.DIGEST_RUNS), broker
    assert any(run.simulation.get("mtbf") for run in digest.DIGEST_RUNS)  # machine failures


def test_every_run_gives_the_committed_results(computed):
    if computed["missing"]:
        pytest.skip(f"the real samples are absent: {computed['missing']}")
    assert digest.differences(COMMITTED, computed) == []


def test_a_difference_names_the_run_the_table_the_row_and_both_values():
    changed = copy.deepcopy(COMMITTED)
    tetris = changed["runs"]["cloudsimpy-jobs35-37-tetris"]
    start = tetris["groups"]["columns"].index("start")
    was = tetris["groups"]["rows"][3][start]
    tetris["groups"]["rows"][3][start] = was + 1.0
    changed["runs"]["swf-jobs0-30-sjf"]["summary"]["makespan"] = -1.0
    del changed["runs"]["rlsk-60-rlsk"]
    lines = digest.differences(COMMITTED, changed)
    assert f"cloudsimpy-jobs35-37-tetris: groups row 3, column 'start': committed {was!r}, now {was + 1.0!r}" in \
        lines[lines.index(next(line for line in lines if line.startswith("cloudsimpy-jobs35-37-tetris")))][:200]
    assert any(line.startswith("swf-jobs0-30-sjf: summary['makespan']: committed") and line.endswith("now -1.0")
               for line in lines)
    assert "rlsk-60-rlsk: in the committed digest, not computed now" in lines


def test_write_and_read_keep_every_value_exactly(tmp_path):
    path = digest.write(COMMITTED, tmp_path / "d.json")
    assert digest.differences(COMMITTED, digest.read(path)) == []
    assert not list(tmp_path.glob(".*partial"))
