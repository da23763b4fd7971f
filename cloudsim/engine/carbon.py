"""A grid's carbon intensity over a run: what a watt-second drawn at a given instant emits.

The signal is a step function of time: a file's row gives the intensity (gCO2e/kWh) from its time until the
next row's; the last row holds for as long as the step before it. `GridSignal.read` reads the format of the
"Let's Wait Awhile" datasets (``Time,Carbon Intensity``: a naive timestamp ``YYYY-MM-DD HH:MM:SS`` and a
number per row, steps of any length, strictly increasing) and aligns it to a run: the run's time 0 is
``start``, its times are seconds. A run's instant outside the signal is an error, never an extrapolation.

A scheduler that plans by the signal sees a forecast of it (`GridSignal.forecast`): the signal itself (a perfect
forecast), or the signal plus Gaussian noise whose standard deviation is a fraction of the signal's mean, drawn
once per seed, as Wiesner et al. (Middleware 2021) model a forecast's error. Every number is exact arithmetic on
the step function: a mean over an interval is each step's value times the part of the interval it holds,
divided by the interval's length (`GridSignal.mean`); the carbon of a power that is itself a step function is
the sum over the merged steps of power x intensity x time (`GridSignal.grams`).
"""

from __future__ import annotations

import csv
import datetime as dt
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from cloudsim.engine.checks import is_finite_number

__all__ = ["GridSignal", "SignalError", "TIME_FORMAT", "parse_start", "read_csv_rows"]

TIME_FORMAT = "%Y-%m-%d %H:%M:%S"
"""How a signal file writes its times (and how ``--start`` is written; ``T`` between date and time, and a
date alone for midnight, are taken too)."""

JOULES_PER_KWH = 3.6e6
"""Joules in a kilowatt-hour: watts x seconds / this = kWh (the energy meter's unit too)."""


class SignalError(ValueError):
    """A signal file, or an instant asked of a signal, that cannot be used: the message names the file (line and
    column) or the instant, and what to do."""


def read_csv_rows(path: Path, wanted: str, error: type[ValueError] = ValueError) -> list[list[str]]:
    """The rows of a small CSV input (a grid signal, a power file); ``error`` naming the file and what it should
    be (``wanted``) when it cannot be read or holds no text."""
    try:
        with path.open(newline="") as handle:
            return list(csv.reader(handle))
    except OSError as problem:
        raise error(f"{path}: cannot read it ({problem.strerror or problem}); give {wanted}") from None
    except UnicodeDecodeError:
        raise error(f"{path}: is not a text file; give {wanted}") from None


def parse_start(text: str) -> dt.datetime:
    """A ``--start`` (or a signal file's time): ``YYYY-MM-DD HH:MM:SS``, with ``T`` or a space, or a date alone
    (midnight); a ValueError saying the form otherwise."""
    for form in (TIME_FORMAT, "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M", "%Y-%m-%dT%H:%M", "%Y-%m-%d"):
        try:
            return dt.datetime.strptime(text.strip(), form)
        except ValueError:
            continue
    raise ValueError(f"{text!r} is no date and time; write YYYY-MM-DD HH:MM:SS (e.g. 2020-01-01 00:00:00)")


