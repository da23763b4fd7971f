"""The grid signals and workloads of Wiesner et al., "Let's Wait Awhile: How Temporal Workload Shifting Can Reduce
Carbon Emissions in the Cloud" (Middleware 2021): what its two scenarios run on, to reproduce them.

The three regions' signals are the study's datasets (``carbon/`` of the data folder, `traces.data.data_folder`),
read as the study reads them (`study_signal`): the rows at minutes 0 and 30 only. Scenario I's workload is a
30-minute job every day at 01:00 (`periodic_jobs`), each submitted when its shifting window opens. Scenario II's
is 3,387 machine-learning jobs of 4 to 89.5 hours arriving on 2020's workdays (`ml_jobs`, drawn as the study's
code draws them, so the same jobs come out), each with a deadline by one of the study's two rules
(`next_workday`, `semi_weekly`).
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cloudsim.engine.carbon import GridSignal, SignalError
from cloudsim.engine.specs import JobSpec, TaskSpec
from traces.data import data_folder

__all__ = ["DEADLINE_RULES", "MlJob", "REGIONS", "STUDY_START", "ml_jobs", "ml_workload", "next_workday",
           "periodic_jobs", "semi_weekly", "study_signal"]

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


ML_JOBS = 3387
"""Scenario II's jobs in 2020."""
ML_STARTS = np.arange(540, 1011, 30)
"""The minutes past midnight a job may arrive at: 09:00 to 16:30 in half hours."""
ML_DURATIONS = np.arange(240, 5371, 30)
"""The minutes a job may run: 4 h to 89.5 h in half hours."""
OPENS, CLOSES = dt.time(9), dt.time(17)


@dataclass(frozen=True)
class MlJob:
    """One of Scenario II's jobs: when it arrives and how long it runs (``minutes``)."""

    arrival: dt.datetime
    minutes: int

    @property
    def end(self) -> dt.datetime:
        """When it ends if it runs as it arrives (the baseline)."""
        return self.arrival + dt.timedelta(minutes=self.minutes)


def ml_jobs(year: int = 2020, jobs: int = ML_JOBS, seed: int = 0) -> list[MlJob]:
    """Scenario II's jobs, drawn as the study's code draws them with numpy's ``default_rng(seed)``: the count of
    each workday of ``year`` (a multinomial of ``jobs`` over equal shares), then for each day in date order its
    arrival minutes (`ML_STARTS`, as many as its jobs, sorted; a weekend day has none), then every job's duration
    at once (`ML_DURATIONS`); job k has the k-th arrival in date order and the k-th duration."""
    rng = np.random.default_rng(seed)
    days = [dt.date(year, 1, 1) + dt.timedelta(days=k) for k in range((dt.date(year + 1, 1, 1)
                                                                        - dt.date(year, 1, 1)).days)]
    workdays = [day for day in days if day.weekday() < 5]
    counts = dict(zip(workdays, rng.multinomial(jobs, [1 / len(workdays)] * len(workdays)).tolist()))
    arrivals = []
    for day in days:
        minutes = np.sort(rng.choice(ML_STARTS, counts.get(day, 0)))
        arrivals += [dt.datetime.combine(day, dt.time()) + dt.timedelta(minutes=int(m)) for m in minutes]
    durations = rng.choice(ML_DURATIONS, jobs)
    return [MlJob(arrival, int(minutes)) for arrival, minutes in zip(arrivals, durations.tolist())]


def next_workday(end: dt.datetime) -> dt.datetime:
    """The study's "next workday" deadline of a job that would end at ``end``: one ending on a Saturday may end on
    Monday at 09:00; on a Sunday or after 17:00, the next day at 09:00; before 09:00, that day at 09:00; otherwise
    it has no slack (``end`` itself)."""
    day = end.date()
    if end.weekday() == 5:
        return dt.datetime.combine(day + dt.timedelta(days=2), OPENS)
    if end.weekday() == 6 or end.time() > CLOSES:
        return dt.datetime.combine(day + dt.timedelta(days=1), OPENS)
    if end.time() < OPENS:
        return dt.datetime.combine(day, OPENS)
    return end


def semi_weekly(end: dt.datetime) -> dt.datetime:
    """The study's "semi-weekly" deadline of a job that would end at ``end``: the first Monday or Thursday 09:00
    at or after it."""
    for ahead in range(8):
        candidate = dt.datetime.combine(end.date() + dt.timedelta(days=ahead), OPENS)
        if candidate.weekday() in (0, 3) and candidate >= end:
            return candidate
    raise AssertionError("a Monday or a Thursday comes within a week")


DEADLINE_RULES = {"next-workday": next_workday, "semi-weekly": semi_weekly}
"""Scenario II's deadline rules by name."""


def ml_workload(signal: GridSignal, rule: str | None = None, jobs: list[MlJob] | None = None) -> list[JobSpec]:
    """Scenario II's jobs (`ml_jobs` unless given) as cloudsim jobs in ``signal``'s run time: one instance (cpu 1)
    each, arriving and running as drawn, with the deadline ``rule`` gives (one of `DEADLINE_RULES`; None: none)."""
    if rule is not None and rule not in DEADLINE_RULES:
        raise ValueError(f"unknown deadline rule {rule!r}; choose one of {', '.join(DEADLINE_RULES)}")

    def seconds(when: dt.datetime) -> float:
        return (when - signal.origin).total_seconds()

    return [JobSpec(f"ml-{k}", seconds(job.arrival), (TaskSpec("train", 1, {"cpu": 1.0}, job.minutes * 60.0),),
                    deadline=None if rule is None else seconds(DEADLINE_RULES[rule](job.end)))
            for k, job in enumerate(ml_jobs() if jobs is None else jobs)]
