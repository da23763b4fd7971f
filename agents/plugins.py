"""Brokers from outside the package: by reference (``package.module:Class`` or ``path/to/file.py:Class``) or
by name from an installed package that declares them in the ``cloudsim.brokers`` entry-point group.

Every command that takes a broker name takes these too, and builds them the way it builds its own
(`agents.make_broker`): a seed when the factory takes one, options from ``--broker-options``. A worker
process, or a Ray worker, builds its broker again from the reference, so a user's class never has to be
picklable. A package announces its brokers in its ``pyproject.toml``::

    [project.entry-points."cloudsim.brokers"]
    greedy-small = "my_brokers:SmallestFirst"

`source` says where a broker comes from, for `cloudsim brokers` and for the results of a run
(`brokers.json` in a result folder), so a result can be traced to the code that made it. `output_name` is
the one name a broker's files and cells get inside a result folder, whatever its reference holds, and
`files` the broker files a command reads (inputs that no output may hold or replace).

A user's module is foreign code: whatever its import raises, an exit included, is one
`BrokerReferenceError` naming the reference, the file and the line (`cloudsim.engine.foreign`).
"""

from __future__ import annotations

import functools
import hashlib
import importlib
import importlib.metadata
import importlib.util
import re
import sys
from pathlib import Path
from typing import Any, Callable, Iterable

from cloudsim.engine.foreign import failed

__all__ = ["ENTRY_POINT_GROUP", "BrokerReferenceError", "factory", "files", "fingerprint", "foreign", "installed",
           "is_reference", "output_name", "source"]

ENTRY_POINT_GROUP = "cloudsim.brokers"


class BrokerReferenceError(ValueError):
    """A broker reference or installed name that cannot give a broker; the message says why and what to do."""


def is_reference(name: str) -> bool:
    """Whether ``name`` names a broker by reference (``module:Class`` or ``file.py:Class``), not by name."""
    return ":" in name


@functools.lru_cache(maxsize=None)
def installed() -> dict[str, importlib.metadata.EntryPoint]:
    """The brokers installed packages declare in the ``cloudsim.brokers`` entry-point group, by name."""
    return {point.name: point for point in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP)}


def factory(name: str, builtin: Callable[[str], str | None]) -> Callable[..., Any]:
    """The class (or factory) a reference or installed name stands for.

    ``builtin(name)``: where a built-in broker of that name comes from, or None; an installed name that a
    built-in has too is refused with both named. Raises `BrokerReferenceError` with one line saying what
    is wrong: a module or file not found or failing to import, no such attribute, not callable, no
    ``decide`` method.
    """
    if is_reference(name):
        target = _load(name)
        shown = name
    else:
        point = installed().get(name)
        if point is None:
            raise BrokerReferenceError(f"unknown broker {name!r}: not a built-in, not installed in the "
                                       f"{ENTRY_POINT_GROUP!r} entry-point group, and not a reference "
                                       "(module:Class or path/to/file.py:Class)")
        clash = builtin(name)
        if clash is not None:
            raise BrokerReferenceError(
                f"broker name {name!r} is both {clash} and declared by the installed package "
                f"{_distribution(point)} ({point.value}); uninstall one, or name the package's by reference: "
                f"--brokers {point.value}")
        shown = f"{name} ({point.value}, from {_distribution(point)})"
        try:
            target = point.load()
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # the package's own import failed, or exited
            raise BrokerReferenceError(f"broker {shown}: importing it {failed(error)}") from None
    if not callable(target):
        raise BrokerReferenceError(f"broker {shown}: {target!r} is not a class or a function that makes a broker")
    if isinstance(target, type) and not callable(getattr(target, "decide", None)):
        raise BrokerReferenceError(f"broker {shown}: class {target.__name__} has no decide(view) method; a broker "
                                   "answers decide(view) with a Decision, a plan or None (docs/guide/broker.md)")
    return target


def _load(reference: str) -> Any:
    module_part, _, attribute = reference.rpartition(":")
    if not module_part or not attribute:
        raise BrokerReferenceError(f"broker reference {reference!r}: write it as package.module:Class or "
                                   "path/to/file.py:Class")
    if _names_file(module_part):
        module = _module_from_file(reference, Path(module_part))
    else:
        try:
            module = importlib.import_module(module_part)
        except ModuleNotFoundError as error:
            missing = error.name or module_part
            hint = " (is it on PYTHONPATH, or installed?)" if missing == module_part.split(".")[0] else ""
            raise BrokerReferenceError(f"broker reference {reference!r}: no module named {missing!r}{hint}") \
                from None
        except KeyboardInterrupt:
            raise
        except BaseException as error:  # the module's own code failed, or exited
            raise BrokerReferenceError(f"broker reference {reference!r}: importing {module_part} {failed(error)}") \
                from None
    target: Any = module
    for part in attribute.split("."):
        if not hasattr(target, part):
            raise BrokerReferenceError(f"broker reference {reference!r}: {module_part} has no {attribute!r}")
        target = getattr(target, part)
    return target


def _names_file(module_part: str) -> bool:
    """Whether a reference's part before the colon is a file path (``x.py``, or with a folder), not a module."""
    return module_part.endswith(".py") or "/" in module_part or "\\" in module_part


