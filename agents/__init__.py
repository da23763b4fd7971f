"""Brokers (scheduling policies) for cloudsim, and a registry that builds them by name."""

from __future__ import annotations

import inspect
from typing import Callable

from agents.deepk8s_config import BROKER_NAMES as DEEPK8S_BROKERS
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
    Windowed,
)

__all__ = [
    "BROKERS",
    "BestFit",
    "DominantResourceFairness",
    "FirstComeFirstServed",
    "FirstFit",
    "HighestResponseRatioNext",
    "LEARNED",
    "LeastLoad",
    "Packer",
    "RandomFit",
    "RoundRobin",
    "ShortestJobFirst",
    "Tetris",
    "TetrisStar",
    "Windowed",
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


def _deepk8s(algo: str) -> Callable[..., object]:
    def deepk8s(checkpoint: str | None = None) -> object:
        """A trained Deepk8s policy (None: the checkpoint shipped for its algorithm)."""
        from agents.deepk8s import Deepk8sBroker, load_policy  # torch only when asked for

        return Deepk8sBroker(load_policy(checkpoint, algo))

    return deepk8s


for _algo, _name in DEEPK8S_BROKERS.items():
    BROKERS[_name] = _deepk8s(_algo)
"""Broker factories by command-line name; each class's ``name`` is its key."""

LEARNED = ("deepjs", *DEEPK8S_BROKERS.values())
"""The brokers that are trained policies: each takes ``checkpoint=PATH`` and ships a checkpoint of its own."""


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
