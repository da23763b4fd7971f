"""The grid signals and workloads of Wiesner et al., "Let's Wait Awhile: How Temporal Workload Shifting Can Reduce
Carbon Emissions in the Cloud" (Middleware 2021): what its two scenarios run on, to reproduce them.

The three regions' signals are the study's datasets (``carbon/`` of the data folder, `traces.data.data_folder`),
read as the study reads them (`study_signal`): the rows at minutes 0 and 30 only. Scenario I's workload is a
30-minute job every day at 01:00 (`periodic_jobs`), each submitted when its shifting window opens.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from cloudsim.engine.carbon import GridSignal, SignalError
from cloudsim.engine.specs import JobSpec, TaskSpec
from traces.data import data_folder

__all__ = ["REGIONS", "STUDY_START", "periodic_jobs", "study_signal"]

REGIONS = {"gb": ("Great Britain", "gb_ci.csv"), "de": ("Germany", "ger_ci.csv"), "fr": ("France", "fr_ci.csv")}
"""The study's regions: name and file in the data folder's ``carbon/``."""
STUDY_START = dt.datetime(2020, 1, 1)
"""Where the study's signal and year begin."""
HALF_HOUR = 1800.0


def study_signal(region: str, start: dt.datetime = STUDY_START, folder: str | Path | None = None) -> GridSignal:
    """``region``'s signal (one of `REGIONS`) read at minutes 0 and 30, run time 0 at ``start``, from ``start`` on
    (the study's signal begins on 2020-01-01 00:00; the files hold rows from 2019-12-20, which an earlier
    ``start`` keeps). A missing file is a `SignalError` saying where it was looked for."""
    if region not in REGIONS:
        raise ValueError(f"unknown region {region!r}; choose one of {', '.join(REGIONS)}")
    path = Path(folder) if folder is not None else data_folder() / "carbon"
    path = path / REGIONS[region][1]
    if not path.is_file():
        raise SignalError(f"{path}: no such file; the study's signals are in the data folder's carbon/ (set "
                          "CLOUDSIM_DATA to the folder that holds carbon/)")
    return GridSignal.read(path, start).every(HALF_HOUR).after(0.0)


def periodic_jobs(signal: GridSignal, window: float, *, first: dt.date = STUDY_START.date(), days: int = 365,
                  at: float = 3600.0, duration: float = HALF_HOUR) -> list[JobSpec]:
    """Scenario I: a job of one instance (cpu 1) running ``duration`` seconds, due at ``at`` seconds past
    midnight of each of ``days`` days from ``first``, submitted ``window`` seconds earlier, when its shifting
    window (due time +- ``window``) opens. A job whose window would open before ``signal`` begins is left out,
    as the study's simulator cannot run it (its mean still divides by every day)."""
    jobs = []
    for day in range(days):
        due = (dt.datetime.combine(first, dt.time()) + dt.timedelta(days=day, seconds=at) - signal.origin)
        opens = due.total_seconds() - window
        if opens >= signal.times[0]:
            jobs.append(JobSpec(f"{first + dt.timedelta(days=day)}", opens,
                                (TaskSpec("job", 1, {"cpu": 1.0}, duration),)))
    return jobs
