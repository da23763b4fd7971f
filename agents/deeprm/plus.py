"""DeepRM_Plus (Guo et al., IEEE IoT-J 2021): DeepRM's environment, a CNN, and behaviour cloning of SJF.

The network is Table I's: the 20 x 224 image -> 5x5 convolution, 8 filters,
ReLU -> 2x2 average pooling -> 5x5 convolution, 16 filters, ReLU -> 2x2 average
pooling -> 69 tanh units -> softmax over the 10 slots and void (the
convolutions keep the image's size, as Table I's shapes say). The convolutions
run on channels-last tensors and the update forwards 1,024 images at a time:
on this CPU that makes an iteration about 3 times faster than the default
layout in chunks of 16,384 (`benchmarks/deeprm_plus_speed.py`), with the same
arithmetic.

Algorithm 2 (behaviour cloning): the expert (SJF) schedules n random jobsets;
every (state, action) pair it meets is kept once (the expert is deterministic,
so a repeated state has one action); 9/10 of the pairs train the network by
cross-entropy, 1/10 test it, and training stops when the test accuracy passes
a threshold. Algorithm 3 then trains the cloned network by DeepRM's REINFORCE
(`agents.deeprm.train` with ``init``).
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Callable

import numpy as np
import torch
from torch import nn

from agents.kit import written_whole
from cloudsim.engine.envs.deeprm import DeepRMBatch, DeepRMParams, render_image, sjf_actions

if TYPE_CHECKING:
    from agents.deeprm.config import DeepRMConfig

__all__ = ["DeepRMPlusNet", "CloneResult", "expert_pairs", "clone", "clone_sjf", "CLONE_FILE"]

CLONE_FILE = "clone.json"
"""What `clone_sjf` reached, written beside the training's log."""


