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

A machine with devices (GPUs) may draw watts per device too (`GpuPower`): ``idle`` each, and up to ``busy`` in
proportion to the share of it in use. The devices' idle draw is part of the machine's (split as above while
something runs on it); the draw above idle of the devices an instance holds is its own job's. Machines may differ:
`MachinePower` is one machine's cpu model and GPU watts, and a power file (`read_power_file`) gives them by
machine shape, matched on capacities, device counts or attributes (a GPU model).

A streamed run keeps no result to meter: a `StreamMeter` meters its groups as they are written out, holding only
the changes of power still to come.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol, Sequence

import numpy as np

from cloudsim.engine.carbon import JOULES_PER_KWH, read_csv_rows
from cloudsim.engine.checks import number_problem
from cloudsim.engine.specs import DEVICE_MILLI

if TYPE_CHECKING:
    from cloudsim.engine.carbon import GridSignal
    from cloudsim.engine.metrics import EpisodeResult
    from cloudsim.engine.specs import ClusterSpec

__all__ = ["DEFAULT_POWER", "ENERGY_KEYS", "EnergyReport", "GpuPower", "LinearPower", "MachinePower", "PowerByShape",
           "PowerModel", "StreamMeter", "TablePower", "meter", "names_power_file", "parse_power",
           "read_power", "read_power_file"]


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


@dataclass(frozen=True)
class GpuPower:
    """Watts per device (GPU): ``idle`` with nothing on it, ``busy`` wholly in use, linear in the share in use
    (an instance holding 500 of its `DEVICE_MILLI` milli-units adds half of ``busy - idle``)."""

    idle: float
    busy: float

    def __post_init__(self) -> None:
        _check_watts("GPU power (IDLE,BUSY)", (self.idle, self.busy))

    def __str__(self) -> str:
        return f"gpu:{self.idle:g},{self.busy:g}"


@dataclass(frozen=True)
class MachinePower:
    """One machine's power: its draw by cpu utilisation (``cpu``) and, if it holds devices, watts per GPU."""

    cpu: PowerModel
    gpu: GpuPower | None = None

    def for_cluster(self, cluster: ClusterSpec) -> tuple[MachinePower, ...]:
        """This power for every machine of ``cluster`` (a ValueError if it has no cpu resource)."""
        _require_cpu(cluster.resources)
        return (self,) * cluster.machines

    def __str__(self) -> str:
        return str(self.cpu) + ("" if self.gpu is None else f"+{self.gpu}")


def _require_cpu(resources: Sequence[str]) -> None:
    if "cpu" not in resources:
        raise ValueError(f"the power models read cpu utilisation; this cluster's resources are "
                         f"{', '.join(resources)}: give the machines a cpu capacity")


POWER_FORMS = ("linear:IDLE,MAX, table:W0,W10,...,W100 (11 watts) or default, each optionally followed by "
               "+gpu:IDLE,BUSY (watts per GPU)")
"""The forms of a power model (`parse_power`), as its errors and the options' help say them."""


def parse_power(text: str) -> MachinePower:
    """A machine's power from its text: ``linear:IDLE,MAX``, ``table:W0,W10,...,W100`` or ``default``
    (`DEFAULT_POWER`), optionally followed by ``+gpu:IDLE,BUSY`` (`GpuPower`); a ValueError saying the forms
    otherwise."""
    cpu_text, plus, gpu_text = text.strip().partition("+")
    gpu = None
    if plus:
        kind, _, rest = gpu_text.strip().partition(":")
        watts = _watts(text, rest) if kind == "gpu" else ()
        if len(watts) != 2:
            raise ValueError(f"{text!r}: after '+' give gpu:IDLE,BUSY, the watts of one GPU idle and wholly busy")
        gpu = GpuPower(*watts)
    kind, _, rest = cpu_text.strip().partition(":")
    if kind == "default" and not rest:
        return MachinePower(DEFAULT_POWER, gpu)
    if kind not in ("linear", "table"):
        raise ValueError(f"{text!r} is no power model; give {POWER_FORMS}")
    numbers = _watts(text, rest)
    if kind == "linear":
        if len(numbers) != 2:
            raise ValueError(f"{text!r}: a linear model has two watts, idle and full; give {POWER_FORMS}")
        return MachinePower(LinearPower(*numbers), gpu)
    return MachinePower(TablePower(numbers), gpu)


