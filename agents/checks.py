"""The project's number checks, written once: what counts as a whole number and as a finite number
(`is_whole`, `is_finite_number`, which the run layer's option checks use too), and the range checks of
the agents' hyper-parameter dataclasses.

Each range check raises ``ValueError("NAME must be ..., got VALUE")``, the form the command
line turns into a message naming the option ``--NAME``
(`cloudsim.run.config.check_agent_settings`). No torch, no numpy: the command
line imports the configs to show their defaults.
"""

from __future__ import annotations

import math
import numbers
from typing import Any, Iterable

__all__ = ["FLOAT32_MAX", "check_finite", "check_learning_rate", "check_whole", "is_finite_number", "is_whole"]

FLOAT32_MAX = 3.4028234663852886e38
"""The largest float32: the networks' weights are float32, so no step of the optimiser may be larger."""


def is_whole(value: object) -> bool:
    """A whole number: a Python or numpy integer, not a bool (``iterations=True`` is a mistake, not a count)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


def is_finite_number(value: object) -> bool:
    """A finite real number (int or float, Python's or numpy's), not a bool, NaN or an infinity."""
    return isinstance(value, numbers.Real) and not isinstance(value, bool) and math.isfinite(value)


def check_whole(config: Any, names: Iterable[str], minimum: int, hint: str = "") -> None:
    """Each field of ``names`` is a whole number (not a bool) >= ``minimum``; ``hint`` (what the number is, the
    paper's value) ends the message."""
    for name in names:
        value = getattr(config, name)
        if not (is_whole(value) and value >= minimum):
            raise ValueError(f"{name} must be a whole number >= {minimum}, got {value!r}"
                             + (f"; {hint}" if hint else ""))


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
        value = getattr(config, name)
        low = "" if above is None and at_least is None else f"({above:g}" if above is not None else f"[{at_least:g}"
        if at_most is not None:
            problem = f"in {low or '(-inf'}, {at_most:g}]"
        else:
            problem = f"> {above:g}" if above is not None else f">= {at_least:g}" if at_least is not None else ""
        if not is_finite_number(value):
            problem = ""
        elif (above is None or value > above) and (at_least is None or value >= at_least) and (
                at_most is None or value <= at_most):
            continue
        raise ValueError(f"{name} must be a finite number{' ' + problem if problem else ''}, got {value!r}"
                         + (f"; {hint}" if hint else ""))
