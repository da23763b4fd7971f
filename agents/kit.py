"""The learning kit: what every learned scheduler in agents/ needs, written once.

docs/design.md ("Learned agents") asks that the algorithms a paper defines itself
(REINFORCE with its baseline, behaviour cloning, DAgger) be one readable file
each, sharing the same kit, so that each agent's file holds only its paper's
ideas. DeepJS (`agents.deepjs`) was written first; what any other learned
agent would otherwise copy from it lives here:

* the policy-gradient arithmetic: `returns_to_go` and the zero-padded
  per-decision baseline of DeepJS's Algorithm 2 (`baselines`);
* checkpoints: `save_checkpoint` writes the weights, the optimiser state, the
  config, the random states and anything else atomically; `read_checkpoint`
  checks a file before anything uses it and says what is wrong and what to do
  (`CheckpointError`, `CheckpointMismatchError`); `rng_state` / `restore_rng`
  capture and restore the random generators, so a resumed training continues
  exactly as an uninterrupted one would;
* `TrainingLog`: one row per iteration in log.csv and log.jsonl (and
  optionally TensorBoard), readable even when the run is killed;
* `evaluate`: episodes of a policy on several workloads, through a
  `cloudsim.runner.Runner` when given one;

The kit imports torch only inside the functions that need it (checkpoints and
random states): the arithmetic, the log and `evaluate` stay cheap to import,
as the command line needs (torch takes seconds to import).

A checkpoint is one torch file holding a dict::

    agent        the agent's name ("deepjs"), checked when the file is read
    config       the agent's config dataclass as a dict (tuples as lists)
    model        the network's state_dict
    optimizer    the optimiser's state_dict, or None
    torch_rng    torch's CPU generator state          } from `rng_state`;
    python_rng   Python's `random` state              } each present only when
    numpy_rng    a numpy Generator's bit_generator    } it was saved
                 state (arrays as lists)
    ...          the agent's own entries (``extra``), e.g. its progress

DeepJS's checkpoints from before the kit (the shipped one among them) are the
same dict without ``agent`` and ``python_rng``; `read_checkpoint` reads them
when asked to (``allow_unnamed=True``).
"""

from __future__ import annotations

import csv
import dataclasses
import json
import math
import os
import random
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from cloudsim import ClusterSpec, JobSpec, Simulation
from cloudsim.version import __version__

if TYPE_CHECKING:
    from cloudsim.runner import Runner

__all__ = [
    "CHECKPOINT_KEYS",
    "CheckpointError",
    "CheckpointMismatchError",
    "CheckpointNotFoundError",
    "DEVICES",
    "RNG_KEYS",
    "TrainingLog",
    "baselines",
    "evaluate",
    "read_checkpoint",
    "restore_rng",
    "returns_to_go",
    "rng_state",
    "save_checkpoint",
    "training_device",
    "trim_log",
    "unusable_checkpoint",
]


# ------------------------------------------------------------------ returns and baselines
def returns_to_go(rewards: Sequence[float], gamma: float = 1.0) -> np.ndarray:
    """The discounted return from each step of one trajectory to its end.

    q_t = sum_{t' >= t} gamma^(t' - t) r_t', computed backwards in one pass.

    Args:
        rewards: the trajectory's rewards r_0 .. r_{T-1}.
        gamma: the discount factor (1: undiscounted, as DeepJS trains).

    Returns:
        float64 array of length T (empty for an empty trajectory). For example
        rewards [1, 2, 3] with gamma 0.5 give [1 + 0.5*2 + 0.25*3, 2 + 0.5*3, 3]
        = [2.75, 3.5, 3].
    """
    q = np.zeros(len(rewards))
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + gamma * running
        q[t] = running
    return q


