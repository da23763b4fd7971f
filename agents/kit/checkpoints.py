"""Checkpoints: written atomically with the agent's name, config, weights, optimiser and random states
(`save_checkpoint`), checked before anything uses them (`read_checkpoint`, `CheckpointError`), the
random states that make a resumed training continue exactly (`rng_state`, `restore_rng`), and the
other files of a training's state written whole or not at all (`written_whole`, `remove_partial_files`).

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

import contextlib
import dataclasses
import os
import random
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import numpy as np

from cloudsim.version import __version__

SHIPPED_CHECKPOINTS = Path(__file__).resolve().parents[1] / "checkpoints"
"""The folder of the checkpoints shipped with the package (``agents/checkpoints``): one per trained broker."""


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
    return (f"train one with `cloudsim train {agent} --out DIR` (it writes DIR/policy.pt), or pass another "
            f"checkpoint with --checkpoint")


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


def changed_settings(saved: Any, asked: Any, names: Iterable[str]) -> list[str]:
    """The settings among ``names`` (config fields) on which ``asked`` differs from ``saved``, a saved
    training's config, in the order of ``names``: what a resumed training may not change. Every resume check
    asks this one question: the command line's before anything runs, and each trainer's own."""
    return [name for name in names if getattr(saved, name) != getattr(asked, name)]


PARTIAL = ".partial"
"""What the name of a file being written carries until it is renamed into place (`written_whole`,
`save_checkpoint`, `agents.kit.TrainingLog`): a file whose name holds it is never part of a training's state."""


def partial_path(path: str | Path) -> Path:
    """Where `written_whole` writes ``path`` before renaming it into place: ``NAME.partial.SUFFIX``
    (``model.zip`` -> ``model.partial.zip``), so that a writer that insists on its suffix (Stable-Baselines3's
    ``save``) keeps it."""
    path = Path(path)
    return path.with_name(f"{path.stem}{PARTIAL}{path.suffix}")


@contextlib.contextmanager
def written_whole(*paths: str | Path) -> Iterator[list[Path]]:
    """Write files that together make a training's state, each whole or not at all.

    Yields one partial path (`partial_path`) for each of ``paths``, to write to; when the block ends, each is
    renamed over its path, in the order given (the file a resume looks for last). When the block or a rename
    fails or is interrupted (a full disk, Ctrl-C), every partial file is removed and the files not yet
    renamed stay as they were::

        with written_whole(out / "replay.pkl", out / "model.zip") as (replay, model):
            dqn.save_replay_buffer(replay)
            dqn.save(model)
    """
    targets = [Path(p) for p in paths]
    partials = [partial_path(p) for p in targets]
    for folder in {p.parent for p in targets}:
        folder.mkdir(parents=True, exist_ok=True)
    try:
        yield partials
        for partial, target in zip(partials, targets):
            os.replace(partial, target)
    except BaseException:
        for partial in partials:
            partial.unlink(missing_ok=True)
        raise


def write_config(folder: str | Path, config: Any) -> Path:
    """Write ``folder/config.json``, the agent's config (a dataclass instance) that made the training in it, whole
    (`written_whole`): what ``cloudsim train AGENT --resume`` reads back. Returns the file."""
    import json

    if not dataclasses.is_dataclass(config) or isinstance(config, type):
        raise TypeError(f"write_config: config must be a dataclass instance, got {type(config).__name__}")
    path = Path(folder) / "config.json"
    with written_whole(path) as (partial,):
        partial.write_text(json.dumps(_plain(dataclasses.asdict(config)), indent=2) + "\n")
    return path


def remove_partial_files(folder: str | Path) -> list[Path]:
    """Remove what a save killed outright (a power cut, ``kill -9``: no chance to clean up) left in ``folder``
    and below: every file whose name holds `PARTIAL`. A resumed training calls it before it starts, so that
    no stale half-file lingers beside the state it resumes. Returns the files removed."""
    folder = Path(folder)
    if not folder.is_dir():
        return []
    stale = sorted(p for p in folder.rglob(f"*{PARTIAL}*") if p.is_file() and not p.is_symlink())
    for path in stale:
        path.unlink(missing_ok=True)
    return stale


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
