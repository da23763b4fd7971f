"""Deepk8s's networks (section 4.4): `ActorCritic`, whose actor and critic share a trunk, and
`PairActorCritic`, which scores every (slot, machine) pair with the same weights."""

from __future__ import annotations

from typing import Sequence

import torch
from torch import nn

from agents.deepk8s.config import Deepk8sConfig
from cloudsim.engine.envs import Deepk8sEncoding


def layers(inputs: int, sizes: Sequence[int], outputs: int | None = None) -> nn.Sequential:
    """Linear + ReLU for each size, then a plain Linear to ``outputs`` if given."""
    layers: list[nn.Module] = []
    for size in sizes:
        layers += [nn.Linear(inputs, size), nn.ReLU()]
        inputs = size
    if outputs is not None:
        layers.append(nn.Linear(inputs, outputs))
    return nn.Sequential(*layers)


class ActorCritic(nn.Module):
    """The shared trunk (two layers), then the actor's logits and the critic's value."""

    def __init__(self, observations: int, actions: int, config: Deepk8sConfig) -> None:
        super().__init__()
        self.trunk = layers(observations, config.trunk)
        self.pi = layers(config.trunk[-1], config.head, actions)
        self.v = layers(config.trunk[-1], config.head, 1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        shared = self.trunk(obs)
        return self.pi(shared), self.v(shared).squeeze(-1)


def summary(free: torch.Tensor, slots: torch.Tensor, tail: torch.Tensor) -> torch.Tensor:
    """What the pairs network knows of the whole state, whatever the machine count: the mean and the largest
    free resources over machines, the mean slot, the share of slots filled, and the backlog."""
    filled = (slots != 0).any(-1).float().mean(-1, keepdim=True)
    return torch.cat([free.mean(-2), free.amax(-2), slots.mean(-2), filled, tail], -1)


def summary_size(resources: int) -> int:
    return 4 * resources + 4


class PairActorCritic(nn.Module):
    """Every (machine, slot) pair scored by one set of weights; waiting and the value from the state's summary.

    A pair's first layer adds what the machine, the task, the machine's room
    left after the task (free - demand) and the summary each contribute,
    ``relu(W_m f + W_s t + W_l (f - d) + W_c c + b)``, then the same small MLP
    scores every pair. The logits are the pairs' scores, machine by machine
    (action ``machine * window + slot``), then the wait's, as the flat
    network's; nothing in the weights depends on the number of machines.
    """

    def __init__(self, resources: int, config: Deepk8sConfig) -> None:
        super().__init__()
        self.resources, self.window = resources, config.window
        first, *rest = config.trunk
        context = summary_size(resources)
        self.machine_in = nn.Linear(resources, first, bias=False)
        self.slot_in = nn.Linear(resources + 1, first, bias=False)
        self.left_in = nn.Linear(resources, first, bias=False)
        self.context_in = nn.Linear(context, first)
        self.pair = layers(first, (*rest, *config.head), 1)
        self.wait = layers(context, config.head, 1)
        self.v = layers(context, (*config.trunk, *config.head), 1)

    def forward(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        free, slots, tail = Deepk8sEncoding.split(obs, self.resources, self.window)
        context = summary(free, slots, tail)
        left = free[..., :, None, :] - slots[..., None, :, : self.resources]
        first = (self.machine_in(free)[..., :, None, :] + self.slot_in(slots)[..., None, :, :] + self.left_in(left)
                 + self.context_in(context)[..., None, None, :])
        scores = self.pair(torch.relu(first)).squeeze(-1).flatten(-2)
        return torch.cat([scores, self.wait(context)], -1), self.v(context).squeeze(-1)


def make_network(config: Deepk8sConfig, observations: int, actions: int, resources: int) -> nn.Module:
    """The actor-critic ``config.network`` names, for observations and actions of these sizes."""
    if config.network == "pairs":
        return PairActorCritic(resources, config)
    return ActorCritic(observations, actions, config)


def masked_logits(logits: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    return logits.masked_fill(~mask, -1e9)


def optimizer_class(config: Deepk8sConfig) -> type[torch.optim.Optimizer]:
    """The torch optimiser ``config.optimizer`` names (Stable-Baselines3's and DAgger's updates)."""
    return {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}[config.optimizer]
