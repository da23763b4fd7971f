"""Power models of machines and the exact energy (and carbon) of a run.

A machine draws ``watts(u)`` while its cpu utilisation is ``u`` (used cpu / its cpu capacity): a `LinearPower`
from idle to full power, or a `TablePower` of the watts at 0, 10, ..., 100 % load, interpolated linearly, as
SPECpower_ssj2008 results are published. `DEFAULT_POWER` is one such result. A machine's utilisation changes only
when an instance group starts or ends, so its power is a step function of time: a run's energy is the sum over
its machines' steps of watts x seconds, with no sampling (`meter`), and its carbon, with a grid signal
(`cloudsim.engine.carbon.GridSignal`), the sum over the steps of both of watts x intensity x seconds. Every machine
is powered over the whole run, [0, makespan] (or a longer horizon): idle before its first instance and after its
last.

A job's energy is its instances' share of their machines' power while they run: at each instant a machine's whole
draw (idle included) is split among the instances running on it by their cpu demand, so an instance's energy is
its cpu demand times the integral of the machine's watts per cpu in use over its run. A machine's draw while
nothing runs on it belongs to no job (``idle_kwh``); the jobs' energy and that add up to the run's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

import numpy as np

from cloudsim.engine.carbon import JOULES_PER_KWH
from cloudsim.engine.checks import number_problem

if TYPE_CHECKING:
    from cloudsim.engine.carbon import GridSignal
    from cloudsim.engine.metrics import EpisodeResult

__all__ = ["DEFAULT_POWER", "ENERGY_KEYS", "EnergyReport", "LinearPower", "PowerModel", "TablePower", "meter",
           "parse_power"]



class PowerModel(Protocol):
    """A machine's power draw by its cpu utilisation."""

    def watts(self, utilisation: np.ndarray) -> np.ndarray:
        """The watts drawn at each utilisation (fractions in [0, 1])."""


def _check_watts(name: str, values: tuple[float, ...]) -> None:
    for value in values:
        problem = number_problem(value, at_least=0)
        if problem is not None:
            raise ValueError(f"{name}: watts {problem}, got {value!r}")
    if any(b < a for a, b in zip(values, values[1:])):
        raise ValueError(f"{name}: the watts must not fall as the load rises, got {', '.join(map(str, values))}")


@dataclass(frozen=True)
class LinearPower:
    """``idle`` watts at no load, ``peak`` at full load, linear between: ``idle + (peak - idle) x u``."""

    idle: float
    peak: float

    def __post_init__(self) -> None:
        _check_watts("linear power (IDLE,MAX)", (self.idle, self.peak))

    def watts(self, utilisation: np.ndarray) -> np.ndarray:
        return self.idle + (self.peak - self.idle) * np.clip(utilisation, 0.0, 1.0)

    def __str__(self) -> str:
        return f"linear:{self.idle:g},{self.peak:g}"


@dataclass(frozen=True)
class TablePower:
    """The watts at 0, 10, ..., 100 % load (11 values, not falling), linear between them."""

    table: tuple[float, ...]
    name: str = ""

    def __post_init__(self) -> None:
        if len(self.table) != 11:
            raise ValueError(f"a power table has 11 watts, at 0, 10, ..., 100 % load; got {len(self.table)}")
        _check_watts("power table", tuple(self.table))

    def watts(self, utilisation: np.ndarray) -> np.ndarray:
        return np.interp(np.clip(utilisation, 0.0, 1.0), np.linspace(0.0, 1.0, 11), np.asarray(self.table, float))

    def __str__(self) -> str:
        return self.name or "table:" + ",".join(f"{w:g}" for w in self.table)


DEFAULT_POWER = TablePower((58.4, 98, 109, 118, 128, 140, 153, 170, 189, 205, 222), name="default")
"""An IBM System x3550 M3 (2 x Xeon X5675, 12 cores, 16 GB): the watts at 0, 10, ..., 100 % load of its
SPECpower_ssj2008 result (spec.org/power_ssj2008/results/res2011q2/power_ssj2008-20110406-00368.html), a
two-socket server of the kind the Alibaba clusters hold."""


