"""How an option is declared, parsed and checked, and the error that names it."""

from __future__ import annotations

import functools
import math
import os
import types
import typing
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Callable, Mapping

from cloudsim.engine.checks import is_whole, number_problem
from cloudsim.engine.specs import parse_capacity

class ConfigError(ValueError):
    """An option's value, or a combination of options, cannot work; says which and how to fix it."""

    def __init__(self, option: str, value: object, problem: str) -> None:
        self.option = option
        self.value = value
        shown = "" if value is None or value is True else f" {show_value(value)}"
        super().__init__(f"{option}{shown}: {problem}")


def show_value(value: object) -> str:
    if isinstance(value, str) and value.strip() == "":
        return f'"{value}"'  # an empty option, as typed
    if isinstance(value, (tuple, list)):
        return ",".join(_number(v) for v in value)
    if isinstance(value, Mapping):
        return ",".join(f"{k}={_number(v)}" for k, v in value.items())
    return _number(value)


def _number(value: object) -> str:
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


# ---------------------------------------------------------------- option metadata
@dataclass(frozen=True)
class Option:
    """How one config field appears on the command line."""

    flag: str                                 # "--machines", or a positional's metavar ("WORKLOAD")
    help: str
    parse: Callable[[str], Any] | None = None  # text -> value; raises ValueError with the problem
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    switch: bool = False                      # a flag without a value (store_true)
    positional: bool = False
    aliases: tuple[str, ...] = ()

    @property
    def dest(self) -> str:
        return self.flag.lstrip("-").replace("-", "_").lower()


def option(default: Any, flag: str, help: str, **how: Any) -> Any:
    """A dataclass field with its command-line `Option`."""
    return field(default=default, metadata={"option": Option(flag, help, **how)})


def options_of(section: type) -> list[tuple[str, Option, Any]]:
    """(field name, Option, default) of every option of a config section, in field order: the fields made
    with `option`, and an agent's settings (`agents.kit.settings.setting`), whose options `setting_option`
    derives."""
    return [(f.name, f.metadata["option"] if "option" in f.metadata else setting_option(section, f.name), f.default)
            for f in fields(section) if "option" in f.metadata or "setting" in f.metadata]


@functools.lru_cache(maxsize=None)
def setting_option(section: type, name: str) -> Option:
    """The command-line `Option` of the agent setting ``name`` of ``section``: its flag, help, metavar and
    choices as the setting declares them, its parser from the field's type (int: a whole number, float: a
    number, bool: a switch, str: text or one of its choices, tuple[int, ...]: whole numbers separated by
    commas, tuple[int, int]: LOW:HIGH); None in the type only allows the default."""
    how = next(f for f in fields(section) if f.name == name).metadata["setting"]
    kind = typing.get_type_hints(section)[name]
    if isinstance(kind, types.UnionType):  # "int | None": the option itself always gives a value
        kind = next(part for part in typing.get_args(kind) if part is not type(None))
    flag = how.flag or "--" + name.replace("_", "-")
    forms = {int: (whole, "N"), float: (real, "X"), str: (None, None), tuple[int, ...]: (whole_list, "SIZES"),
             tuple[int, int]: (whole_pair, "LOW:HIGH")}
    text = how.help.replace("%", "%%")  # argparse formats help with %
    if kind is bool:
        return Option(flag, text, switch=True)
    if kind not in forms:
        raise TypeError(f"{section.__name__}.{name}: a setting of type {kind} has no command-line form")
    parse, metavar = forms[kind]
    return Option(flag, text, parse=parse, metavar=how.metavar or (None if how.choices else metavar),
                  choices=how.choices)


def flag_of(section: type, name: str) -> str:
    return next(o.flag for n, o, _ in options_of(section) if n == name)


# ---------------------------------------------------------------- parsers (text -> value)
def whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        raise ValueError("is not a whole number") from None


def whole_list(text: str) -> tuple[int, ...]:
    """``"3,9,6"`` -> (3, 9, 6)."""
    return tuple(whole(part) for part in name_list(text))


