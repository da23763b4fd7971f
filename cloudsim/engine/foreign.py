"""A broker is foreign code: whatever it does, its failure is named as its own, never taken for cloudsim's.

A user's broker may raise anything, call ``sys.exit`` or refuse the cluster. Every call into a broker's
code (importing its module, making it, ``check_cluster``, ``decide``) goes through `guarded`, which turns
anything it raises or any exit (Ctrl-C aside) into a `BrokerError` naming the broker, the call, and the
file and line of the broker's own code where it happened, with the original error as its ``__cause__``.
A ``ValueError`` from ``check_cluster`` is the protocol's refusal, `ClusterRefused`: not a failure, a
reason the broker does not run there (`check_cluster`).

    with guarded("my.py:Mine", "decide(view) call 3 at t=5.0", broker):
        decision = broker.decide(view)

A worker process that a broker ends (``os._exit``) is the runner's to notice (`cloudsim.engine.runner.WorkerDied`).
"""

from __future__ import annotations

import contextlib
import inspect
import sysconfig
import traceback
from pathlib import Path
from typing import Any, Iterator

__all__ = ["BrokerError", "ClusterRefused", "check_cluster", "describe", "failed", "failure", "guarded", "raised_at"]

_OURS = tuple(str(Path(__file__).resolve().parents[2] / package) + "/" for package in ("cloudsim", "agents", "traces"))
"""cloudsim's own code: a frame there is never the broker's."""


class BrokerError(RuntimeError):
    """A broker's own code failed: it raised (anything but a refusal) or exited, in the call ``call``.

    ``broker`` names the broker as it was asked for; ``where`` is the file and line in its code ("" when
    unknown, `raised_at`); the original error is ``__cause__``.
    """

    def __init__(self, message: str, broker: str, call: str, where: str = "") -> None:
        super().__init__(message)
        self.broker = broker
        self.call = call
        self.where = where

    def __reduce__(self):  # it travels back from worker processes whole
        return type(self), (str(self), self.broker, self.call, self.where), self.__dict__


class ClusterRefused(ValueError):
    """A broker's ``check_cluster`` refused the cluster (raised ``ValueError``) with ``reason``: the broker
    does not run there. Not a failure: the leaderboard shows it as "not run"."""

    def __init__(self, broker: str, reason: str) -> None:
        super().__init__(f"broker {broker!r} refuses this cluster: {reason}")
        self.broker = broker
        self.reason = reason

    def __reduce__(self):  # it travels back from worker processes whole
        return type(self), (self.broker, self.reason), self.__dict__


def raised_at(error: BaseException, code: Any = None) -> str:
    """Where ``error`` was raised in the broker's own code, as ``"file.py line N"`` ("" when nowhere known):
    the innermost frame in the file that defines ``code`` (the broker, its class or module; not a wrapper
    of cloudsim's around it), else the
    innermost frame outside cloudsim, Python's own files and the installed libraries, else outside the
    first two (a broker installed as a package lives among the libraries)."""
    frames = traceback.extract_tb(error.__traceback__)
    home = _file_of(code)
    if home is not None and _kind(home) == "ours":  # a wrapper of ours around the broker: look past it
        home = None
    tiers = ([f for f in frames if home is not None and _same_file(f.filename, home)],
             [f for f in frames if _kind(f.filename) == "other"],
             [f for f in frames if _kind(f.filename) in ("other", "library")])
    frame = next((tier[-1] for tier in tiers if tier), None)
    return "" if frame is None else f"{_shown(frame.filename)} line {frame.lineno}"


def _file_of(code: Any) -> str | None:
    if code is None:
        return None
    if not (inspect.ismodule(code) or inspect.isclass(code) or inspect.isfunction(code)):
        code = type(code)
    try:
        return inspect.getsourcefile(code) or inspect.getfile(code)
    except (TypeError, OSError):
        return None


def _same_file(a: str, b: str) -> bool:
    try:
        return Path(a).resolve() == Path(b).resolve()
    except OSError:
        return a == b


def _kind(name: str) -> str:
    """"ours" (cloudsim's own files), "python" (the standard library, frozen modules), "library" (installed
    packages) or "other"."""
    if name.startswith("<"):
        return "python"
    resolved = str(Path(name).resolve())
    if resolved.startswith(_OURS):
        return "ours"
    paths = sysconfig.get_paths()
    if any(resolved.startswith(str(Path(paths[key]).resolve()) + "/") for key in ("stdlib", "platstdlib")):
        return "python"
    if any(resolved.startswith(str(Path(paths[key]).resolve()) + "/") for key in ("purelib", "platlib")):
        return "library"
    return "other"


def _shown(name: str) -> str:
    """A file as the user would name it: relative to the current folder when below it."""
    path = Path(name)
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except (ValueError, OSError):
        return name


def describe(error: BaseException) -> str:
    """What ``error`` did, in a few words: "raised TypeError: ..." or "exited (sys.exit(0)) instead of returning"."""
    if isinstance(error, SystemExit):
        return f"exited (sys.exit({error.code!r})) instead of returning"
    text = str(error).splitlines()[0] if str(error) else ""
    return f"raised {type(error).__name__}" + (f": {text}" if text else "")


def failed(error: BaseException, code: Any = None) -> str:
    """How a call into a user's code ended and where, to follow "importing it", "making it" and the like:
    "failed: TypeError: ... (x.py line 3)" or "exited (sys.exit(0)) instead of returning (x.py line 3)"."""
    said = describe(error)
    where = raised_at(error, code)
    return (said if isinstance(error, SystemExit) else f"failed: {said.removeprefix('raised ')}") + \
        (f" ({where})" if where else "")


def failure(error: BaseException, broker: str, call: str, code: Any = None) -> BaseException:
    """What to raise for ``error`` raised (or an exit) in broker ``broker``'s ``call`` (e.g. ``"decide(view) call 3
    at t=5"``): a `BrokerError` naming the broker, the call and where (`raised_at` ``code``), ``error`` as its
    cause; Ctrl-C, and a `BrokerError` or `ClusterRefused` already named, as they are."""
    if isinstance(error, (KeyboardInterrupt, BrokerError, ClusterRefused)):
        return error
    where = raised_at(error, code)
    named = BrokerError(f"broker {broker!r} {describe(error)} in its {call}" + (f" ({where})" if where else ""),
                        broker, call, where)
    named.__cause__ = error
    return named


@contextlib.contextmanager
def guarded(broker: str, call: str, code: Any = None) -> Iterator[None]:
    """Run a call into broker ``broker``'s code: anything it raises, or an exit, is its `failure`."""
    try:
        yield
    except BaseException as error:
        raise failure(error, broker, call, code)


def check_cluster(broker: Any, name: str, cluster: Any, *args: Any) -> list[str]:
    """Ask ``broker`` (called ``name``) whether it schedules ``cluster`` (its optional ``check_cluster``,
    given ``args`` too): the warnings it returns, as text; `ClusterRefused` when it refuses (raises
    ``ValueError``); `BrokerError` when it fails any other way. A broker without the method accepts every cluster."""
    check = getattr(broker, "check_cluster", None)
    if check is None:
        return []
    with guarded(name, "check_cluster(cluster)", broker):
        try:
            said = check(cluster, *args)
        except ValueError as refusal:
            raise ClusterRefused(name, str(refusal).splitlines()[0] if str(refusal) else "no reason given") \
                from None
        return [str(message) for message in said] if said is not None else []