def parse_power(text: str) -> LinearPower | TablePower:
    """``--power``: ``linear:IDLE,MAX``, ``table:W0,W10,...,W100`` (watts, every machine) or ``default``
    (`DEFAULT_POWER`); a ValueError saying the forms otherwise."""
    kind, _, rest = text.strip().partition(":")
    forms = "give linear:IDLE,MAX, table:W0,W10,...,W100 (11 watts) or default"
    if kind == "default" and not rest:
        return DEFAULT_POWER
    if kind not in ("linear", "table"):
        raise ValueError(f"{text!r} is no power model; {forms}")
    try:
        numbers = tuple(float(part) for part in rest.split(","))
    except ValueError:
        raise ValueError(f"{text!r}: the watts must be numbers; {forms}") from None
    if kind == "linear":
        if len(numbers) != 2:
            raise ValueError(f"{text!r}: a linear model has two watts, idle and full; {forms}")
        return LinearPower(*numbers)
    return TablePower(numbers)


ENERGY_KEYS = ("energy_kwh", "carbon_kg", "carbon_intensity_mean")
"""What `meter` adds to a run's summary (the carbon ones with a grid signal only)."""


@dataclass(frozen=True)
class EnergyReport:
    """A run's energy: ``machine_kwh`` per machine (in the cluster's order), their sum ``energy_kwh``; with a grid
    signal ``carbon_kg`` and the mean intensity of the energy used (gCO2e/kWh), else NaN; ``power``: the cluster's
    watts as a step function, ``(times, watts)``, each value holding until the next time and the last until the
    end of the metering (the makespan, or `meter`'s horizon); ``job_kwh``: each job's share (the rows of the run's
    ``jobs`` table), and ``idle_kwh`` what the
    machines drew while nothing ran on them (the two add up to ``energy_kwh``)."""

    machine_kwh: np.ndarray
    energy_kwh: float
    carbon_kg: float
    carbon_intensity_mean: float
    power: tuple[np.ndarray, np.ndarray]
    job_kwh: np.ndarray
    idle_kwh: float

    def summary(self) -> dict[str, float]:
        """The summary's energy keys (`ENERGY_KEYS`): the carbon ones only where a signal gave them."""
        shown = {"energy_kwh": self.energy_kwh}
        if not np.isnan(self.carbon_kg):
            shown.update(carbon_kg=self.carbon_kg, carbon_intensity_mean=self.carbon_intensity_mean)
        return shown