def _watts(text: str, numbers: str) -> tuple[float, ...]:
    try:
        return tuple(float(part) for part in numbers.split(","))
    except ValueError:
        raise ValueError(f"{text!r}: the watts must be numbers; give {POWER_FORMS}") from None


@dataclass(frozen=True)
class PowerByShape:
    """Machines' power by their shape, read from a power file (`read_power_file`): rows of (what a machine must
    match, its power), the first row a machine matches giving its power. A match is a tuple of (column, value):
    the column a resource of the cluster (its capacity, a number), ``devices`` (how many it holds) or an
    attribute (its text, e.g. a GPU model)."""

    source: str
    rows: tuple[tuple[int, tuple[tuple[str, str], ...], MachinePower], ...]  # (line, match, power)

    def for_cluster(self, cluster: ClusterSpec) -> tuple[MachinePower, ...]:
        """Each machine's power; a ValueError naming the column no machine has, or the first machine no row
        matches (or saying that the cluster has no cpu resource)."""
        _require_cpu(cluster.resources)
        capacity = cluster.capacity_array()
        attributes = dict(cluster.attributes)
        columns = {column for _, match, _ in self.rows for column, _ in match}
        for column in sorted(columns):
            if column not in cluster.resources and column != "devices" and column not in attributes:
                raise ValueError(f"{self.source}: column {column!r} is no resource ({', '.join(cluster.resources)}), "
                                 f"devices or machine attribute ({', '.join(attributes) or 'none'}) of the cluster; "
                                 "rename or drop it")
        chosen: list[MachinePower | None] = [None] * cluster.machines
        for line, match, power in self.rows:
            fits = np.array([model is None for model in chosen])
            for column, value in match:
                if column in cluster.resources or column == "devices":
                    number = _match_number(self.source, line, column, value)
                    have = cluster.device_counts() if column == "devices" else \
                        capacity[:, cluster.resources.index(column)]
                    fits &= have == number
                else:
                    fits &= np.array(attributes[column]) == value
            for machine in np.flatnonzero(fits):
                chosen[machine] = power
        missing = [m for m, model in enumerate(chosen) if model is None]
        if missing:
            m = missing[0]
            shape = ", ".join([*(f"{name} {value:g}" for name, value in zip(cluster.resources, capacity[m])),
                               *([f"devices {cluster.device_counts()[m]}"] if cluster.devices else []),
                               *(f"{name} {values[m]!r}" for name, values in attributes.items())])
            raise ValueError(f"{self.source}: no row matches machine {cluster.machine_ids[m]!r} ({shape}; "
                             f"{len(missing)} machine(s) unmatched); add a row for it, or a last row with every "
                             "match column blank (any machine)")
        return tuple(chosen)


def names_power_file(text: str) -> bool:
    """Whether ``--power`` text names a power file: it is none of the `parse_power` forms."""
    return text.strip().partition(":")[0].partition("+")[0] not in ("linear", "table", "default")


def read_power(text: str) -> MachinePower | PowerByShape:
    """``--power``: a `parse_power` form (every machine), or else the path of a power file (`read_power_file`); a
    ValueError naming the form or the file otherwise."""
    if not names_power_file(text):
        return parse_power(text)
    if not Path(text).is_file():
        raise ValueError(f"{text!r} is no power model, nor a power file; give {POWER_FORMS}, or a power file (a CSV "
                         "with a power column per machine shape)")
    return read_power_file(text)


