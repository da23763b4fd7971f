"""Outputs that are whole or absent: result folders built aside and renamed into place, and strict JSON.

A run's ``--out`` folder is written as a hidden staging folder beside it and
renamed to its name only when the run completes, so a folder under that name is
always a complete run. A run that fails or is interrupted after some episodes
finished keeps them in ``<name>.incomplete`` (with a note saying why) rather than
throwing them away; a run that finished nothing leaves nothing behind.

An output folder is refused before any work (`folder_problem`) when it is the
current folder or one above it (``--out .``, ``--out ..``), when it is inside the
results of another command (a folder marked with `RESULTS_MARK`), and when it
holds, or lies inside, anything the command reads (its workload, machine table,
checkpoints, data folder...): ``--overwrite`` would delete the inputs.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any, Callable, Mapping

from cloudsim.engine.metrics import jsonable

__all__ = ["BROKER_SOURCES", "RESULTS_MARK", "ResultFolder", "folder_problem", "jsonable", "mark_results",
           "parent_problem", "place_problem", "pyplot", "resumable_or_nothing", "save_figure", "strict_json",
           "write_text_atomically"]

RESULTS_MARK = ".cloudsim-results"
"""The file every result folder of a command holds (its cloudsim version): a later output is never put inside it."""
RESULT_FILES = (RESULTS_MARK, "episodes.csv", "runs.parquet", "leaderboard.json")
"""Files that make a folder a command's results (the mark, and what folders written before it hold)."""


def place_problem(path: str | Path, reads: Mapping[str, object] | None = None) -> str | None:
    """Why an output folder may not be at ``path`` whatever it holds (None when it may): the current
    folder or one above it, a place inside another command's results, or a folder that holds or lies
    inside an input, ``reads`` mapping each input's option to its path (or paths; None: not given)."""
    if str(path).strip() == "":
        return "is empty; give a folder (it is created)"
    here, target = Path.cwd().resolve(), Path(path).resolve()
    if target == here or target in here.parents:
        return ("is the current folder or one above it: the results would mix with what is there, and "
                "--overwrite would delete it; name a new folder, such as --out results")
    marked = next((p for p in target.parents if any((p / name).is_file() for name in RESULT_FILES)), None)
    if marked is not None:
        return f"is inside {marked}, the results of another command; choose a folder outside it"
    for option, given in (reads or {}).items():
        for each in (given if isinstance(given, (list, tuple)) else [given]):
            if each is None or str(each).strip() == "":
                continue
            source = Path(each).resolve()
            if source == target or target in source.parents:
                return (f"holds {option} {each}, which this command reads (--overwrite would delete it); "
                        "write the results elsewhere")
            if source in target.parents:
                return f"is inside {option} {each}, which this command reads; write the results elsewhere"
    return None


def folder_problem(path: str | Path, overwrite: bool, reads: Mapping[str, object] | None = None) -> str | None:
    """Why results cannot go into folder ``path`` (None when they can): `place_problem`, a file there,
    a parent that cannot be written, or files there without ``overwrite``."""
    problem = place_problem(path, reads)
    if problem is not None:
        return problem
    path = Path(path)
    if path.exists() and not path.is_dir():
        return "is a file; give a folder (it is created)"
    problem = parent_problem(path)
    if problem is not None:
        return problem
    if path.is_dir() and not overwrite and any(path.iterdir()):
        return "already holds files; add --overwrite to replace them, or choose another folder"
    return None


def strict_json(value: Any) -> str:
    """One line of standard JSON (no NaN or Infinity tokens: they become null)."""
    return json.dumps(jsonable(value), allow_nan=False)


def pyplot():
    """matplotlib's pyplot on the file-only Agg backend (plots are written, never shown).

    Imported on first use: matplotlib takes a while to import, and most runs draw nothing.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(figure, path: str | Path, dpi: int = 120) -> Path:
    """Write ``figure`` as PNG to ``path`` whole (a temporary file renamed into place), then close it."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}.png")
    try:
        figure.savefig(partial, dpi=dpi)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
        pyplot().close(figure)
    return path


def write_text_atomically(path: str | Path, text: str) -> Path:
    """Write ``text`` to ``path`` whole (a temporary file beside it, renamed into place)."""
    path = Path(path)
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    try:
        partial.write_text(text)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path


@contextlib.contextmanager
def resumable_or_nothing(folder: str | Path, state: str | Path):
    """Around a command that fills ``folder`` and saves its resumable ``state`` file there (a training, a
    search): when it stops early (an error, Ctrl-C) before ``state`` exists, what it wrote is removed, the
    folder too when it made it. What an interrupted command leaves can then always be resumed, or is gone."""
    folder, state = Path(folder), Path(state)
    existed = folder.exists()
    before = set(folder.rglob("*")) if existed else set()
    try:
        yield
    except BaseException:
        if not state.exists():
            if not existed:
                shutil.rmtree(folder, ignore_errors=True)
            else:
                for path in sorted(set(folder.rglob("*")) - before, key=lambda p: len(p.parts), reverse=True):
                    if path.is_dir() and not path.is_symlink():
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        path.unlink(missing_ok=True)
        raise


def mark_results(folder: str | Path) -> None:
    """Mark ``folder`` as a command's results (`RESULTS_MARK`), so that no later output goes inside it."""
    from cloudsim.version import __version__

    (Path(folder) / RESULTS_MARK).write_text(f"cloudsim {__version__}\n")