def baselines(returns: Sequence[np.ndarray]) -> np.ndarray:
    """The baseline of DeepJS's Algorithm 2: at each decision index, the mean return over N trajectories.

    b_t = (1/N) sum_i q_t^i, where a trajectory shorter than t contributes 0
    (shorter ones are padded with zeros, and still count in N).

    Args:
        returns: the N trajectories' returns-to-go (`returns_to_go`), of any lengths.

    Returns:
        float64 array as long as the longest trajectory. For example [-2, -2, -1, -1]
        and [-1, -1] give [-1.5, -1.5, -0.5, -0.5].

    Raises:
        ValueError: no trajectories (the mean of nothing).
    """
    if len(returns) == 0:
        raise ValueError("baselines: no trajectories to average; pass the returns of at least one trajectory")
    length = max(len(q) for q in returns)
    padded = np.zeros((len(returns), length))
    for i, q in enumerate(returns):
        padded[i, : len(q)] = q
    return padded.mean(axis=0)


# ------------------------------------------------------------------ checkpoint errors
DEVICES = ("auto", "cpu", "cuda")
"""Where a training's network updates run: ``auto`` takes CUDA when torch sees a GPU, else the CPU."""


def training_device(name: str):
    """The torch device ``name`` (one of `DEVICES`) stands for.

    Raises ValueError, saying why and what to give instead, when ``cuda`` is asked of a torch that sees no
    GPU. Training uses it for its updates only: rollouts stay on the CPU, checkpoints are written from
    the CPU copy (so they load anywhere), and a learned broker's decisions stay on numpy
    (`cloudsim.arithmetic`), whatever the device.
    """
    import torch

    if name not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, got {name!r}")
    if name == "cuda" and not torch.cuda.is_available():
        why = "this torch was built without CUDA" if torch.version.cuda is None else "torch sees no CUDA device"
        raise ValueError(f"device cuda: {why} (torch {torch.__version__}); use --device cpu, or --device auto to "
                         "take a GPU when there is one")
    return torch.device("cuda" if name == "cuda" or (name == "auto" and torch.cuda.is_available()) else "cpu")


class CheckpointError(ValueError):
    """A file that cannot serve as an agent's checkpoint (unreadable, not a checkpoint, at odds with the options
    of a resumed run); ``path`` is the file. A ValueError, so callers that report bad input catch it too."""

    def __init__(self, message: str, *, path: str | Path | None = None) -> None:
        super().__init__(message)
        self.path = None if path is None else Path(path)


class CheckpointMismatchError(CheckpointError):
    """A checkpoint asked to schedule a cluster whose resources are not the ones it was trained on."""


class CheckpointNotFoundError(CheckpointError, FileNotFoundError):
    """No file where a checkpoint was expected. Also a FileNotFoundError, as code that opens files expects."""


CHECKPOINT_KEYS = ("agent", "model", "optimizer", "config")
"""What `save_checkpoint` always writes and `read_checkpoint` requires (besides the random states and the
agent's ``extra`` entries)."""
VERSION_KEY = "cloudsim_version"
"""The version of cloudsim that wrote a checkpoint, which `save_checkpoint` also writes (files written before
it was added lack it, so it is not required)."""

RNG_KEYS = ("torch_rng", "python_rng", "numpy_rng")
"""The random states `rng_state` captures, under the names a checkpoint stores them by."""


def _default_fix(agent: str) -> str:
    return f"train one with `cloudsim train {agent} --checkpoint PATH`, or pass another checkpoint with --checkpoint"


def unusable_checkpoint(path: str | Path, reason: str, *, agent: str, title: str | None = None,
                        fix: str | None = None) -> CheckpointError:
    """The `CheckpointError` for a file that is no usable checkpoint, worded as `read_checkpoint` words its own:
    "PATH is not a usable TITLE checkpoint: REASON; FIX". For an agent's own checks after `read_checkpoint`
    (say, weights that do not fit the network its config describes), so that every message reads alike.

    Args:
        path: the file.
        reason: what is wrong with it.
        agent: the agent's name, as `cloudsim train` knows it.
        title: how messages name the agent (default: ``agent``).
        fix: what the user can do (default: train a checkpoint, or pass another one).
    """
    return CheckpointError(f"{path} is not a usable {title or agent} checkpoint: {reason}; "
                           f"{fix or _default_fix(agent)}", path=path)


