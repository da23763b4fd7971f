"""The range checks of the agents' hyper-parameter dataclasses, on the project's one number check
(`cloudsim.engine.checks`: what a whole and a finite number are, and the words of every message).

Each check raises ``ValueError("NAME must be ..., got VALUE")``, the form the command line turns into a
message naming the option ``--NAME`` (`cloudsim.run.config.check_agent_settings`). No torch, no numpy: the
command line imports the configs to show their defaults.
"""

from __future__ import annotations

from typing import Any, Iterable

from cloudsim.engine.checks import check_number

__all__ = ["FLOAT32_MAX", "check_finite", "check_learning_rate", "check_whole"]

FLOAT32_MAX = 3.4028234663852886e38
"""The largest float32: the networks' weights are float32, so no step of the optimiser may be larger."""


def check_whole(config: Any, names: Iterable[str], minimum: int, hint: str = "") -> None:
    """Each field of ``names`` is a whole number (not a bool) >= ``minimum``; ``hint`` (what the number is, the
    paper's value) ends the message."""
    for name in names:
        check_number(name, getattr(config, name), whole=True, at_least=minimum, hint=hint)


def check_learning_rate(config: Any, name: str = "learning_rate", hint: str = "") -> None:
    """The field ``name`` is a learning rate: a finite number > 0 that a float32 holds (the weights are
    float32; a larger rate fails inside torch with no word of which option caused it). ``hint`` (such as
    the paper's value) ends the message of a rate that is not > 0."""
    check_finite(config, (name,), above=0, hint=hint)
    if getattr(config, name) > FLOAT32_MAX:
        raise ValueError(f"{name} must be at most {FLOAT32_MAX:.4g}, the largest float32 (the networks' weights "
                         f"are float32), got {getattr(config, name)!r}")


def check_finite(config: Any, names: Iterable[str], *, above: float | None = None, at_least: float | None = None,
                 at_most: float | None = None, hint: str = "") -> None:
    """Each field of ``names`` is a finite number (not a bool), ``> above`` or ``>= at_least``, and ``<= at_most``,
    where given; ``hint`` (what the number is, the paper's value) ends the message."""
    for name in names:
        check_number(name, getattr(config, name), above=above, at_least=at_least, at_most=at_most, hint=hint)
