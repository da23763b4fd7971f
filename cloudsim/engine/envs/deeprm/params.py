"""DeepRM's parameters (`DeepRMParams`: the cluster, the horizon, the slots, the job sizes) and the
arithmetic between a load and an arrival rate."""

from __future__ import annotations

import math
from dataclasses import dataclass

from cloudsim.engine.checks import check_number


MODES = ("code", "paper")
OBJECTIVES = ("slowdown", "completion", "makespan")
ENDS = ("all_done", "no_new_job")
SMALL_JOB_CHANCE = 0.8  # the code's bi-modal job lengths: 80 % small


@dataclass(frozen=True)
class DeepRMParams:
    """The environment's parameters, with the published code's defaults.

    Attributes:
        slots: M, the visible job slots (the code's ``num_nw``; the paper uses 10).
        horizon: T, the time steps the image looks ahead.
        res_slot: units per resource; None: 10 in ``mode="code"``, 20 in ``"paper"``.
        max_job_len: the longest job, in time steps (must be shorter than the horizon).
        max_job_size: the largest demand, in units; the width of a slot's block in the image.
        backlog: jobs the backlog holds; a job arriving to a full backlog is dropped.
        resources: how many resources each job asks for.
        simu_len: the time steps of a jobset in which a job may arrive.
        new_job_rate: the chance that a job arrives in a time step (Bernoulli).
        max_track_since_new: the cap of the steps-since-last-arrival counter.
        end: ``"all_done"`` (the episode ends when every job is done, or when the time
            passes ``max_time``) or ``"no_new_job"`` (it ends at time ``simu_len``).
        max_time: the forced end of an ``"all_done"`` episode (the code's
            ``episode_max_length``); its reference runs use 20,000, so that every
            episode ends with all jobs done.
        mode: ``"code"`` or ``"paper"``, see the module's docstring.
        objective: the reward: ``"slowdown"``, ``"completion"`` or ``"makespan"``.
    """

    slots: int = 5
    horizon: int = 20
    res_slot: int | None = None
    max_job_len: int = 15
    max_job_size: int = 10
    backlog: int = 60
    resources: int = 2
    simu_len: int = 50
    new_job_rate: float = 0.7
    max_track_since_new: int = 10
    end: str = "all_done"
    max_time: int = 20_000
    mode: str = "code"
    objective: str = "slowdown"

    def __post_init__(self) -> None:
        for name in ("slots", "horizon", "max_job_len", "max_job_size", "backlog", "resources", "simu_len",
                     "max_track_since_new", "max_time"):
            value = getattr(self, name)
            check_number(f"DeepRMParams.{name}", value, whole=True, at_least=1)
        if self.mode not in MODES:
            raise ValueError(f"DeepRMParams.mode must be one of {MODES}, got {self.mode!r}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"DeepRMParams.objective must be one of {OBJECTIVES}, got {self.objective!r}")
        if self.end not in ENDS:
            raise ValueError(f"DeepRMParams.end must be one of {ENDS}, got {self.end!r}")
        if self.res_slot is None:
            object.__setattr__(self, "res_slot", 10 if self.mode == "code" else 20)
        check_number("DeepRMParams.res_slot", self.res_slot, whole=True, at_least=1)
        if self.max_job_len >= self.horizon:
            raise ValueError(f"max_job_len ({self.max_job_len}) must be shorter than the horizon ({self.horizon}): "
                             "a job is placed only where it ends inside the horizon")
        if self.max_job_size > self.res_slot:
            raise ValueError(f"max_job_size ({self.max_job_size}) exceeds res_slot ({self.res_slot}): "
                             "such a job could never be placed")
        if not (0.0 <= float(self.new_job_rate) <= 1.0):
            raise ValueError(f"new_job_rate must be a chance in [0, 1] (one arrival per step at most), "
                             f"got {self.new_job_rate!r}")

    # the job distribution ------------------------------------------------
    def length_ranges(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """(small, big) inclusive ranges of job lengths: the code's 1..len/5 and 2len/3..len."""
        n = self.max_job_len
        return (1, n // 5), (n * 2 // 3, n)

    def size_ranges(self) -> tuple[tuple[int, int], tuple[int, int]]:
        """(dominant, other) inclusive ranges of a job's demand in units."""
        if self.mode == "code":
            s = self.max_job_size
            return (s // 2, s), (1, s // 5)
        r = self.res_slot  # section 4.1: 0.25r-0.5r and 0.05r-0.1r
        return (math.ceil(0.25 * r), r // 2), (math.ceil(0.05 * r), r // 10)

    def load_per_rate(self) -> float:
        """Expected load per resource of one arrival per step: E[len] E[demand] / res_slot."""
        (s_lo, s_hi), (b_lo, b_hi) = self.length_ranges()
        mean_len = SMALL_JOB_CHANCE * (s_lo + s_hi) / 2 + (1 - SMALL_JOB_CHANCE) * (b_lo + b_hi) / 2
        (d_lo, d_hi), (o_lo, o_hi) = self.size_ranges()
        mean_size = ((d_lo + d_hi) / 2 + (self.resources - 1) * (o_lo + o_hi) / 2) / self.resources
        return mean_len * mean_size / self.res_slot

    # the image's layout ----------------------------------------------------
    @property
    def backlog_width(self) -> int:
        return math.ceil(self.backlog / self.horizon)

    @property
    def image_shape(self) -> tuple[int, int]:
        width = (self.res_slot + self.max_job_size * self.slots) * self.resources + self.backlog_width + 1
        return self.horizon, width

    @property
    def compact_size(self) -> int:
        return (self.resources + 1) * (self.horizon + self.slots) + 1


def rate_for_load(load: float, params: DeepRMParams) -> float:
    """The arrival rate giving ``load`` (1.0 = 100 % of a resource) under ``params``' job sizes.

    Raises ValueError when the load needs more than one arrival per step.
    """
    per_rate = params.load_per_rate()
    rate = float(load) / per_rate
    if not (0 < load and rate <= 1.0):
        raise ValueError(f"load {load!r} is out of reach in mode {params.mode!r}: one arrival per step gives at most "
                         f"{per_rate:.3f} ({100 * per_rate:.1f} %); pick a load in (0, {per_rate:.3f}]"
                         + (" or the code's job sizes (mode 'code'), which reach 184 %" if params.mode == "paper"
                            else ""))
    return rate


def load_for_rate(rate: float, params: DeepRMParams) -> float:
    """The expected load per resource of arrival rate ``rate``."""
    return float(rate) * params.load_per_rate()