@dataclass(frozen=True)
class GridSignal:
    """A carbon intensity step function in run time.

    Attributes:
        times: the instants the steps begin, seconds of run time (strictly increasing; 0 is ``origin``).
        values: each step's intensity, gCO2e/kWh (finite, >= 0; a forecast's may be negative).
        end: the instant the last step ends (the last row holds as long as the step before it).
        origin: the date and time of run time 0.
        source: where the signal comes from, for messages (a file's path).
    """

    times: np.ndarray
    values: np.ndarray
    end: float
    origin: dt.datetime
    source: str = "the signal"

    # ------------------------------------------------------------------ reading
    @classmethod
    def read(cls, path: str | Path, start: dt.datetime | str) -> GridSignal:
        """The signal in the CSV file ``path`` (see the module's docstring), run time 0 at ``start`` (a datetime or
        its text). A `SignalError` names the file, the line and the column of anything that is not a signal: a
        missing or other header, a row without two fields, a time that is no time, a value that is no finite
        number >= 0, a time not after the one before it; and a ``start`` outside the signal."""
        path = Path(path)
        origin = parse_start(start) if isinstance(start, str) else start
        rows = read_csv_rows(path, "a carbon intensity CSV (Time,Carbon Intensity)", SignalError)
        if not rows or [name.strip().lower() for name in rows[0]] != ["time", "carbon intensity"]:
            shown = ",".join(rows[0]) if rows else "nothing"
            raise SignalError(f"{path} line 1: the header must be 'Time,Carbon Intensity', got {shown!r}")
        stamps: list[dt.datetime] = []
        values: list[float] = []
        for line, row in enumerate(rows[1:], start=2):
            if not row or all(not field.strip() for field in row):
                continue
            if len(row) != 2:
                raise SignalError(f"{path} line {line}: {len(row)} field(s); a row is a time and an intensity")
            try:
                stamp = parse_start(row[0])
            except ValueError:
                raise SignalError(f"{path} line {line}, column 1 (Time): {row[0]!r} is no time; write "
                                  "YYYY-MM-DD HH:MM:SS") from None
            try:
                value = float(row[1])
            except ValueError:
                value = math.nan
            if not (is_finite_number(value) and value >= 0):
                raise SignalError(f"{path} line {line}, column 2 (Carbon Intensity): {row[1]!r} is no intensity; "
                                  "give a finite number of gCO2e/kWh >= 0")
            if stamps and stamp <= stamps[-1]:
                word = "repeats" if stamp == stamps[-1] else "comes before"
                raise SignalError(f"{path} line {line}, column 1 (Time): {row[0]} {word} the time of the row "
                                  "before it; the rows must be in increasing time, once each")
            stamps.append(stamp)
            values.append(value)
        if len(stamps) < 2:
            raise SignalError(f"{path}: {len(stamps)} row(s) of data; a signal needs at least two (the last row "
                              "holds as long as the step before it)")
        seconds = np.array([(stamp - origin).total_seconds() for stamp in stamps])
        signal = cls(seconds, np.array(values), float(2 * seconds[-1] - seconds[-2]), origin, str(path))
        if not signal.times[0] <= 0 < signal.end:
            raise SignalError(f"--start {origin:{TIME_FORMAT}}: outside {path}, which covers {stamps[0]:{TIME_FORMAT}}"
                              f" to {signal.at(signal.end):{TIME_FORMAT}}; give a start inside it")
        return signal

    @classmethod
    def daily_cycle(cls, days: int = 400, low: float = 100.0, high: float = 300.0) -> GridSignal:
        """A made-up signal of half-hour steps over ``days`` days from 2020-01-01 00:00: ``low`` at 03:00,
        ``high`` at 15:00, a cosine between. For checks of brokers that plan by the grid (``cloudsim
        check-broker`` runs every broker with it), not a measurement of any grid."""
        times = np.arange(days * 48) * 1800.0
        values = (low + high) / 2 - (high - low) / 2 * np.cos(2 * np.pi * (times - 3 * 3600.0) / 86400.0)
        return cls(times, values, days * 86400.0, dt.datetime(2020, 1, 1), "a made-up daily cycle")

    # ------------------------------------------------------------------ what it says
    def at(self, seconds: float) -> dt.datetime:
        """The date and time of run time ``seconds``."""
        return self.origin + dt.timedelta(seconds=float(seconds))

    def check_covers(self, first: float, last: float, what: str = "the run") -> None:
        """A `SignalError` unless the signal covers run times ``first`` to ``last`` (``what``: what spans them)."""
        if first < self.times[0] or last > self.end:
            raise SignalError(f"{what} spans {self.at(first):{TIME_FORMAT}} to {self.at(last):{TIME_FORMAT}}, "
                              f"outside {self.source} ({self.at(self.times[0]):{TIME_FORMAT}} to "
                              f"{self.at(self.end):{TIME_FORMAT}}); give a signal that covers it, or an earlier "
                              "--start")

    def intensity(self, seconds: float | np.ndarray) -> float | np.ndarray:
        """The intensity at run time ``seconds`` (a number or an array): the value of the step it falls in."""
        times = np.asarray(seconds, dtype=float)
        self.check_covers(float(times.min(initial=np.inf)), float(times.max(initial=-np.inf)), "an instant asked")
        values = self.values[np.searchsorted(self.times, times, side="right") - 1]
        return float(values) if np.ndim(seconds) == 0 else values

    def pieces(self, first: float, last: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(starts, ends, values): run times ``first`` to ``last`` cut where the signal's steps begin, each piece's
        intensity constant (none when ``last <= first``)."""
        if last <= first:
            return np.empty(0), np.empty(0), np.empty(0)
        self.check_covers(first, last, "the interval")
        inside = self.times[np.searchsorted(self.times, first, side="right"):np.searchsorted(self.times, last)]
        starts = np.concatenate([[first], inside])
        ends = np.concatenate([inside, [last]])
        return starts, ends, self.values[np.searchsorted(self.times, starts, side="right") - 1]

    def next_step(self, seconds: float) -> float:
        """When the step after the one run time ``seconds`` falls in begins (``end`` after the last)."""
        k = int(np.searchsorted(self.times, seconds, side="right"))
        return float(self.times[k]) if k < len(self.times) else float(self.end)

    def integral(self, first: float, last: float) -> float:
        """The integral of the intensity over run times ``first`` to ``last`` (gCO2e/kWh x seconds)."""
        self.check_covers(first, last, "the interval")
        edges = np.concatenate([self.times, [self.end]])
        lo = np.clip(edges[:-1], first, last)
        hi = np.clip(edges[1:], first, last)
        return float(np.sum(self.values * (hi - lo)))

    def cumulative(self, seconds: np.ndarray) -> np.ndarray:
        """The integral of the intensity from the signal's first row to each of run times ``seconds`` (gCO2e/kWh x
        seconds): the integral over [a, b] is ``cumulative(b) - cumulative(a)``."""
        seconds = np.asarray(seconds, dtype=float)
        self.check_covers(float(seconds.min(initial=np.inf)), float(seconds.max(initial=-np.inf)), "an instant asked")
        step = np.searchsorted(self.times, seconds, side="right") - 1
        return self._running()[step] + self.values[step] * (seconds - self.times[step])

    def mean(self, first: float, last: float) -> float:
        """The mean intensity over run times ``first`` to ``last`` (the value there when they are equal)."""
        return float(self.means(np.array([first]), last - first)[0])

    def means(self, firsts: np.ndarray, length: float) -> np.ndarray:
        """The mean intensity over ``[first, first + length]`` for each of ``firsts``, in one pass: an interval
        inside one step is that step's value exactly; a longer one is the difference of the running integral at
        its ends (each step's value x its length, summed in order) over ``length``."""
        firsts = np.asarray(firsts, dtype=float)
        lasts = firsts + length
        self.check_covers(float(firsts.min(initial=np.inf)), float(lasts.max(initial=-np.inf)), "the interval")
        step = np.searchsorted(self.times, firsts, side="right") - 1
        last_step = np.searchsorted(self.times, lasts, side="left") - 1  # the step an end on an edge closes
        inside = (step >= last_step) | (length <= 0)
        if inside.all():
            return self.values[step]
        running = self._running()
        at = np.searchsorted(self.times, lasts, side="right") - 1
        upper = running[at] + self.values[at] * (lasts - self.times[at])
        lower = running[step] + self.values[step] * (firsts - self.times[step])
        return np.where(inside, self.values[step], (upper - lower) / (length if length > 0 else 1.0))

    def _running(self) -> np.ndarray:
        """The integral of the intensity from the first row to each row's time."""
        cached = self.__dict__.get("_running_integral")
        if cached is None:
            cached = np.concatenate([[0.0], np.cumsum(self.values[:-1] * np.diff(self.times))])
            object.__setattr__(self, "_running_integral", cached)
        return cached

    def grams(self, times: np.ndarray, watts: np.ndarray, end: float) -> float:
        """The carbon (gCO2e) of a power drawn as a step function: ``watts[k]`` from ``times[k]`` (increasing) until
        ``times[k + 1]``, the last until ``end``: the sum over the merged steps of the two functions of watts x
        intensity x seconds, / 3.6e6 J per kWh."""
        times = np.asarray(times, dtype=float)
        watts = np.asarray(watts, dtype=float)
        if times.size == 0 or end <= times[0]:
            return 0.0
        self.check_covers(float(times[0]), float(end))
        cuts = np.union1d(np.concatenate([times, [end]]), self.times[(self.times > times[0]) & (self.times < end)])
        left = cuts[:-1]
        power = watts[np.searchsorted(times, left, side="right") - 1]
        intensity = self.values[np.searchsorted(self.times, left, side="right") - 1]
        return float(np.sum(power * intensity * np.diff(cuts))) / JOULES_PER_KWH

    def forecast(self, error: float = 0.0, seed: int = 0) -> GridSignal:
        """What a scheduler sees of the signal: the signal itself with ``error`` 0, else the signal plus Gaussian
        noise of standard deviation ``error`` x the signal's mean value, one draw per step from numpy's
        ``default_rng(seed)`` (Wiesner et al.'s forecast error: 0.05 is 5 %)."""
        if not (is_finite_number(error) and error >= 0):
            raise ValueError(f"a forecast error is a fraction >= 0 of the signal's mean (0.05 = 5 %), got {error!r}")
        if error == 0:
            return self
        noise = np.random.default_rng(seed).normal(0.0, error * float(np.mean(self.values)), self.values.size)
        return GridSignal(self.times, self.values + noise, self.end, self.origin,
                          f"{self.source} (forecast, error {error:g}, seed {seed})")

    def every(self, step: float) -> GridSignal:
        """The signal read only at run times that are whole multiples of ``step`` seconds from its first row
        (Wiesner et al. read minutes 0 and 30: ``every(1800)``); each kept row then holds until the next kept one."""
        keep = np.isclose(np.mod(self.times - self.times[0], step), 0.0) | np.isclose(
            np.mod(self.times - self.times[0], step), step)
        times, values = self.times[keep], self.values[keep]
        if times.size < 2:
            raise SignalError(f"{self.source}: fewer than two rows at multiples of {step:g} s")
        return GridSignal(times, values, float(min(self.end, times[-1] + step)), self.origin, self.source)

    def after(self, first: float) -> GridSignal:
        """The signal from run time ``first`` on (its rows before it dropped): what a study that begins there sees."""
        keep = self.times >= first
        if keep.sum() < 1:
            raise SignalError(f"{self.source}: no row at or after {self.at(first):{TIME_FORMAT}}")
        return GridSignal(self.times[keep], self.values[keep], self.end, self.origin, self.source)