# ------------------------------------------------------------------ random states
def rng_state(np_rng: np.random.Generator | None = None) -> dict[str, Any]:
    """The state of every random generator a training may draw from, ready for `save_checkpoint`'s ``rng``.

    Captures torch's CPU generator (``torch_rng``), Python's `random` module (``python_rng``) and, when given,
    the numpy Generator the agent draws from (``numpy_rng``: its ``bit_generator.state``, with arrays as lists
    so that the checkpoint loads with torch's safe ``weights_only`` reader). CUDA generators are not included:
    training here runs on the CPU.

    Args:
        np_rng: the agent's numpy Generator (`numpy.random.default_rng`), if it has one.
    """
    import torch

    state: dict[str, Any] = {"torch_rng": torch.get_rng_state(), "python_rng": random.getstate()}
    if np_rng is not None:
        if not isinstance(np_rng, np.random.Generator):
            raise TypeError(f"rng_state: np_rng is a {type(np_rng).__name__}, not a numpy.random.Generator "
                            f"(make one with numpy.random.default_rng(seed))")
        state["numpy_rng"] = _plain(np_rng.bit_generator.state)
    return state


def restore_rng(state: Mapping[str, Any], np_rng: np.random.Generator | None = None) -> None:
    """Put the generators back in the states `rng_state` captured, so that the draws continue where they stopped.

    Args:
        state: `rng_state`'s dict, or a whole checkpoint from `read_checkpoint` (it holds the same keys). A
            state missing from it is left as it is: DeepJS's checkpoints from before the kit hold only
            ``torch_rng``.
        np_rng: the numpy Generator to restore from ``numpy_rng``, whose state must then be there.

    Raises:
        ValueError: ``state`` holds no random state at all, or no ``numpy_rng`` for ``np_rng``, or a numpy state
            for another kind of bit generator. TypeError / RuntimeError (from torch or `random`): a damaged state.
    """
    import torch

    if not any(key in state for key in RNG_KEYS):
        raise ValueError(f"restore_rng: no random state to restore (none of {', '.join(RNG_KEYS)}); pass what "
                         f"rng_state returned, or a checkpoint saved with rng=rng_state(...)")
    if np_rng is not None and "numpy_rng" not in state:
        raise ValueError("restore_rng: a numpy Generator to restore but no numpy_rng state; save the checkpoint "
                         "with rng=rng_state(np_rng)")
    if "torch_rng" in state:
        torch.set_rng_state(state["torch_rng"])
    if "python_rng" in state:
        version, internal, gauss_next = state["python_rng"]
        random.setstate((version, tuple(internal), gauss_next))
    if np_rng is not None:
        np_rng.bit_generator.state = state["numpy_rng"]


# ------------------------------------------------------------------ checkpoints
def _plain(value: Any) -> Any:
    """``value`` with tuples as lists and numpy arrays and scalars as Python ones: what a checkpoint stores."""
    if isinstance(value, Mapping):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, (np.ndarray, np.generic)):
        return value.tolist()
    return value


def _tuples(value: Any) -> Any:
    """The inverse of `_plain` for a config: lists back to the tuples a frozen dataclass holds."""
    if isinstance(value, list):
        return tuple(_tuples(v) for v in value)
    if isinstance(value, Mapping):
        return {k: _tuples(v) for k, v in value.items()}
    return value