def whole_pair(text: str) -> tuple[int, int]:
    """``LOW:HIGH`` (or ``LOW,HIGH``, as the help shows a default pair) whole numbers; ``5`` alone is 5:5."""
    low, _, high = text.replace(",", ":").partition(":")
    return whole(low), whole(high or low)


def real(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise ValueError("is not a number") from None


def index_range(text: str) -> tuple[int, int | None]:
    """``"A:B"`` -> (A, B); ``"A:"`` -> (A, None) (to the end); ``"K"`` -> (K, K+1)."""
    start, sep, stop = text.partition(":")
    try:
        first = int(start) if start.strip() else 0
        last = (int(stop) if stop.strip() else None) if sep else first + 1
    except ValueError:
        raise ValueError("write A:B (A included, B excluded), A: (to the end) or one index K") from None
    return first, last


def time_window(text: str) -> tuple[float, float]:
    start, sep, end = text.partition(":")
    if not sep:
        raise ValueError("write START:END in seconds of trace time, e.g. 86400:172800")
    try:
        return float(start), float(end)
    except ValueError:
        raise ValueError("write START:END in seconds of trace time, e.g. 86400:172800") from None


def load_list(text: str) -> tuple[float, ...]:
    """``"0.1,0.4,0.7"`` or ``"START:STOP:STEP"`` (STOP included)."""
    problem = "write fractions of capacity such as 0.1,0.4,0.7 or a range START:STOP:STEP such as 0.1:1.9:0.2"
    try:
        if ":" in text:
            start, stop, step = (float(v) for v in text.split(":"))
        else:
            return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise ValueError(problem) from None
    if not all(math.isfinite(v) for v in (start, stop, step)) or step <= 0:
        raise ValueError(f"the step must be a positive number; {problem}")
    if stop < start:
        raise ValueError(f"STOP is below START; {problem}")
    count = int(math.floor((stop - start) / step + 1e-9)) + 1
    if count > 10_000:
        raise ValueError(f"makes {count} loads; use a larger step")
    return tuple(round(start + k * step, 10) for k in range(count))



def real_list(text: str) -> tuple[float, ...]:
    """``"0.01,0.3"`` -> (0.01, 0.3)."""
    try:
        return tuple(float(v) for v in text.split(","))
    except ValueError:
        raise ValueError("write numbers separated by commas, such as 0.01,0.3") from None


def seed_span(text: str) -> int | tuple[int, int]:
    """``"N"`` -> N (a count); ``"A:B"`` -> (A, B), seeds A..B-1."""
    first, sep, stop = text.partition(":")
    try:
        return (int(first), int(stop)) if sep else int(text)
    except ValueError:
        raise ValueError("write N (a number of seeds) or A:B (seeds A..B-1)") from None


def checkpoint_list(text: str) -> tuple[tuple[str, str], ...]:
    """``"NAME=PATH,NAME=PATH"`` -> ((NAME, PATH), ...); a bare ``"PATH"`` -> (("", PATH),)."""
    pairs = []
    for item in text.split(","):
        name, sep, path = item.partition("=")
        pairs.append((name.strip(), path.strip()) if sep else ("", item.strip()))
    if not all(path for _, path in pairs):
        raise ValueError("write NAME=PATH[,NAME=PATH], e.g. deepk8s=run/policy.pt")
    return tuple(pairs)


def literal(text: str) -> object:
    """An option's value as a Python literal (a number, True, None, a quoted string), else the text as written."""
    import ast

    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError):
        return text.strip()


def _items(text: str) -> list[str]:
    """``text`` split at the commas outside quotes: ``a='x,y',b=2`` -> ``["a='x,y'", "b=2"]``."""
    items, current, quote = [], [], None
    for char in text:
        if quote is None and char == ",":
            items.append("".join(current))
            current = []
            continue
        if quote is None and char in "'\"":
            quote = char
        elif char == quote:
            quote = None
        current.append(char)
    if quote is not None:
        raise ValueError(f"{text.strip()!r}: a {quote} quote is not closed; close it, e.g. label='a,b'")
    return items + ["".join(current)]