def meter(result: EpisodeResult, power: PowerModel, signal: GridSignal | None = None,
          horizon: float | None = None) -> EnergyReport:
    """The exact energy of the run ``result`` with every machine drawing ``power`` by its cpu utilisation over
    [0, ``horizon``] (default: the makespan; idle after it), and with ``signal`` its carbon. Runs of one workload
    metered over one horizon (`energy_horizon`) compare fairly: a broker that finishes earlier does not save the
    idle draw of the time the others take. A cluster without a cpu resource, or a horizon before the makespan, is a
    ValueError."""
    if "cpu" not in result.resources:
        raise ValueError(f"the power models read cpu utilisation; this cluster's resources are "
                         f"{', '.join(result.resources)}: give the machines a cpu capacity")
    end = float(result.makespan)  # when the machines stop drawing
    if horizon is not None:
        if not horizon >= end:
            raise ValueError(f"the energy horizon {horizon!r} is before the run's makespan {end}")
        end = float(horizon)
    machines = len(result.capacity)
    idle = float(power.watts(np.zeros(1))[0])
    steps = result.machine_utilisation()
    machine = steps.machine.to_numpy(dtype=np.int64)
    time = steps.time.to_numpy(dtype=float)
    cpu = np.nan_to_num(steps.cpu.to_numpy(dtype=float))
    if len(steps):
        order = np.lexsort((time, machine))
        machine, time, cpu = machine[order], time[order], cpu[order]
    watts = power.watts(cpu)
    # Each row holds until the machine's next row, its last until the end; before a machine's first row it
    # is idle from time 0.
    first = np.ones(len(machine), dtype=bool)
    first[1:] = machine[1:] != machine[:-1]
    last = np.ones(len(machine), dtype=bool)
    last[:-1] = first[1:]
    until = np.where(last, end, np.roll(time, -1))
    joules = np.full(machines, idle * end)
    np.add.at(joules, machine[first], -idle * (end - time[first]))  # idle only until its first row
    np.add.at(joules, machine, watts * (until - time))
    # The cluster's power: every machine idle from 0, then each row's change of its machine's watts.
    before = np.where(first, idle, np.roll(watts, 1))
    times = np.concatenate([[0.0], time])
    deltas = np.concatenate([[idle * machines], watts - before])
    order = np.argsort(times, kind="stable")
    change_times, start = np.unique(times[order], return_index=True)
    cluster_watts = np.cumsum(np.add.reduceat(deltas[order], start))
    energy_kwh = float(joules.sum()) / JOULES_PER_KWH
    # What the machines drew while nothing ran on them: before their first row (or the whole run), and in the rows
    # without cpu in use.
    idle_joules = idle * (end * (machines - int(first.sum())) + float(time[first].sum()))
    idle_joules += float(np.sum((watts * (until - time))[cpu <= 0]))
    job_kwh = _job_energy(result, machine, time, cpu, watts, until, first) / JOULES_PER_KWH
    carbon_kg = carbon_mean = float("nan")
    if signal is not None:
        grams = signal.grams(change_times, cluster_watts, end) if end > 0 else 0.0
        carbon_kg = grams / 1000.0
        carbon_mean = grams / energy_kwh if energy_kwh > 0 else float("nan")
    return EnergyReport(joules / JOULES_PER_KWH, energy_kwh, carbon_kg, carbon_mean, (change_times, cluster_watts),
                        job_kwh, idle_joules / JOULES_PER_KWH)


def _job_energy(result: EpisodeResult, machine: np.ndarray, time: np.ndarray, cpu: np.ndarray, watts: np.ndarray,
                until: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Each job's joules (the rows of ``result.jobs``): the sum over its instance groups of their cpu demand times
    the integral over their run of their machine's watts per cpu in use (see the module's docstring). The
    machines' steps are given sorted by machine, then time (``first``: a machine's first row)."""
    import pandas as pd

    capacity = result.capacity["cpu"].to_numpy(dtype=float)
    used = cpu * capacity[machine]
    per_cpu = np.divide(watts, used, out=np.zeros_like(watts), where=used > 0)
    held = per_cpu * (until - time)
    # The integral of watts per cpu from a machine's first row to each of its rows.
    machine_start = np.maximum.accumulate(np.where(first, np.arange(len(machine)), 0))
    before = np.cumsum(held) - held
    before -= before[machine_start]
    groups = result.groups
    on = groups.machine.to_numpy(dtype=np.int64)
    start = groups.start.to_numpy(dtype=float)
    end = np.where(groups.end.isna(), result.makespan, groups.end).astype(float)
    rows = pd.DataFrame({"machine": machine, "time": time, "row": np.arange(len(machine))})

    def integral(at: np.ndarray) -> np.ndarray:
        """The integral up to ``at`` on each group's machine: from the machine's last row at or before it (a group
        runs where its machine has rows)."""
        asked = pd.DataFrame({"machine": on, "time": at, "query": np.arange(len(at))}).sort_values("time")
        row = pd.merge_asof(asked, rows.sort_values("time"), on="time", by="machine").sort_values("query")
        row = row["row"].to_numpy(dtype=np.int64)
        return before[row] + per_cpu[row] * (at - time[row])

    demand = result.tasks["demand_cpu"].to_numpy(dtype=float)[groups.task.to_numpy()] * groups.instances.to_numpy()
    joules = demand * (integral(end) - integral(start)) if len(groups) else np.zeros(0)
    by_job = pd.Series(joules, index=pd.Index(groups.job_id.to_numpy(), dtype=object)).groupby(level=0).sum()
    return by_job.reindex(pd.Index(result.jobs.job_id.to_numpy(), dtype=object), fill_value=0.0).to_numpy()
