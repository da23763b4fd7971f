"""Which devices (GPUs) of a machine an instance takes: the default rule, and the check of a broker's choice.

The resource model (`cloudsim.engine.specs.DeviceRequest`): a device has `DEVICE_MILLI`
milli-units; a *sharing* instance takes part of exactly one device, an *exclusive*
one takes whole devices that are completely free. When a decision names no
devices the engine applies the default rule: a sharing instance goes to the
tightest device with room (the least free milli-units that still hold it, the
lowest index on ties), an exclusive one to the lowest-indexed free devices.
"""

from __future__ import annotations

import numpy as np

from cloudsim.engine.checks import is_whole
from cloudsim.engine.specs import DEVICE_MILLI

__all__ = ["default_devices", "device_fit_count", "device_fits", "device_problem", "device_rank"]


def default_devices(free: np.ndarray, count: int, milli: int) -> tuple[int, ...] | None:
    """The devices the default rule gives one instance asking for ``count`` devices of ``milli`` each, on a
    machine whose devices have ``free`` milli-units (-1: no such device); None when they do not fit."""
    if milli < DEVICE_MILLI:  # sharing: the tightest device that holds it
        room = np.where(free >= milli, free, DEVICE_MILLI + 1)
        best = int(np.argmin(room))  # first index on ties
        return (best,) if room[best] <= DEVICE_MILLI else None
    whole = np.flatnonzero(free >= DEVICE_MILLI)
    return tuple(whole[:count].tolist()) if len(whole) >= count else None


def device_problem(free: np.ndarray, devices: object, count: int, milli: int) -> str | None:
    """What is wrong with a broker's ``devices`` for one instance asking for ``count`` devices of ``milli``
    on a machine whose devices have ``free`` milli-units; None when they are right."""
    if not isinstance(devices, (tuple, list)) or not all(
            is_whole(d) for d in devices):
        return f"devices must be a tuple of device numbers, got {devices!r}"
    held = int((free >= 0).sum())
    if len(devices) != count:
        return f"names {len(devices)} device(s) {tuple(devices)}; the task takes {count} per instance"
    if len(set(devices)) != len(devices):
        return f"names a device twice in {tuple(devices)}"
    for d in devices:
        if not 0 <= d < held:
            return f"device {d}: no such device (the machine has {held}, numbered 0..{held - 1})"
        if milli >= DEVICE_MILLI and free[d] < DEVICE_MILLI:
            return (f"device {d} is partly used ({int(free[d])} of {DEVICE_MILLI} milli free): an exclusive task "
                    f"takes whole free devices")
        if free[d] < milli:
            return f"device {d} has {int(free[d])} milli free; the task needs {milli}"
    return None


def device_rank(free: np.ndarray) -> np.ndarray:
    """Machines' devices ranked: ``free`` (..., devices) free milli-units; at index k the k-th largest amount,
    at 0 `DEVICE_MILLI`, so that "k devices with g free each" is ``rank[k] >= g`` (and 0 devices always fit)."""
    rank = np.empty((*free.shape[:-1], free.shape[-1] + 1), dtype=np.int64)
    rank[..., 0] = DEVICE_MILLI
    rank[..., 1:] = -np.sort(-free, axis=-1)
    return rank


def device_fits(free: np.ndarray, request: np.ndarray) -> np.ndarray:
    """Whether one instance of each task fits a machine's devices: ``request`` rows (count, milli) (0 0 for a
    task without devices), ``free`` the machine's devices' free milli-units; a bool array (tasks,)."""
    return device_rank(free)[request[:, 0]] >= request[:, 1]


def device_fit_count(free: np.ndarray, count: int, milli: int) -> int:
    """How many instances asking for ``count`` devices of ``milli`` each fit devices with ``free`` milli-units,
    one after another by the default rule (a sharing instance fits wherever ``milli`` is left on one device,
    so the order of choice does not change the count)."""
    if count == 0:
        return np.iinfo(np.int64).max
    if milli < DEVICE_MILLI:
        return int((np.maximum(free, 0) // milli).sum())
    return int((free >= DEVICE_MILLI).sum()) // count
