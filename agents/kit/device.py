"""Where a training's network updates run: `DEVICES` and `training_device`."""

from __future__ import annotations


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