def save_checkpoint(path: str | Path, *, agent: str, config: Any, model: Mapping[str, Any],
                    optimizer: Mapping[str, Any] | None = None, rng: Mapping[str, Any] | None = None,
                    extra: Mapping[str, Any] | None = None) -> Path:
    """Write a checkpoint atomically: the file at ``path`` is the old one or the new one, never half of either.

    The dict is written to ``PATH.partial``, synced to disk, then renamed over ``path``; a failure or an
    interruption on the way (a full disk, something unpicklable, Ctrl-C) removes the partial file and leaves
    any previous checkpoint whole.

    Args:
        path: the file to write (its folder is made if missing).
        agent: the agent's name ("deepjs"), which `read_checkpoint` checks.
        config: the agent's config, a dataclass instance; stored as a dict with tuples as lists.
        model: the network's ``state_dict()``.
        optimizer: the optimiser's ``state_dict()``, or None for an agent without one.
        rng: random states from `rng_state` (keys among `RNG_KEYS`), or None.
        extra: the agent's own entries (progress, the cluster it was trained for, its log...), stored at the top
            level of the dict beside the kit's; their names must not be the kit's.

    Returns:
        ``path`` as a Path.
    """
    import torch

    if not isinstance(agent, str) or not agent:
        raise ValueError(f"save_checkpoint: agent must be the agent's name, got {agent!r}")
    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise TypeError(f"save_checkpoint: config must be a dataclass instance, got {type(config).__name__}")
    rng, extra = dict(rng or {}), dict(extra or {})
    unknown = sorted(k for k in rng if k not in RNG_KEYS)
    if unknown:
        raise ValueError(f"save_checkpoint: unknown random states {unknown}; pass what rng_state returns "
                         f"({', '.join(RNG_KEYS)})")
    clashes = sorted(k for k in extra if k in CHECKPOINT_KEYS or k in RNG_KEYS or k == VERSION_KEY)
    if clashes:
        raise ValueError(f"save_checkpoint: extra entries {clashes} would replace the kit's own; rename them")
    state = {"agent": agent, "config": _plain(dataclasses.asdict(config)), "model": model, "optimizer": optimizer,
             VERSION_KEY: __version__, **rng, **extra}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_suffix(path.suffix + ".partial")
    try:
        with open(partial, "wb") as f:
            torch.save(state, f)
            f.flush()
            os.fsync(f.fileno())  # on disk before the rename, so a crash cannot leave a renamed empty file
        partial.replace(path)  # the old checkpoint stays whole until this moment
    except BaseException:  # interrupted or failed (disk full, unpicklable entry): no half-written file left
        partial.unlink(missing_ok=True)
        raise
    return path


