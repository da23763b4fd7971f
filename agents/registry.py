"""Building a policy by name from a registry of factories: one rule for every registry in agents/
(the core's brokers, DeepRM's environment's policies, RLSK's dispatchers)."""

from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping

__all__ = ["BrokerOptionError", "build", "reserved_option_problem"]


class BrokerOptionError(ValueError):
    """An option a broker's factory does not take."""


def build(registry: Mapping[str, Callable[..., Any]], name: str, where: str, seed: int | None,
          options: dict[str, Any]) -> Any:
    """``registry[name](**options)``; ``seed`` is passed to factories that take one (those that draw
    random numbers) and ignored by the others; None leaves the factory's own default seed, so that a
    policy built without one still runs reproducibly. An unknown name is a ValueError listing the names
    (``where`` says which registry, e.g. " for RLSK's federation"), an option the factory does not take a
    `BrokerOptionError` listing those it takes."""
    try:
        factory = registry[name]
    except KeyError:
        raise ValueError(f"unknown broker {name!r}{where}; choose one of {', '.join(registry)}") from None
    for key in options:
        problem = reserved_option_problem(key)
        if problem is not None:
            raise BrokerOptionError(f"broker {name!r}{where}: {problem}")
    signature = _signature(factory)
    parameters = _parameters(signature)
    if parameters is not None:
        unknown = [key for key in options if key not in parameters]
        if unknown:
            takes = ", ".join(p for p in parameters if p != "seed") or "none"
            raise BrokerOptionError(f"broker {name!r}{where} takes no option {', '.join(map(repr, unknown))}; "
                                    f"its options: {takes}")
    if seed is not None and signature is not None and "seed" in signature.parameters:
        options = {**options, "seed": seed}
    return factory(**options)


def reserved_option_problem(key: str) -> str | None:
    """Why ``key`` may not be one of a broker's options (None when it may): the run gives it."""
    if key == "seed":
        return ("its seed is the run's (--seed, or each episode's seed in compare and leaderboard), not an "
                "option; leave seed out of its options")
    return None


def _signature(factory: Callable[..., Any]) -> inspect.Signature | None:
    try:
        return inspect.signature(factory)
    except (TypeError, ValueError):  # a callable without one (some builtins)
        return None


def _parameters(signature: inspect.Signature | None) -> list[str] | None:
    """The keyword options a factory of this signature takes; None when it takes any (``**kwargs``) or has none."""
    if signature is None:
        return None
    kinds = {parameter.kind for parameter in signature.parameters.values()}
    if inspect.Parameter.VAR_KEYWORD in kinds:
        return None
    return [name for name, parameter in signature.parameters.items()
            if parameter.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
