"""Where a training's network updates run: `DEVICES` and `training_device`, and on how many CPU threads:
`training_threads`."""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from cloudsim.engine.checks import check_number


DEVICES = ("auto", "cpu", "cuda")
"""Where a training's network updates run: ``auto`` takes CUDA when torch sees a GPU, else the CPU."""

class _ThreadsByTraining(Mapping):
    """Each training's thread count, read from its `agents.registry.TrainingSpec` when asked (the registry is
    filled when `agents` is imported, after the kit)."""

    def _counts(self) -> dict[str, int]:
        from agents.registry import training_names, training_spec

        return {name: training_spec(name).threads for name in training_names()}

    def __getitem__(self, name: str) -> int:
        return self._counts()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._counts())

    def __len__(self) -> int:
        return len(self._counts())

    def __repr__(self) -> str:
        return repr(self._counts())


TRAINING_THREADS: Mapping[str, int] = _ThreadsByTraining()
"""torch's CPU threads each agent's training runs on unless told otherwise (`training_threads`), on every machine:
a view of each `agents.registry.TrainingSpec`'s ``threads``, the counts their committed trainings ran on."""


def training_device(name: str):
    """The torch device ``name`` (one of `DEVICES`) stands for.

    Raises ValueError, saying why and what to give instead, when ``cuda`` is asked of a torch that sees no
    GPU. Training uses it for its updates only: rollouts stay on the CPU, checkpoints are written from
    the CPU copy (so they load anywhere), and a learned broker's decisions stay on numpy
    (`cloudsim.engine.arithmetic`), whatever the device.
    """
    import torch

    if name not in DEVICES:
        raise ValueError(f"device must be one of {', '.join(DEVICES)}, got {name!r}")
    if name == "cuda" and not torch.cuda.is_available():
        why = "this torch was built without CUDA" if torch.version.cuda is None else "torch sees no CUDA device"
        raise ValueError(f"device cuda: {why} (torch {torch.__version__}); use --device cpu, or --device auto to "
                         "take a GPU when there is one")
    return torch.device("cuda" if name == "cuda" or (name == "auto" and torch.cuda.is_available()) else "cpu")

_deterministic_set_here = False
"""Whether `training_threads` turned torch's deterministic algorithms on (and may turn them off for a GPU); a
setting the user made is left as it is."""


def training_threads(threads: int, device=None) -> None:
    """Run torch's CPU work on ``threads`` threads (a whole number >= 1) from now on, with its
    deterministic algorithms where the updates run on the CPU (``device``, a torch device or None).

    Two things make a CPU training's numbers differ from one run to the next. Some operations (the
    backward of an indexed read, as DeepRM's prefix tables do) add their parts in whatever order the
    threads finish, unless torch is told to use its deterministic algorithms; and torch splits a sum
    among its threads, so the count changes the last bits. Each trainer therefore sets both: the
    deterministic algorithms, and a fixed count (its ``threads`` argument, the command's ``--threads``)
    rather than torch's default, the machine's core count. The same command then gives the same numbers
    from run to run, and on a machine with 2 cores as on one with 64 (of the same kind of CPU). More
    threads can be faster where there are cores; they give other numbers. On a GPU the updates keep
    torch's usual algorithms (turned back on where a CPU training in the same process had set the
    deterministic ones; a choice the user made with `torch.use_deterministic_algorithms` is kept): no
    promise of equal bits is made there.
    """
    import torch

    check_number("threads", threads, whole=True, at_least=1)
    global _deterministic_set_here
    torch.set_num_threads(threads)
    if device is None or torch.device(device).type == "cpu":
        if not torch.are_deterministic_algorithms_enabled():
            torch.use_deterministic_algorithms(True)
            _deterministic_set_here = True
    elif _deterministic_set_here:  # a GPU training after a CPU one in this process: torch's usual algorithms again
        torch.use_deterministic_algorithms(False)
        _deterministic_set_here = False
