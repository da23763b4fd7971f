"""Brokers (scheduling policies) for cloudsim, and a registry that builds them by name."""

from __future__ import annotations

import inspect
from typing import Callable

from agents.heuristics import FirstFit, RandomFit, Tetris

__all__ = ["BROKERS", "FirstFit", "RandomFit", "Tetris", "make_broker"]

BROKERS: dict[str, Callable[..., object]] = {
    "first-fit": FirstFit,
    "tetris": Tetris,
    "random": RandomFit,
}


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
