"""The heuristics of DeepRM's and DeepRM_Plus's papers as batched actions: SJF, Packer, Tetris*,
FCFS, HRRN and Random, one action per episode of a `DeepRMBatch`."""

from __future__ import annotations

import numpy as np

from cloudsim.engine.envs.deeprm.batch import DeepRMBatch


def _argmax_or_void(score: np.ndarray, ok: np.ndarray, void: int) -> np.ndarray:
    """The first slot with the highest score among ``ok`` slots (the code's strict > in slot order), else void."""
    score = np.where(ok, score, -np.inf)
    return np.where(ok.any(1), score.argmax(1), void)


def sjf_actions(batch: DeepRMBatch) -> np.ndarray:
    """Shortest job first over the visible slots, among jobs that fit now for their whole length."""
    return tetris_star_actions(batch, knob=0.0)


def packer_actions(batch: DeepRMBatch) -> np.ndarray:
    """Packer (labelled Tetris in DeepRM's plots): the largest dot product of free resources now and demand."""
    return tetris_star_actions(batch, knob=1.0)


def tetris_star_actions(batch: DeepRMBatch, knob: float) -> np.ndarray:
    """Tetris*: ``knob x alignment + (1 - knob) / length``; knob 0 is SJF, 1 is Packer."""
    ok = batch.fits_now()
    align = np.einsum("br,bmr->bm", batch.avbl[:, 0, :], batch.slot_sizes()).astype(np.float64)
    with np.errstate(divide="ignore"):
        sjf = 1.0 / batch.slot_lengths().astype(np.float64)
    if knob == 0.0:
        score = sjf
    elif knob == 1.0:
        score = align
    else:
        score = knob * align + (1 - knob) * sjf
    return _argmax_or_void(score, ok, batch.params.slots)


def fcfs_actions(batch: DeepRMBatch) -> np.ndarray:
    """First come, first served: the oldest job (always in a slot: the backlog is FIFO and
    fills only when the slots are full) if it fits now, else void; the jobs behind it wait."""
    enter = batch.slot_enter_times()
    held = batch.slot >= 0
    oldest = np.where(held, enter * (batch.S + 1) + batch.slot, np.iinfo(np.int64).max).argmin(1)
    ok = batch.fits_now()[np.arange(batch.B), oldest]
    return np.where(held.any(1) & ok, oldest, batch.params.slots)


def hrrn_actions(batch: DeepRMBatch) -> np.ndarray:
    """Highest response ratio next: among slot jobs that fit now, the highest
    ``(time waited + length) / length`` (the first slot on ties), else void."""
    length = batch.slot_lengths()
    waited = batch.time[:, None] - batch.slot_enter_times()
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = (waited + length) / length
    return _argmax_or_void(ratio, batch.fits_now(), batch.params.slots)


def random_actions(batch: DeepRMBatch, rng: np.random.Generator) -> np.ndarray:
    """Uniform over the slots and void; an empty slot or a job that fits nowhere acts as void."""
    return rng.integers(0, batch.params.slots + 1, size=batch.B)


DEEPRM_HEURISTICS = {"sjf": sjf_actions, "packer": packer_actions, "fcfs": fcfs_actions, "hrrn": hrrn_actions}
