"""CloudSimPy-compatible replays: tick 1, 5 machines of (64 cpu, 1 memory, 1 disk), chunks of 10 jobs.

Expected values are CloudSimPy's own output for chunks 0..4 of its jobs.csv
(makespan, average task completion, average task slowdown), as given in the
project's core issue.
"""

import pytest

from agents import make_broker
from cloudsim import ClusterSpec, simulate
from traces import job_chunk, load_cloudsimpy

CLOUDSIMPY = {
    ("first-fit", 0): (680, 62.057, 1.4293), ("tetris", 0): (689, 85.240, 1.9757),
    ("first-fit", 1): (413, 34.957, 1.3215), ("tetris", 1): (410, 34.957, 1.2109),
    ("first-fit", 2): (1124, 67.141, 2.5636), ("tetris", 2): (1099, 138.516, 17.1123),
    ("first-fit", 3): (781, 80.538, 2.1159), ("tetris", 3): (799, 112.907, 7.4485),
    ("first-fit", 4): (1110, 69.536, 1.5793), ("tetris", 4): (1342, 88.088, 3.2795),
}
SIZES = {0: (93, 4220), 1: (78, 2681), 2: (64, 4979), 3: (57, 4083), 4: (58, 5489)}


@pytest.fixture(scope="module")
def trace_jobs(request):
    from conftest import JOBS_CSV

    if not JOBS_CSV.is_file():
        pytest.skip(f"real CloudSimPy trace not found at {JOBS_CSV}")
    return load_cloudsimpy(JOBS_CSV)


@pytest.mark.parametrize("broker, chunk", sorted(CLOUDSIMPY))
def test_makespan_and_averages_equal_cloudsimpy(trace_jobs, broker, chunk):
    jobs = job_chunk(trace_jobs, 10, chunk)
    cluster = ClusterSpec.uniform(5, {"cpu": 64, "memory": 1, "disk": 1})
    summary = simulate(cluster, jobs, make_broker(broker), tick=1).summary
    makespan, completion, slowdown = CLOUDSIMPY[broker, chunk]
    assert (summary["tasks"], summary["instances"]) == SIZES[chunk]
    assert summary["makespan"] == makespan
    assert summary["avg_completion"] == pytest.approx(completion, abs=5e-4)
    assert summary["avg_slowdown"] == pytest.approx(slowdown, abs=5e-5)