def broker_option_list(text: str) -> tuple[tuple[str, str, object], ...]:
    """``"NAME.KEY=VALUE[,NAME.KEY=VALUE]"`` -> ((NAME, KEY, VALUE), ...), each VALUE a `literal` (a quoted
    string may hold commas). NAME may hold dots (``file.py:Class``): the key is what follows the last dot
    before ``=``."""
    items = []
    for item in _items(text):
        left, sep, value = item.partition("=")
        name, dot, key = left.strip().rpartition(".")
        if not sep or not dot or not name or not key.isidentifier():
            raise ValueError(f"{item.strip()!r}: write NAME.KEY=VALUE[,NAME.KEY=VALUE], e.g. tetris-star.knob=0.2 or "
                             "mybroker.py:Greedy.threshold=3")
        items.append((name, key, literal(value)))
    return tuple(items)


def keyword_list(text: str) -> dict[str, object]:
    """``"KEY=VALUE[,KEY=VALUE]"`` -> {KEY: VALUE}, each VALUE a `literal` (one broker's options; a quoted string
    may hold commas)."""
    keywords = {}
    for item in _items(text):
        key, sep, value = item.partition("=")
        if not sep or not key.strip().isidentifier():
            raise ValueError(f"{item.strip()!r}: write KEY=VALUE[,KEY=VALUE], e.g. knob=0.2")
        keywords[key.strip()] = literal(value)
    return keywords


def name_list(text: str) -> tuple[str, ...]:
    return tuple(name.strip() for name in text.split(","))


def capacity(text: str) -> dict[str, float]:
    return parse_capacity(text)


# ---------------------------------------------------------------- checks
def require(ok: bool, section: type, name: str, value: object, problem: str) -> None:
    if not ok:
        raise ConfigError(flag_of(section, name), value, problem)


def check_choices(section: object) -> None:
    """Every option with a fixed set of values holds one of them (argparse checks the command line; this
    checks configs built in Python too)."""
    for name, how, _ in options_of(type(section)):
        value = getattr(section, name)
        if how.choices is not None and value is not None and value not in how.choices:
            raise ConfigError(how.flag, value, f"is not one of {', '.join(how.choices)}")


def check_number_option(flag: str, value: object, meaning: str = "", **bounds: Any) -> None:
    """The one adapter from the project's number check (`cloudsim.engine.checks.number_problem`, with its ``whole``,
    ``above``, ``at_least`` and ``at_most``) to the command line's error: ``FLAG VALUE: must be ... (MEANING)``."""
    problem = number_problem(value, **bounds)
    if problem is not None:
        raise ConfigError(flag, value, problem + (f" ({meaning})" if meaning else ""))


def check_positive_whole(section: type, name: str, value: object, meaning: str) -> None:
    check_number_option(flag_of(section, name), value, meaning, whole=True, at_least=1)


def physical_memory() -> int | None:
    """This machine's memory in bytes (None where the system does not say)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return None


def check_positive_real(section: type, name: str, value: object, meaning: str) -> None:
    check_number_option(flag_of(section, name), value, meaning, above=0)


def span_text(value: tuple | None) -> str:
    """A range or window as written on the command line: ``A:B`` (``A:`` when open-ended)."""
    if value is None:
        return ""
    first, last = value
    return f"{_number(first)}:{'' if last is None else _number(last)}"


def check_range(section: type, name: str, value: tuple | None, what: str) -> None:
    if value is None:
        return
    first, last = value
    ok = is_whole(first) and first >= 0 and (last is None or (is_whole(last) and last > first))
    require(ok, section, name, span_text(value), f"need 0 <= A < B ({what} A to B-1)")


def check_file(section: type, name: str, path: str | None, what: str) -> None:
    if path is None:
        return
    where = Path(path)
    require(where.exists(), section, name, path, f"no such file; give the path of {what}")
    require(where.is_file(), section, name, path, f"is not a file; give the path of {what}")
    require(os.access(where, os.R_OK), section, name, path, "cannot be read (permission denied)")