def _match_number(source: str, line: int, column: str, value: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise ValueError(f"{source} line {line} column {column}: {value!r} is no number; a machine's {column} is "
                         "matched by a number (or a blank cell: any)") from None


def read_power_file(path: str | Path) -> PowerByShape:
    """A power file: a CSV whose ``power`` column holds a `parse_power` form (quoted, as CSV needs for its commas)
    and whose other columns say what a machine must match (a blank cell: anything), e.g.::

        cpu,model,power
        96,,default
        64,V100M16,"linear:120,350+gpu:30,300"
        ,,"linear:100,250"

    A ValueError names the file, line and column of anything else."""
    path = Path(path)
    rows = read_csv_rows(path, "a power file, a CSV with a power column")
    header = [name.strip() for name in rows[0]] if rows else []
    if "power" not in header or len(set(header)) != len(header) or not all(header):
        raise ValueError(f"{path} line 1: the header names the match columns and 'power', each once (e.g. "
                         f"cpu,power), got {','.join(header) or 'nothing'!r}")
    read = []
    for line, row in enumerate(rows[1:], start=2):
        if not row or all(not field.strip() for field in row):
            continue
        if len(row) != len(header):
            raise ValueError(f"{path} line {line}: {len(row)} field(s) for the header's {len(header)}; quote a power "
                             'model with commas ("linear:100,250")')
        cells = dict(zip(header, (field.strip() for field in row)))
        try:
            power = parse_power(cells.pop("power"))
        except ValueError as error:
            raise ValueError(f"{path} line {line} column power: {error}") from None
        read.append((line, tuple((column, value) for column, value in cells.items() if value), power))
    if not read:
        raise ValueError(f"{path}: holds no rows; give a row per machine shape")
    return PowerByShape(str(path), tuple(read))


ENERGY_KEYS = ("energy_kwh", "carbon_kg", "carbon_intensity_mean")
"""What `meter` adds to a run's summary (the carbon ones with a grid signal only)."""


@dataclass(frozen=True)
class EnergyReport:
    """A run's energy: ``machine_kwh`` per machine (in the cluster's order), their sum ``energy_kwh``; with a grid
    signal ``carbon_kg`` and the mean intensity of the energy used (gCO2e/kWh), else NaN; ``power``: the cluster's
    watts as a step function, ``(times, watts)``, each value holding until the next time and the last until the
    end of the metering (the makespan, or `meter`'s horizon); ``group_kwh``: each instance group's share (the rows
    of the run's ``groups`` table), ``job_kwh`` each job's (its groups', the rows of ``jobs``), and ``idle_kwh``
    what the machines drew while nothing ran on them (the jobs' and that add up to ``energy_kwh``)."""

    machine_kwh: np.ndarray
    energy_kwh: float
    carbon_kg: float
    carbon_intensity_mean: float
    power: tuple[np.ndarray, np.ndarray]
    job_kwh: np.ndarray
    idle_kwh: float
    group_kwh: np.ndarray

    def summary(self) -> dict[str, float]:
        """The summary's energy keys (`ENERGY_KEYS`): the carbon ones only where a signal gave them."""
        shown = {"energy_kwh": self.energy_kwh}
        if not np.isnan(self.carbon_kg):
            shown.update(carbon_kg=self.carbon_kg, carbon_intensity_mean=self.carbon_intensity_mean)
        return shown


def meter(result: EpisodeResult, power: PowerModel | MachinePower | Sequence[MachinePower],
          signal: GridSignal | None = None, horizon: float | None = None) -> EnergyReport:
    """The exact energy of the run ``result`` with its machines drawing ``power`` (one `PowerModel` or
    `MachinePower` for every machine, or a `MachinePower` per machine, as `PowerByShape.for_cluster` gives them)
    over [0, ``horizon``] (default: the makespan; idle after it), and with ``signal`` its carbon. Runs of one
    workload metered over one horizon (`energy_horizon`) compare fairly: a broker that finishes earlier does not
    save the idle draw of the time the others take. A cluster without a cpu resource, a horizon before the
    makespan, or a power per machine for another number of machines is a ValueError."""
    _require_cpu(result.resources)
    end = float(result.makespan)  # when the machines stop drawing
    if horizon is not None:
        if not horizon >= end:
            raise ValueError(f"the energy horizon {horizon!r} is before the run's makespan {end}")
        end = float(horizon)
    machines = len(result.capacity)
    draw = _Draw(_per_machine(power, machines), result.devices)
    steps = result.machine_utilisation()
    machine = steps.machine.to_numpy(dtype=np.int64)
    time = steps.time.to_numpy(dtype=float)
    cpu = np.nan_to_num(steps.cpu.to_numpy(dtype=float))
    if len(steps):
        order = np.lexsort((time, machine))
        machine, time, cpu = machine[order], time[order], cpu[order]
    idle, watts = draw.idle, draw.watts(machine, cpu)
    # Each row holds until the machine's next row, its last until the end; before a machine's first row it
    # is idle from time 0.
    first = np.ones(len(machine), dtype=bool)
    first[1:] = machine[1:] != machine[:-1]
    last = np.ones(len(machine), dtype=bool)
    last[:-1] = first[1:]
    until = np.where(last, end, np.roll(time, -1))
    joules = idle * end
    np.add.at(joules, machine[first], -idle[machine[first]] * (end - time[first]))  # idle only until its first row
    np.add.at(joules, machine, watts * (until - time))
    # The cluster's power: every machine idle from 0, then each row's change of its machine's watts.
    before = np.where(first, idle[machine], np.roll(watts, 1))
    levels, counts = np.unique(idle, return_counts=True)
    times = np.concatenate([[0.0], time])
    deltas = np.concatenate([[float(np.sum(levels * counts))], watts - before])
    # What the machines drew while nothing ran on them: before their first row (or the whole run), and in the rows
    # without cpu in use.
    unused = np.full(machines, end)
    unused[machine[first]] = time[first]
    idle_joules = float(sum(level * np.sum(unused[idle == level]) for level in levels))
    idle_joules += float(np.sum((watts * (until - time))[cpu <= 0]))
    group_joules = _group_energy(result, machine, time, cpu, watts, until, first)
    # The devices' draw above idle: each group's own, from its start to its end (or the end of the metering).
    above = _device_watts(result, draw.above_idle, end)
    if above is not None:
        group_watts, group_start, group_end = above
        group_joules = group_joules + group_watts * (group_end - group_start)
        np.add.at(joules, result.groups.machine.to_numpy(dtype=np.int64), group_watts * (group_end - group_start))
        ends = np.isfinite(result.groups.end.to_numpy(dtype=float))
        times = np.concatenate([times, group_start, group_end[ends]])
        deltas = np.concatenate([deltas, group_watts, -group_watts[ends]])
    order = np.argsort(times, kind="stable")
    change_times, start = np.unique(times[order], return_index=True)
    cluster_watts = np.cumsum(np.add.reduceat(deltas[order], start))
    energy_kwh = float(joules.sum()) / JOULES_PER_KWH
    job_kwh = _by_job(result, group_joules) / JOULES_PER_KWH
    carbon_kg = carbon_mean = float("nan")
    if signal is not None:
        grams = signal.grams(change_times, cluster_watts, end) if end > 0 else 0.0
        carbon_kg = grams / 1000.0
        carbon_mean = grams / energy_kwh if energy_kwh > 0 else float("nan")
    return EnergyReport(joules / JOULES_PER_KWH, energy_kwh, carbon_kg, carbon_mean, (change_times, cluster_watts),
                        job_kwh, idle_joules / JOULES_PER_KWH, group_joules / JOULES_PER_KWH)


class StreamMeter:
    """The energy (and carbon) of a streamed run (`cloudsim.Simulation` with ``stream_to`` and ``energy``),
    metered from its instance groups as they are written out, so that it holds only the groups' changes still to
    come, not the run's. The figures are `meter`'s for the same run kept in memory, up to rounding in the last bits
    (they are summed in another order); a streamed run reports no job's, group's or machine's share.

    ``machines``: each machine's power (`PowerByShape.for_cluster`, or `MachinePower.for_cluster`); ``cluster``:
    the run's; ``signal``: the grid's (the carbon figures), or None. A meter serves one run: once finished, it
    refuses more (a RuntimeError)."""

    def __init__(self, machines: Sequence[MachinePower], cluster: ClusterSpec, signal: GridSignal | None = None
                 ) -> None:
        _require_cpu(cluster.resources)
        self.draw = _Draw(_per_machine(machines, cluster.machines), cluster.device_counts())
        self.capacity = cluster.capacity_array()[:, cluster.resources.index("cpu")]
        self.signal = signal
        self.used = np.zeros(cluster.machines)  # each machine's cpu in use since ``since``
        self.since = np.zeros(cluster.machines)
        self.joules = 0.0
        self.grams = 0.0
        self._changes = (np.zeros(0), np.zeros(0, dtype=np.int64), np.zeros(0))  # (time, machine, cpu) to come
        self.finished = False

    def add(self, machine: np.ndarray, start: np.ndarray, end: np.ndarray, cpu: np.ndarray, milli: np.ndarray
            ) -> None:
        """Take groups (aligned arrays: their machine, start, end, the cpu they hold and their devices'
        milli-units); their draw is metered as `settle` allows."""
        self._check_open()
        self._changes = tuple(np.concatenate(parts) for parts in zip(
            self._changes, (np.concatenate([start, end]), np.tile(machine, 2), np.concatenate([cpu, -cpu]))))
        above = milli / DEVICE_MILLI * self.draw.above_idle[machine]  # the devices' draw above idle: the group's own
        self._burn(above, start, end)

    def finish(self, end: float) -> dict[str, float]:
        """The summary's energy keys (`ENERGY_KEYS`) of the run metered until ``end`` (its makespan)."""
        self._check_open()
        self.settle(np.inf)
        self.finished = True
        machines = np.arange(len(self.used))
        self._burn(self.draw.watts(machines, self._utilisation(machines, self.used)), self.since, np.full_like(
            self.since, end))
        energy_kwh = self.joules / JOULES_PER_KWH
        if self.signal is None:
            return {"energy_kwh": energy_kwh}
        return {"energy_kwh": energy_kwh, "carbon_kg": self.grams / 1000.0 / JOULES_PER_KWH,
                "carbon_intensity_mean": self.grams / self.joules if self.joules > 0 else float("nan")}

    def settle(self, settled: float) -> None:
        """Meter each machine's draw up to its last change before ``settled``, one step at a time: no group to come
        (not yet given to `add`) starts before it."""
        import pandas as pd

        time, machine, cpu = self._changes
        now = time < settled
        self._changes = (time[~now], machine[~now], cpu[~now])
        time, machine, cpu = time[now], machine[now], cpu[now]
        if not len(time):
            return
        order = np.lexsort((time, machine))
        time, machine, cpu = time[order], machine[order], cpu[order]
        first = np.ones(len(machine), dtype=bool)
        first[1:] = machine[1:] != machine[:-1]
        # Each machine's cpu in use before each of its changes (summed machine by machine), and from when.
        start = np.flatnonzero(first)
        changed = pd.Series(cpu).groupby(machine, sort=False).cumsum().to_numpy()
        used = self.used[machine] + (changed - cpu)
        since = np.where(first, self.since[machine], np.roll(time, 1))
        self._burn(self.draw.watts(machine, self._utilisation(machine, used)), since, time)
        last = np.append(start[1:], len(machine)) - 1
        self.used[machine[last]] = used[last] + cpu[last]
        self.since[machine[last]] = time[last]

    def _check_open(self) -> None:
        if self.finished:
            raise RuntimeError("this StreamMeter has metered a whole run already; give each run a new one")

    def _utilisation(self, machine: np.ndarray, used: np.ndarray) -> np.ndarray:
        capacity = self.capacity[machine]
        return np.divide(used, capacity, out=np.zeros_like(used), where=capacity > 0)

    def _burn(self, watts: np.ndarray, first: np.ndarray, last: np.ndarray) -> None:
        """Add ``watts`` drawn from ``first`` to ``last`` (aligned arrays), and their carbon."""
        self.joules += float(np.sum(watts * (last - first)))
        if self.signal is not None and len(watts):
            self.signal.check_covers(0.0, float(np.max(last)), "the run")
            self.grams += float(np.sum(watts * (self.signal.cumulative(last) - self.signal.cumulative(first))))


def _per_machine(power: PowerModel | MachinePower | Sequence[MachinePower], machines: int
                 ) -> tuple[MachinePower, ...]:
    if isinstance(power, MachinePower):
        return (power,) * machines
    if isinstance(power, Sequence):
        if len(power) != machines or not all(isinstance(model, MachinePower) for model in power):
            raise ValueError(f"a power per machine is a MachinePower for each of the run's {machines} machines, got "
                             f"{len(power)} value(s)")
        return tuple(power)
    return (MachinePower(power),) * machines


class _Draw:
    """The machines' draw, each by its `MachinePower`: ``idle`` watts per machine (its devices idle included),
    `watts` at a cpu utilisation but its devices' above idle, and ``above_idle`` the watts per wholly used device
    over its idle (0 without GPU watts)."""

    def __init__(self, models: tuple[MachinePower, ...], devices: np.ndarray) -> None:
        self.devices = np.asarray(devices, dtype=np.int64) if len(devices) else np.zeros(len(models), dtype=np.int64)
        self.kinds = [(model, np.array([m == model for m in models])) for model in dict.fromkeys(models)]
        self.idle = self.watts(np.arange(len(models)), np.zeros(len(models)))
        self.above_idle = np.array([0.0 if m.gpu is None else m.gpu.busy - m.gpu.idle for m in models])

    def watts(self, machine: np.ndarray, utilisation: np.ndarray) -> np.ndarray:
        """The watts of machines ``machine`` at cpu ``utilisation`` (the two aligned), devices idle."""
        watts = np.empty(len(machine))
        for model, on in self.kinds:
            rows = on[machine]
            gpu_idle = 0.0 if model.gpu is None else model.gpu.idle
            watts[rows] = model.cpu.watts(utilisation[rows]) + self.devices[machine[rows]] * gpu_idle
        return watts


def _device_watts(result: EpisodeResult, above_idle: np.ndarray, end: float
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Each group's devices' watts above idle (its instances' milli-units x (busy - idle) per `DEVICE_MILLI`),
    start and end (a group still running: ``end``); None when no group holds devices of a machine with GPU
    watts."""
    if not len(result.device_milli) or not above_idle.any():
        return None
    groups = result.groups
    milli = result.device_milli[groups.task.to_numpy()] * groups.instances.to_numpy()
    group_watts = milli / DEVICE_MILLI * above_idle[groups.machine.to_numpy(dtype=np.int64)]
    if not group_watts.any():
        return None
    group_end = groups.end.to_numpy(dtype=float)
    return group_watts, groups.start.to_numpy(dtype=float), np.where(np.isfinite(group_end), group_end, end)


def _group_energy(result: EpisodeResult, machine: np.ndarray, time: np.ndarray, cpu: np.ndarray, watts: np.ndarray,
                  until: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Each group's joules of its machine's draw (the rows of ``result.groups``): its cpu demand times the integral
    over its run of its machine's watts per cpu in use (see the module's docstring). The machines' steps are given
    sorted by machine, then time (``first``: a machine's first row)."""
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
    return demand * (integral(end) - integral(start)) if len(groups) else np.zeros(0)


def _by_job(result: EpisodeResult, joules: np.ndarray) -> np.ndarray:
    """Per job (the rows of ``result.jobs``), the sum of its groups' ``joules``."""
    import pandas as pd

    groups = result.groups
    by_job = pd.Series(joules, index=pd.Index(groups.job_id.to_numpy(), dtype=object)).groupby(level=0).sum()
    return by_job.reindex(pd.Index(result.jobs.job_id.to_numpy(), dtype=object), fill_value=0.0).to_numpy()