def read_checkpoint(path: str | Path, *, agent: str, title: str | None = None, keys: Iterable[str] = (),
                    config_type: type | None = None, writer: str = "`agents.kit.save_checkpoint`",
                    fix: str | None = None, allow_unnamed: bool = False, older: dict | None = None) -> dict:
    """A checkpoint of ``agent``, checked before anything uses it.

    Checks, in order, that the file exists, is a non-empty readable file, loads with torch's safe reader
    (``weights_only``: a checkpoint is data, never code to run; tensors come to the CPU), holds a dict written
    for ``agent`` with every required key, that its config builds (when ``config_type`` is given) and that its
    model is a dict of tensors with no NaN or infinite value (a diverged training would score everything NaN).

    Args:
        path: the file.
        agent: the agent's name; a file written for another agent is refused.
        title: how messages name the agent (default: ``agent``), e.g. "DeepJS".
        keys: the agent's own required entries (its ``extra`` and random states), besides `CHECKPOINT_KEYS`;
            messages list missing ones in this order.
        config_type: the config dataclass; ``config`` is returned as one (lists back to tuples), and a config
            the dataclass refuses makes the file unusable. None: ``config`` stays a dict.
        writer: what writes such files, for messages ("not one written by WRITER").
        fix: what the user can do, ending every message (default: train a checkpoint, or pass another one).
        allow_unnamed: accept a file without an ``agent`` entry, as DeepJS wrote before the kit.
        older: config values for fields added since some files were written, which those files lack (a new
            field's default can differ from what the older files meant).

    Returns:
        the file's dict (``config`` rebuilt when ``config_type`` is given).

    Raises:
        CheckpointNotFoundError: nothing at ``path`` (also a FileNotFoundError).
        CheckpointError: anything else wrong, as "PATH is not a usable TITLE checkpoint: REASON; FIX".
    """
    import torch

    path = Path(path)
    title = title or agent
    fix = fix or _default_fix(agent)
    if not path.exists():
        raise CheckpointNotFoundError(f"{path}: no {title} checkpoint there; {fix}", path=path)

    def bad(reason: str) -> CheckpointError:
        return unusable_checkpoint(path, reason, agent=agent, title=title, fix=fix)

    if path.is_dir():
        raise bad("it is a directory")
    if path.stat().st_size == 0:
        raise bad("the file is empty")
    try:
        file = open(path, "rb")  # opened here so that a file we may not read is not called damaged below
    except OSError as err:
        raise bad(f"it cannot be opened ({err.strerror or err})") from err
    with file:
        try:
            # torch raises many types here (EOFError, OSError, KeyError, RuntimeError, UnpicklingError...) for
            # damaged files; its own text can advise weights_only=False, which is not the fix, so only its type
            # is shown (the cause stays chained).
            saved = torch.load(file, map_location="cpu", weights_only=True)
        except Exception as err:
            raise bad(f"torch cannot load it ({type(err).__name__}): it is damaged, truncated or not a torch "
                      f"checkpoint") from err
    if not isinstance(saved, dict):
        raise bad(f"it holds a {type(saved).__name__}, not the dict that {writer} writes")
    if "agent" in saved and (not isinstance(saved["agent"], str) or saved["agent"] != agent):
        raise bad(f"it is a checkpoint of the agent {saved['agent']!r}, not of {agent!r}")
    required = [k for k in CHECKPOINT_KEYS if not (k == "agent" and allow_unnamed)]
    required += [k for k in keys if k not in required]
    missing = [k for k in required if k not in saved]
    if missing:
        raise bad(f"it lacks {', '.join(missing)} (a torch file, but not one written by {writer})")
    if config_type is not None:
        try:
            saved["config"] = config_type(**_tuples({**(older or {}), **dict(saved["config"])}))
        except (TypeError, ValueError) as err:
            raise bad(f"its config is invalid ({err})") from err
    model = saved["model"]
    if not isinstance(model, dict):
        raise bad(f"its model is a {type(model).__name__}, not the network's weights by name")
    not_tensors = [k for k, v in model.items() if not isinstance(v, torch.Tensor)]
    if not_tensors:
        raise bad(f"its model entries {', '.join(map(str, not_tensors))} are not tensors")
    broken = [k for k, v in model.items() if not bool(torch.isfinite(v).all())]
    if broken:
        raise bad(f"its weights {', '.join(broken)} hold NaN or infinite values (the training diverged)")
    return saved


# ------------------------------------------------------------------ training log
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


# ------------------------------------------------------------------ evaluation
def _episode_summary(args: tuple) -> dict:
    broker_factory, cluster, jobs, tick = args
    return Simulation(cluster, jobs, broker_factory(), tick=tick).run().summary


def evaluate(broker_factory: Callable[[], object], cluster: ClusterSpec, workloads: Iterable[Sequence[JobSpec]],
             *, runner: "Runner | None" = None, tick: float | None = None) -> list[dict]:
    """One episode per workload with a fresh broker each, and each episode's summary, in workload order.

    For an agent's evaluation during training (its greedy policy on held-out workloads): every episode gets
    its own broker from ``broker_factory`` (a learned broker keeps state: its random generator, its recorded
    trajectory), so episodes do not depend on one another nor on the order they run in.

    Args:
        broker_factory: makes the broker, e.g. ``functools.partial(DeepJS, policy)``; with a runner of several
            processes it must pickle (a top-level function, class or partial of them).
        cluster: the cluster every episode runs on.
        workloads: the episodes' jobs, one list per episode.
        runner: runs the episodes (`cloudsim.runner.Runner`: worker processes or Ray); None runs them here, one
            after another. The caller closes it.
        tick: the scheduler tick (None: event-driven), as `cloudsim.Simulation` takes it.

    Returns:
        each episode's `EpisodeResult.summary` (makespan, averages, counts).
    """
    items = [(broker_factory, cluster, list(jobs), tick) for jobs in workloads]
    if runner is None:
        return [_episode_summary(item) for item in items]
    return list(runner.map(_episode_summary, items, desc="evaluation", unit="episode"))
