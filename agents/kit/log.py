"""`TrainingLog`: one row per iteration in log.csv and log.jsonl (and TensorBoard), readable even when
the run is killed; `trim_log` cuts a log back to a resumed checkpoint's iteration."""

from __future__ import annotations

import csv
import json
import math
import os
from pathlib import Path
from typing import Any, Mapping

import numpy as np


def _scalar(key: str, value: Any) -> Any:
    """``value`` as a Python scalar (numpy and one-element torch values unwrapped), or TypeError."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (np.generic, np.ndarray)) and value.size == 1:
        return value.item()
    numel = getattr(value, "numel", None)  # a torch tensor, without importing torch to ask
    if callable(numel) and numel() == 1:
        return value.item()
    raise TypeError(f"TrainingLog: {key!r} is a {type(value).__name__}, not a scalar; log one number or text "
                    f"per column")


def trim_log(folder: str | Path, last: int, column: str = "iteration") -> int:
    """Keep only the rows of ``folder``'s log.csv and log.jsonl whose ``column`` is at most ``last``.

    A training saves its state every few iterations but logs every one; resuming from the saved
    state would log the iterations after it twice. Each file is rewritten atomically. Returns how
    many rows were dropped from log.jsonl.
    """
    import pandas as pd

    folder = Path(folder)
    dropped = 0
    for path in (folder / "log.csv", folder / "log.jsonl"):
        _drop_partial_line(path)
        if not path.is_file() or path.stat().st_size == 0:
            continue
        if path.suffix == ".csv":
            rows = pd.read_csv(path)
            kept = rows[rows[column] <= last]
            if len(kept) < len(rows):
                partial = path.with_name(path.name + ".partial")
                kept.to_csv(partial, index=False)
                partial.replace(path)
        else:
            lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
            kept_lines = [line for line in lines if json.loads(line).get(column, last) <= last]
            dropped = len(lines) - len(kept_lines)
            if dropped:
                partial = path.with_name(path.name + ".partial")
                partial.write_text("".join(kept_lines), encoding="utf-8")
                partial.replace(path)
    return dropped


def last_logged(folder: str | Path) -> dict:
    """The last row of the log in ``folder`` (its log.jsonl), what a training's summary reports; {} when there
    is none."""
    log = Path(folder) / "log.jsonl"
    lines = log.read_text().splitlines() if log.is_file() else []
    return json.loads(lines[-1]) if lines else {}


def _drop_partial_line(path: Path) -> None:
    """Cut a last line that a killed writer left unfinished, so that appended rows start on a line of their own."""
    if not path.is_file() or path.stat().st_size == 0:
        return
    with open(path, "rb+") as f:
        end = f.seek(0, os.SEEK_END)
        position = end
        while position > 0:
            block = min(65536, position)
            f.seek(position - block)
            data = f.read(block)
            if position == end and data.endswith(b"\n"):
                return  # complete
            newline = data.rfind(b"\n")
            if newline >= 0:
                f.truncate(position - block + newline + 1)
                return
            position -= block
        f.truncate(0)


def _summary_writer(folder: Path):
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError as err:
        raise ImportError("TrainingLog(tensorboard=True) needs the tensorboard package: pip install tensorboard "
                          "(or leave tensorboard off: log.csv and log.jsonl are written either way)") from err
    return SummaryWriter(log_dir=str(folder))


class TrainingLog:
    """One row of scalars per training iteration, in ``FOLDER/log.csv`` and ``FOLDER/log.jsonl``.

    Every row is flushed as it is written, so a run killed at any moment leaves logs that pandas reads
    (``pandas.read_csv(FOLDER / "log.csv")``, ``pandas.read_json(FOLDER / "log.jsonl", lines=True)``). A log
    opened on a folder that already holds one appends to it (a resumed training continues its log), after
    cutting a last line a killed run left unfinished. Columns are those of the rows, in order of first
    appearance; a row with a new name widens log.csv (rewritten atomically once, the old rows getting empty
    cells), and a row without some name leaves its cell empty. In log.jsonl, NaN and infinite values are null
    (strict JSON); log.csv writes them as nan and inf.

    With ``tensorboard=True`` the numbers also go to TensorBoard event files in the same folder
    (``tensorboard --logdir FOLDER``), at the step ``row[step]``, or the row's position in the log when the
    row has no such column.

    Args:
        folder: where the logs go (made if missing).
        tensorboard: also write TensorBoard events (needs the tensorboard package).
        step: the column that numbers the rows for TensorBoard.

    Use it as a context manager, or call `close`; rows already written stay readable either way.
    """

    def __init__(self, folder: str | Path, *, tensorboard: bool = False, step: str = "iteration") -> None:
        self.folder = Path(folder)
        if self.folder.exists() and not self.folder.is_dir():
            raise NotADirectoryError(f"TrainingLog: {self.folder} is a file; give a folder for log.csv and log.jsonl")
        self.folder.mkdir(parents=True, exist_ok=True)
        self.csv_path = self.folder / "log.csv"
        self.jsonl_path = self.folder / "log.jsonl"
        self.step = step
        self._tensorboard = _summary_writer(self.folder) if tensorboard else None
        for path in (self.csv_path, self.jsonl_path):
            _drop_partial_line(path)
        self.columns: list[str] = self._header()
        with open(self.jsonl_path, "a+", encoding="utf-8") as f:
            f.seek(0)
            self.rows = sum(1 for _ in f)  # rows already there: a resumed log goes on from them
        self._csv = open(self.csv_path, "a", newline="", encoding="utf-8")
        self._jsonl = open(self.jsonl_path, "a", encoding="utf-8")

    def _header(self) -> list[str]:
        if not self.csv_path.is_file():
            return []
        with open(self.csv_path, newline="", encoding="utf-8") as f:
            return next(csv.reader(f), [])

    def _widen(self, columns: list[str]) -> None:
        """Rewrite log.csv under a header with more columns (atomically), and go on appending to it."""
        self._csv.close()
        with open(self.csv_path, newline="", encoding="utf-8") as f:
            old = list(csv.reader(f))[1:]
        partial = self.csv_path.with_suffix(".csv.partial")
        with open(partial, "w", newline="", encoding="utf-8") as f:
            out = csv.writer(f)
            out.writerow(columns)
            out.writerows(row + [""] * (len(columns) - len(row)) for row in old)
        partial.replace(self.csv_path)
        self.columns = columns
        self._csv = open(self.csv_path, "a", newline="", encoding="utf-8")

    def write(self, row: Mapping[str, Any]) -> None:
        """Append one row (names to numbers, text, booleans or None) to every log, flushed at once."""
        if self._csv.closed:
            raise ValueError(f"TrainingLog: {self.folder} is closed; open a new TrainingLog on it to append")
        values = {str(k): _scalar(str(k), v) for k, v in row.items()}
        new = [k for k in values if k not in self.columns]
        if new:
            self._widen(self.columns + new)
        csv.writer(self._csv).writerow(["" if values.get(c) is None else values[c] for c in self.columns])
        self._csv.flush()
        finite = {k: None if isinstance(v, float) and not math.isfinite(v) else v for k, v in values.items()}
        self._jsonl.write(json.dumps(finite, allow_nan=False) + "\n")
        self._jsonl.flush()
        if self._tensorboard is not None:
            step = values.get(self.step)
            step = int(step) if isinstance(step, (int, float)) and math.isfinite(step) else self.rows
            for name, value in values.items():
                if name != self.step and isinstance(value, (int, float)):
                    self._tensorboard.add_scalar(name, value, global_step=step)
            self._tensorboard.flush()
        self.rows += 1

    def close(self) -> None:
        """Close the files (and the TensorBoard writer); closing twice is harmless."""
        self._csv.close()
        self._jsonl.close()
        if self._tensorboard is not None:
            self._tensorboard.close()

    def __enter__(self) -> "TrainingLog":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"TrainingLog({str(self.folder)!r}, rows={self.rows}, tensorboard={self._tensorboard is not None})"
