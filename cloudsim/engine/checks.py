"""What counts as a number, written once for the whole project: the engine, the trace loaders, the agents and
the run layer check their numbers here, so that ``True`` is never a count and NaN never a time anywhere.

`is_whole` and `is_finite_number` say whether a value is such a number; `number_problem` says what is wrong
with a value against bounds, in the words every message uses (``"must be a whole number >= 1"``);
`check_number` raises it as ``ValueError("NAME must be ..., got VALUE")``. The command line turns a problem
into a message naming the option (`cloudsim.run.config.fields.check_number_option`). No numpy needed: the
command line imports this to show its defaults.
"""

from __future__ import annotations

import math
import numbers

__all__ = ["check_number", "is_finite_number", "is_whole", "number_problem"]


def is_whole(value: object) -> bool:
    """A whole number: a Python or numpy integer, not a bool (``iterations=True`` is a mistake, not a count)."""
    return type(value) is int or (isinstance(value, numbers.Integral) and not isinstance(value, bool))


def is_finite_number(value: object) -> bool:
    """A finite real number (int or float, Python's or numpy's), not a bool, NaN or an infinity."""
    if type(value) is float:  # the common case first: these run for every task a workload holds
        return math.isfinite(value)
    return type(value) is int or (isinstance(value, numbers.Real) and not isinstance(value, bool)
                                  and math.isfinite(value))


def number_problem(value: object, *, whole: bool = False, above: float | None = None,
                   at_least: float | None = None, at_most: float | None = None) -> str | None:
    """What is wrong with ``value`` as a whole (``whole``) or finite number ``> above``, ``>= at_least`` and
    ``<= at_most`` (each where given), e.g. ``"must be a finite number in (0, 1]"``; None when nothing is."""
    if above is not None and at_least is not None:
        raise ValueError("give above or at_least, not both")
    ok = is_whole(value) if whole else is_finite_number(value)
    if ok and (above is None or value > above) and (at_least is None or value >= at_least) and (
            at_most is None or value <= at_most):
        return None
    low = f"({above:g}" if above is not None else f"[{at_least:g}" if at_least is not None else ""
    if at_most is not None:
        bounds = f" in {low or '(-inf'}, {at_most:g}]"
    else:
        bounds = f" > {above:g}" if above is not None else f" >= {at_least:g}" if at_least is not None else ""
    return f"must be a {'whole' if whole else 'finite'} number{bounds}"


def check_number(name: str, value: object, *, whole: bool = False, above: float | None = None,
                 at_least: float | None = None, at_most: float | None = None, hint: str = "") -> None:
    """Raise ``ValueError("NAME must be ..., got VALUE; HINT")`` when `number_problem` finds one."""
    problem = number_problem(value, whole=whole, above=above, at_least=at_least, at_most=at_most)
    if problem is not None:
        raise ValueError(f"{name} {problem}, got {value!r}" + (f"; {hint}" if hint else ""))