def _module_from_file(reference: str, path: Path) -> Any:
    """The module of a broker file, imported once per process and text under a name made from its resolved
    path and its text."""
    if path.is_dir():
        raise BrokerReferenceError(f"broker reference {reference!r}: {str(path)!r} is a folder; name the .py file "
                                   "that defines the broker")
    if not path.is_file():
        raise BrokerReferenceError(f"broker reference {reference!r}: no such file {str(path)!r}")
    resolved = path.resolve()
    # Named by its place and its text: a file edited since (in a notebook, a test) is imported again.
    name = "cloudsim_broker_" + hashlib.sha1(str(resolved).encode() + b"\0" + resolved.read_bytes()).hexdigest()[:12]
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, resolved)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before running it: a class defined there can then be found by its module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        del sys.modules[name]
        where = f" line {error.lineno}" if error.lineno else ""
        raise BrokerReferenceError(f"broker reference {reference!r}: {path}{where}: {error.msg}") from None
    except KeyboardInterrupt:
        del sys.modules[name]
        raise
    except BaseException as error:  # its own code failed, or exited
        del sys.modules[name]
        raise BrokerReferenceError(f"broker reference {reference!r}: running {path} {failed(error)}") from None
    return module


def _distribution(point: importlib.metadata.EntryPoint) -> str:
    dist = getattr(point, "dist", None)
    return f"{dist.name} {dist.version}" if dist is not None else "an installed package"


def source(name: str, builtin: Callable[[str], str | None]) -> dict[str, str]:
    """Where the broker ``name`` (a built-in name, an installed name or a reference) comes from: the
    installed package and version, or the file and its SHA-256, or the module, its file and version.
    ``builtin(name)``: whether a built-in registry has the name (it wins over an installed package's:
    `factory` refuses such a package's broker by that name)."""
    if not is_reference(name):
        point = installed().get(name)
        if point is None or builtin(name) is not None:
            from cloudsim.version import __version__

            return {"kind": "built-in", "package": f"cloudsim {__version__}"}
        dist = getattr(point, "dist", None)
        return {"kind": "installed", "reference": point.value,
                "package": f"{dist.name} {dist.version}" if dist is not None else "?"}
    module_part = name.rpartition(":")[0]
    if _names_file(module_part):
        path = Path(module_part).resolve()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else "?"
        return {"kind": "file", "reference": name, "file": str(path), "sha256": digest}
    module = sys.modules.get(module_part)
    top = module_part.split(".")[0]
    try:
        version = importlib.metadata.version(top)
    except importlib.metadata.PackageNotFoundError:
        version = "not an installed distribution"
    return {"kind": "module", "reference": name, "file": str(getattr(module, "__file__", "?")), "version": version}


_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_+-]*(\.[A-Za-z0-9_+-]+)*")
"""A name that is a safe file name as it is: no "/", ":" or "..", no leading dot."""


def output_name(name: str) -> str:
    """The one name broker ``name`` (as typed: a name or a reference) has in a result folder: its tables'
    folder, its leaderboard cells. A plain name is itself; a reference (or an odd installed name) is its
    readable part with every other character written ``_``, and 8 hex digits of a hash of what it names (a
    file reference: the file's resolved path and the class), so that the name holds no "/", ":" or "..",
    two references to different code never share it, the same file named two ways (``b.py:X``,
    ``./b.py:X``) has one, and a run tomorrow gets the same."""
    if not is_reference(name) and _PLAIN_NAME.fullmatch(name):
        return name
    if is_reference(name):
        module_part, _, attribute = name.rpartition(":")
        if _names_file(module_part):
            path = Path(module_part)
            readable, identity = f"{path.stem}_{attribute}", f"{path.resolve()}:{attribute}"
        else:
            readable, identity = f"{module_part}_{attribute}", name
    else:
        readable, identity = name, name
    tag = hashlib.sha256(identity.encode()).hexdigest()[:8]
    return f"{re.sub(r'[^A-Za-z0-9_+-]+', '_', readable).strip('_')[:60] or 'broker'}-{tag}"


def fingerprint(name: str, builtin: Callable[[str], str | None]) -> str | None:
    """What identifies the code of broker ``name`` now, so that a kept result of it is known to be stale when
    it changes: a file's or a module's SHA-256, an installed package's name and version; None for a built-in
    (its code is cloudsim's own, and so is the result)."""
    where = source(name, builtin)
    if where["kind"] == "built-in":
        return None
    if where["kind"] == "installed":
        return where["package"]
    if where["kind"] == "file":
        return where["sha256"]
    path = Path(where["file"])
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() else where["version"]


def foreign(names: Iterable[str], builtin: Callable[[str], str | None]) -> bool:
    """Whether any of ``names`` is a user's broker (a reference, or an installed package's), whose code may
    end the process it runs in: such runs go to worker processes (`cloudsim.engine.runner.Runner`'s ``isolate``)."""
    return any(is_reference(name) or builtin(name) is None for name in names)


def files(names: Iterable[str]) -> list[str]:
    """The files that the broker references among ``names`` read (``path/to/file.py:Class``): a command's
    inputs, which its outputs may never hold or replace (`cloudsim.run.output.place_problem`)."""
    return [name.rpartition(":")[0] for name in names
            if is_reference(name) and _names_file(name.rpartition(":")[0])]