def parent_problem(path: str | Path) -> str | None:
    """Why ``path`` could not be created (None when it can): a file on the way, or no permission."""
    above = Path(path).absolute().parent
    existing = next(p for p in (above, *above.parents) if p.exists())
    if not existing.is_dir():
        return f"{existing} is a file, not a folder; choose another place"
    if not os.access(existing, os.W_OK | os.X_OK):
        return f"cannot write in {existing}; choose a folder you can write to"
    return None


class ResultFolder:
    """A folder of results that appears under its name only when complete.

    Creating it checks, before any work, that the folder can be made: ``path``
    must not be a file, must be empty unless ``overwrite``, and its parent must
    be writable (the staging folder is made at once). Write into `staging`;
    `commit` renames it into place (replacing an old folder when
    ``overwrite``); `abandon` keeps what was written in ``<path>.incomplete`` or,
    when nothing was, removes it. As a context manager it abandons the folder
    when the block raises (Ctrl-C included) and says where the kept runs are in
    a note on the exception.
    """

    def __init__(self, path: str | Path, overwrite: bool = False) -> None:
        self.path = Path(path)
        problem = folder_problem(self.path, overwrite)
        if problem is not None:
            raise FileExistsError(f"{self.path}: {problem}")
        self.overwrite = overwrite
        parent = self.path.absolute().parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
            self.staging = Path(tempfile.mkdtemp(prefix=f".{self.path.name}.partial-", dir=parent))
        except OSError as err:
            raise PermissionError(f"{self.path}: cannot write in {parent} ({err.strerror or err}); "
                                  "choose a folder you can write to") from None
        self.done = False

    @classmethod
    def optional(cls, path: str | Path | None, overwrite: bool = False):
        """A `ResultFolder` for ``path``, or a context that gives None when there is no path."""
        return contextlib.nullcontext(None) if path is None else cls(path, overwrite)

    def __enter__(self) -> "ResultFolder":
        return self

    def __exit__(self, kind, error, traceback) -> None:
        if error is not None and not self.done:
            reason = "interrupted" if isinstance(error, KeyboardInterrupt) else f"{kind.__name__}: {error}"
            if isinstance(error, BrokenPipeError):
                reason = "its output was closed early"
            kept = self.abandon(reason)
            if kept is not None:
                error.add_note(f"the runs that finished are kept in {kept}")

    def write_atomically(self, relative: str | Path, write: Callable[[Path], Any]) -> Path:
        """Call ``write(folder)`` on a fresh temporary folder, then rename it to ``staging/relative``:
        an episode's files are all there or none are."""
        target = self.staging / relative
        target.parent.mkdir(parents=True, exist_ok=True)
        scratch = Path(tempfile.mkdtemp(prefix=".writing-", dir=target.parent))
        try:
            write(scratch)
            os.replace(scratch, target)
        finally:
            if scratch.exists():
                shutil.rmtree(scratch, ignore_errors=True)
        return target

    def commit(self) -> Path:
        """Move the complete results into place; an old folder (``overwrite``) is replaced whole."""
        mark_results(self.staging)
        old = None
        if self.path.exists():
            old = self.path.with_name(f".{self.path.name}.old-{os.getpid()}")
            os.replace(self.path, old)
        os.replace(self.staging, self.path)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
        self.done = True
        return self.path

    def abandon(self, reason: str) -> Path | None:
        """The run did not complete: keep finished results in ``<path>.incomplete`` (returned), or
        remove the staging folder when it holds none."""
        if self.done or not self.staging.exists():
            return None
        if not any(p.is_file() for p in self.staging.rglob("*") if ".writing-" not in str(p)):
            shutil.rmtree(self.staging, ignore_errors=True)
            return None
        for scratch in list(self.staging.rglob(".writing-*")):
            shutil.rmtree(scratch, ignore_errors=True)
        for folder in sorted(self.staging.rglob("*"), key=lambda p: len(p.parts), reverse=True):
            if folder.is_dir() and not any(folder.iterdir()):  # an episode whose runs never finished
                folder.rmdir()
        kept = self.path.with_name(f"{self.path.name}.incomplete")
        if kept.exists():
            shutil.rmtree(kept, ignore_errors=True)
        (self.staging / "INCOMPLETE.txt").write_text(
            f"This folder holds the results of a run that did not complete ({reason}).\n"
            "Only the episodes written here finished; run again for the whole set.\n")
        os.replace(self.staging, kept)
        self.done = True
        return kept


BROKER_SOURCES = "brokers.json"


def write_broker_sources(folder: str | Path, names) -> Path:
    """``brokers.json`` in ``folder``: where each broker of a run comes from (`agents.plugins.source`: built-in,
    an installed package and its version, a file and its SHA-256, a module), so a result names its code."""
    from agents import builtin_source, plugins

    return write_text_atomically(Path(folder) / BROKER_SOURCES, json.dumps(
        {name: plugins.source(name, builtin_source) for name in names}, indent=1) + "\n")


INSTALLATION = Path(__file__).resolve().parents[2]
"""The folder that holds the ``cloudsim`` and ``agents`` packages (a checkout, or site-packages)."""


def portable(text: str, folders: Mapping[str, str | Path]) -> str:
    """``text`` with each of ``folders``' values (and cloudsim's `INSTALLATION`) written as its key, the
    installation as nothing: a report then names ``agents/checkpoints/deepk8s.pt`` or
    ``$CLOUDSIM_DATA/alibaba/...``, not a path of the machine that wrote it."""
    for label, folder in sorted({**folders, "": INSTALLATION}.items(), key=lambda item: -len(str(item[1]))):
        for form in {str(folder), str(Path(folder).resolve())}:
            text = text.replace(form.rstrip("/") + "/", f"{label}/" if label else "")
    return text
