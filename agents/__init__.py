"""Brokers (scheduling policies) for cloudsim, and a registry that builds them by name."""

from __future__ import annotations

import inspect
from typing import Callable

from agents.heuristics import (
    BestFit,
    DominantResourceFairness,
    FirstComeFirstServed,
    FirstFit,
    HighestResponseRatioNext,
    LeastLoad,
    Packer,
    RandomFit,
    RoundRobin,
    ShortestJobFirst,
    Tetris,
    TetrisStar,
)

__all__ = [
    "BROKERS",
    "BestFit",
    "DominantResourceFairness",
    "FirstComeFirstServed",
    "FirstFit",
    "HighestResponseRatioNext",
    "LeastLoad",
    "Packer",
    "RandomFit",
    "RoundRobin",
    "ShortestJobFirst",
    "Tetris",
    "TetrisStar",
    "make_broker",
]


def _deepjs(checkpoint: str | None = None, sample: bool = False, seed: int | None = 0) -> object:
    """DeepJS with the weights of ``checkpoint`` (None: the checkpoint shipped with the package)."""
    from agents.deepjs import DeepJS, load_policy  # torch is imported only when DeepJS is asked for

    return DeepJS(load_policy(checkpoint), sample=sample, seed=seed)


BROKERS: dict[str, Callable[..., object]] = {
    cls.name: cls
    for cls in (
        FirstFit,
        BestFit,
        Tetris,
        RandomFit,
        FirstComeFirstServed,
        ShortestJobFirst,
        HighestResponseRatioNext,
        DominantResourceFairness,
        Packer,
        TetrisStar,
        LeastLoad,
        RoundRobin,
    )
}
BROKERS["deepjs"] = _deepjs
"""Broker factories by command-line name; each class's ``name`` is its key."""


def make_broker(name: str, *, seed: int | None = None, **options) -> object:
    """Build the broker registered under ``name`` (e.g. ``"first-fit"``) with ``options``.

    ``seed`` goes to brokers that draw random numbers and is ignored by the others.
    """
    try:
        factory = BROKERS[name]
    except KeyError:
        raise ValueError(f"unknown broker {name!r}; choose one of {', '.join(BROKERS)}") from None
    if "seed" in inspect.signature(factory).parameters:
        options["seed"] = seed
    return factory(**options)