class DeepRMPlusNet(nn.Module):
    """Table I's CNN on DeepRM's image; the same interface as `agents.deeprm.DeepRMNet`."""

    update_rows = 1_024
    """Images per forward pass of a training update: the activations of more spill out of the cache."""

    def __init__(self, params: DeepRMParams, hidden: int = 69) -> None:
        super().__init__()
        self.params = params
        height, width = params.image_shape
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 5, padding=2), nn.ReLU(), nn.AvgPool2d(2),
            nn.Conv2d(8, 16, 5, padding=2), nn.ReLU(), nn.AvgPool2d(2), nn.Flatten())
        self.features.to(memory_format=torch.channels_last)  # oneDNN's fast layout; kept by load_state_dict
        self.hidden = nn.Linear(16 * (height // 4) * (width // 4), hidden)
        self.out = nn.Linear(hidden, params.slots + 1)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        """Logits (B, slots + 1) of images (B, T, width)."""
        pixels = image[:, None].contiguous(memory_format=torch.channels_last)
        return self.out(torch.tanh(self.hidden(self.features(pixels))))

    def prefix_tables(self) -> None:
        """Nothing to precompute: a convolution needs the drawn image."""
        return None

    def logits_snapshot(self, snap: dict[str, torch.Tensor], tables: None = None) -> torch.Tensor:
        """`forward` of the image a snapshot (`DeepRMBatch.snapshot`, as tensors) draws."""
        arrays = {k: v.cpu().numpy() for k, v in snap.items()}
        return self(torch.from_numpy(render_image(arrays, self.params)).to(self.out.weight.device))


def expert_pairs(params: DeepRMParams, lengths: np.ndarray, sizes: np.ndarray, arrivals: np.ndarray | None = None,
                 expert: Callable[[DeepRMBatch], np.ndarray] = sjf_actions) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """The distinct (state, action) pairs ``expert`` meets scheduling the jobsets (Algorithm 2, lines 5-11).

    Returns the states as a snapshot dict (arrays with a leading pair axis) and the actions.
    """
    batch = DeepRMBatch(params, lengths, sizes, arrivals)
    snaps, actions = [], []
    while not batch.done.all():
        live = np.flatnonzero(~batch.done)
        action = expert(batch)
        snap = batch.snapshot()
        snaps.append({k: v[live] for k, v in snap.items()})
        actions.append(action[live])
        batch.step(action)
    states = {k: np.concatenate([s[k] for s in snaps]) for k in snaps[0]}
    actions = np.concatenate(actions)
    # one row per pair: the state's numbers and the action, so duplicates compare equal
    rows = np.concatenate([v.reshape(len(actions), -1).astype(np.int64) for v in states.values()]
                          + [actions[:, None]], axis=1)
    _, first = np.unique(rows, axis=0, return_index=True)
    keep = np.sort(first)
    return {k: v[keep] for k, v in states.items()}, actions[keep]


@dataclasses.dataclass
class CloneResult:
    """What behaviour cloning reached: the test accuracy after each epoch, and the pairs used."""

    accuracies: list[float]
    train_pairs: int
    test_pairs: int

    @property
    def accuracy(self) -> float:
        return self.accuracies[-1] if self.accuracies else float("nan")


def clone(net: DeepRMPlusNet, states: dict[str, np.ndarray], actions: np.ndarray, *, accuracy: float,
          max_epochs: int, learning_rate: float, batch_size: int, seed: int = 0,
          on_epoch: Callable[[int, float, float], None] | None = None) -> CloneResult:
    """Train ``net`` to predict ``actions`` from ``states`` (Algorithm 2, lines 12-22).

    The pairs are shuffled with ``seed`` and split 9:1; each epoch is one pass
    over the training pairs in minibatches of ``batch_size`` (Adam at ``learning_rate``, cross-entropy); training
    stops after the first epoch whose test accuracy exceeds ``accuracy``, or
    after ``max_epochs``. DeepRM_Plus's training takes them from its config (`clone_sjf`, `DeepRMConfig`).
    """
    n = actions.size
    if n < 10:
        raise ValueError(f"behaviour cloning needs at least 10 distinct (state, action) pairs, got {n}; "
                         "give more or longer jobsets")
    order = np.random.default_rng(seed).permutation(n)
    split = n - max(1, n // 10)
    train_idx, test_idx = order[:split], order[split:]
    generator = torch.Generator().manual_seed(seed)
    optimiser = torch.optim.Adam(net.parameters(), lr=learning_rate)
    device = net.out.weight.device  # where the network is: the CPU, or the training's --device
    target = torch.from_numpy(actions.astype(np.int64)).to(device)

    def logits(idx: np.ndarray) -> torch.Tensor:  # the CNN's `logits_snapshot`, on the numpy states
        return net(torch.from_numpy(render_image({k: v[idx] for k, v in states.items()}, net.params)).to(device))

    accuracies = []
    for epoch in range(1, max_epochs + 1):
        net.train()
        perm = train_idx[torch.randperm(train_idx.size, generator=generator).numpy()]
        total = 0.0
        for lo in range(0, perm.size, batch_size):
            idx = perm[lo:lo + batch_size]
            loss = nn.functional.cross_entropy(logits(idx), target[idx])
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            total += float(loss.detach()) * idx.size
        net.eval()
        with torch.no_grad():
            hits = sum(int((logits(test_idx[lo:lo + 4096]).argmax(1) == target[test_idx[lo:lo + 4096]]).sum())
                       for lo in range(0, test_idx.size, 4096))
        accuracies.append(hits / test_idx.size)
        if on_epoch is not None:
            on_epoch(epoch, total / perm.size, accuracies[-1])
        if accuracies[-1] > accuracy:
            break
    return CloneResult(accuracies, int(train_idx.size), int(test_idx.size))


def clone_sjf(net: DeepRMPlusNet, config: DeepRMConfig, out: str | Path, *, progress: bool = True) -> CloneResult:
    """Algorithm 2 as DeepRM_Plus's training starts it: clone SJF on ``config.clone_jobsets`` jobsets.

    The jobsets are drawn from ``config.jobset_seed + 1`` (not the REINFORCE
    jobsets, and never an evaluation seed); the epochs' test accuracies go to
    ``out/clone.json``.
    """
    from tqdm.auto import tqdm

    lengths, sizes, arrivals = config.draw_jobsets(config.jobset_seed + 1, config.clone_jobsets)
    states, actions = expert_pairs(config.env_params(), lengths, sizes, arrivals)
    bar = tqdm(total=config.clone_epochs, unit="epoch", desc="cloning SJF", disable=not progress)

    def on_epoch(epoch: int, loss: float, accuracy: float) -> None:
        bar.update(1)
        bar.set_postfix(loss=f"{loss:.3f}", test_accuracy=f"{accuracy:.3f}")

    try:
        result = clone(net, states, actions, accuracy=config.clone_accuracy, max_epochs=config.clone_epochs,
                       learning_rate=config.clone_learning_rate, batch_size=config.clone_batch, seed=config.seed,
                       on_epoch=on_epoch)
    finally:
        bar.close()
    with written_whole(Path(out) / CLONE_FILE) as (partial,):
        partial.write_text(json.dumps(
            {"pairs": int(actions.size), "train_pairs": result.train_pairs, "test_pairs": result.test_pairs,
             "test_accuracy": result.accuracies, "reached": result.accuracy > config.clone_accuracy}, indent=2) + "\n")
    return result
