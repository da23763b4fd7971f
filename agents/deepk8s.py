"""Deepk8s (Zhao & Sun, 2021): an actor-critic that places tasks from a window of 10 onto the machines.

The paper, section by section, and where each part lives:

* 4.1-4.3, state, actions and reward: `cloudsim.envs.Deepk8sEnv` and its
  `Deepk8sEncoding` (observation, (slot, machine) actions plus wait, reward
  r = -sum_j t / d_j), which the trained broker below shares.
* 4.4, the network: `ActorCritic`, whose first two layers (the trunk) the
  actor and the critic share (``network="flat"``); or `PairActorCritic`, which
  scores every (slot, machine) pair with the same weights, so that a policy
  trained on 5 machines runs on any number (``network="pairs"``, the default).
* 4.5, training:
  - A3C, eq. 2-3: Stable-Baselines3's A2C, its synchronous form, with
    ``envs`` parallel environments: actor loss -log pi(a|s) (R - V(s)) minus
    beta H(pi), critic loss (R - V(s))^2;
  - PPO, eq. 4: sb3-contrib's MaskablePPO, the clipped objective
    min(rho A, clip(rho, 1 - eps, 1 + eps) A) with rho = pi(a|s) / pi_old(a|s),
    plus the same entropy bonus; the mask keeps it to pairs that fit;
  - imitation of SJF by DAgger, eq. 5: `train_dagger` below. The learner acts;
    the expert (SJF on the same window) labels every state the learner visits;
    the labelled states are aggregated and sampled in minibatches to maximise
    sum log pi(a_expert | s) + beta H(pi(.|s)).
* 5, baselines: FCFS, Random, SJF and Tetris on the same window
  (`agents.heuristics.Windowed`).

A trained policy is a broker (`Deepk8sBroker`): it sees the window, acts
greedily among the pairs that fit, and waits (at most ``max_wait``) otherwise.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from agents.deepk8s_config import Deepk8sConfig, shipped_checkpoint
from agents.heuristics import ShortestJobFirst, Windowed
from agents.kit import (
    CheckpointMismatchError,
    TrainingLog,
    read_checkpoint,
    restore_rng,
    rng_state,
    save_checkpoint,
    training_device,
    trim_log,
    unusable_checkpoint,
)
from cloudsim import arithmetic
from cloudsim import ClusterSpec, ClusterView, Decision, JobSpec
from cloudsim.broker import as_plan
from cloudsim.envs import Deepk8sEncoding, Deepk8sEnv, deepk8s_cluster

__all__ = ["ActorCritic", "Deepk8sBroker", "Deepk8sConfig", "Deepk8sPolicy", "load_policy", "train"]

AGENT = "deepk8s"
POLICY_FILE = "policy.pt"  # the broker's checkpoint: weights, config, cluster
Workload = Callable[[int], Sequence[JobSpec]]


# ------------------------------------------------------------------ the network (4.4)
def _layers(inputs: int, sizes: Sequence[int], outputs: int | None = None) -> nn.Sequential:
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
        self.trunk = _layers(observations, config.trunk)
        self.pi = _layers(config.trunk[-1], config.head, actions)
        self.v = _layers(config.trunk[-1], config.head, 1)

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
        self.pair = _layers(first, (*rest, *config.head), 1)
        self.wait = _layers(context, config.head, 1)
        self.v = _layers(context, (*config.trunk, *config.head), 1)

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


# ------------------------------------------------------------------ the trained policy as a broker
def _numpy_layers(state: dict[str, torch.Tensor], prefix: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (weights as inputs x outputs, bias) of each Linear under ``prefix`` in a state dict, in order."""
    names = sorted({k.rsplit(".", 1)[0] for k in state if k.startswith(prefix + ".")},
                   key=lambda k: int(k.split(".")[1]))
    return [(state[f"{n}.weight"].numpy().T.copy(), state[f"{n}.bias"].numpy().copy()) for n in names]


def _distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The distinct rows of a matrix and each row's index among them, rows compared bit by bit.

    A row of at most 8 bytes (two float32 resources) is sorted as one integer: 40 times faster than
    ``np.unique(axis=0)`` on 4,034 machines."""
    rows = np.ascontiguousarray(rows)
    width = rows.shape[1] * rows.itemsize
    if width <= 8:
        padded = np.zeros((len(rows), 8), dtype=np.uint8)
        padded[:, :width] = rows.view(np.uint8)
        keys = padded.view(np.uint64).ravel()
    else:
        keys = rows.view(np.dtype((np.void, width))).ravel()
    _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    return rows[first], inverse.reshape(-1)


class _NumpyPairs:
    """`PairActorCritic`'s actor in numpy. Machines with the same free resources get the same scores, so each
    distinct free vector among the machines where something fits is scored once: on a large cluster most
    machines are alike (empty, or full)."""

    def __init__(self, state: dict[str, torch.Tensor], resources: int, window: int) -> None:
        weight = {name: state[f"{name}.weight"].numpy().T for name in ("machine_in", "slot_in", "left_in",
                                                                        "context_in")}
        self.resources, self.window = resources, window
        # f W_m + t W_s + (f - d) W_l = f (W_m + W_l) + t W_s - d W_l: a machine's part and a slot's part.
        self.machine = weight["machine_in"] + weight["left_in"]
        self.slot = weight["slot_in"].copy()
        self.slot[:resources] -= weight["left_in"]
        self.context = weight["context_in"], state["context_in.bias"].numpy()
        self.pair = arithmetic.Network(_numpy_layers(state, "pair"))
        self.wait = arithmetic.Network(_numpy_layers(state, "wait"))

    def logits(self, obs: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        """The actor's logits; with ``mask``, only the machines with an allowed pair are scored (-inf else)."""
        free, slots, tail = Deepk8sEncoding.split(obs, self.resources, self.window)
        machines = len(free)
        context = np.concatenate([arithmetic.column_means(free), free.max(0), arithmetic.column_means(slots),
                                  [(slots != 0).any(-1).mean()], tail])
        rows = (np.arange(machines) if mask is None
                else np.flatnonzero(mask[:-1].reshape(machines, self.window).any(axis=1)))
        logits = np.full(machines * self.window + 1, -np.inf, dtype=np.float32)
        if len(rows):
            distinct, inverse = _distinct_rows(free[rows])
            weights, bias = self.context
            first = arithmetic.dense(distinct, self.machine)[:, None, :] + \
                (arithmetic.dense(slots, self.slot) + arithmetic.dense(context, weights, bias))[None]
            scores = self.pair(np.maximum(first, 0))[..., 0]
            logits[:-1].reshape(machines, self.window)[rows] = scores[inverse]
        logits[-1] = self.wait(context)[0]
        return logits


class Deepk8sPolicy:
    """A trained actor in numpy (a decision is a few small matrix products, `cloudsim.arithmetic`'s: the same
    bits on every processor; no torch at decide time)."""

    def __init__(self, state: dict[str, torch.Tensor], config: Deepk8sConfig, cluster: ClusterSpec,
                 path: Path | None = None) -> None:
        self.config = config
        self.cluster = cluster
        self.path = path
        self.encoding = Deepk8sEncoding(cluster, config.window)  # the training cluster's
        self.state = state
        self.resources = len(cluster.resources)
        expected = "machine_in.weight" if config.network == "pairs" else "trunk.0.weight"
        if expected not in state:
            raise CheckpointMismatchError(f"{path or 'this Deepk8s policy'}: its config names the {config.network} "
                                          f"network but its weights are of another; the file is inconsistent, "
                                          f"train it again", path=path)
        if config.network == "pairs":
            self.pairs = _NumpyPairs(state, self.resources, config.window)
        else:
            self.layers = arithmetic.Network(_numpy_layers(state, "trunk") + _numpy_layers(state, "pi"))

    @property
    def any_machines(self) -> bool:
        """Whether the network takes any number of machines (its weights are shared over pairs)."""
        return self.config.network == "pairs"

    @property
    def learned_to_wait(self) -> bool:
        """Whether waiting while a task fits is the policy's own choice. DAgger imitates SJF, which never
        waits then: its wait score is pushed below the expert's pair and nothing else, so off the training
        cluster it is an extrapolation (on v2017's first 8 jobs and 1,313 machines it waited while tasks fit,
        for ten times first-fit's makespan). Only reinforcement learns when waiting pays."""
        return self.config.algo != "dagger"

    def logits(self, obs: np.ndarray, mask: np.ndarray | None = None) -> np.ndarray:
        if self.any_machines:
            return self.pairs.logits(obs, mask)
        return self.layers(obs)

    def act(self, obs: np.ndarray, mask: np.ndarray) -> int:
        """The most likely action among those the mask allows."""
        return int(np.argmax(np.where(mask, self.logits(obs, mask), -np.inf)))


class Deepk8sBroker:
    """A trained Deepk8s policy as a broker: greedy among the window's pairs that fit, else wait.

    It does not wait while nothing runs (it takes its best pair then), nor, when
    trained by DAgger, while a pair fits (`Deepk8sPolicy.learned_to_wait`), nor
    while a pair fits on a cluster other than its training one (the same machines
    of the same capacities): when a wait pays is learned from the arrivals and
    durations of one workload on one cluster, and carried to another it is a
    guess (the pairs PPO policy, on v2017's first 8 jobs and 1,313 machines,
    waited while tasks fit for ten times first-fit's makespan). After
    a wait it is asked again at the next event or after ``max_wait`` time units
    (``wake_after``), as in the environment it was trained in. A
    pairs network sees the cluster it runs on (free resources as fractions of
    its largest machine); a flat one only its training cluster's shape.
    """

    empty_rounds = False  # nothing waiting: no round needed (`cloudsim.Simulation.run`)

    def __init__(self, policy: Deepk8sPolicy) -> None:
        self.policy = policy
        self.name = policy.config.broker_name
        self.wake_after = policy.config.max_wait
        self._encoding = policy.encoding
        self._capacity: np.ndarray | None = None
        self._on_training_cluster = True  # of the cluster being run (`_encoding_for`)
        self._last: tuple[tuple[bytes, bytes] | None, int] = (None, 0)  # (observation, mask) -> the action taken

    def check_cluster(self, cluster: ClusterSpec) -> list[str]:
        """Refuse a cluster the network cannot read; say what differs from the training cluster."""
        trained = self.policy.cluster
        where = self.policy.path or "this Deepk8s policy"
        if cluster.devices:  # its observation has no device columns: it cannot see why a machine fits or not
            raise CheckpointMismatchError(
                f"{where} observes cpu and memory only, not devices (GPUs); on a GPU cluster use a GPU policy "
                "(fgd, gpu-best-fit, ...) or a heuristic", path=self.policy.path)
        shown = len(trained.resources)
        extra = tuple(cluster.resources[shown:])
        if tuple(cluster.resources[:shown]) != tuple(trained.resources) or (extra and not self.policy.any_machines):
            first = "first " if self.policy.any_machines else ""
            raise CheckpointMismatchError(
                f"{where} reads the resources {', '.join(trained.resources)}; this cluster has "
                f"{', '.join(cluster.resources)}. Give a cluster whose {first}resources are those, or train a "
                f"policy for these (cloudsim train deepk8s ...)", path=self.policy.path)
        if cluster.machines != trained.machines and not self.policy.any_machines:
            raise CheckpointMismatchError(
                f"{where} is a flat network trained for {trained.machines} machines; this cluster has "
                f"{cluster.machines}. Run it on such a cluster, or use a pairs network (the shipped deepk8s, or "
                f"cloudsim train deepk8s --network pairs), which runs on any number", path=self.policy.path)
        notes = []
        if extra:
            notes.append(f"{self.name}: sees {', '.join(trained.resources)}; {', '.join(extra)} is not shown to it "
                         f"(the engine still checks it)")
        if cluster.machines != trained.machines:
            notes.append(f"{self.name}: trained on {trained.machines} machines, running on {cluster.machines}; "
                         f"every machine is scored by the same weights, the cluster seen through means and maxima")
        if not np.allclose(cluster.capacity_array()[:, :shown], trained.capacity_array()[0]):
            scale = "this cluster's largest machine" if self.policy.any_machines else "the training machines"
            notes.append(f"{self.name}: trained on machines of {trained.capacity_array()[0].tolist()}, running on "
                         f"machines of other capacities; it sees resources as fractions of {scale}")
        if self.policy.learned_to_wait and not self._trained_on(cluster.capacity_array()):
            notes.append(f"{self.name}: not its training cluster, so it does not wait while a task fits (when a "
                         f"wait pays was learned on that cluster only)")
        return notes

    def _trained_on(self, capacity: np.ndarray) -> bool:
        """Whether machines of these capacities are the training cluster's (the shown resources alike)."""
        return bool(np.array_equal(capacity[:, : self.policy.resources], self.policy.cluster.capacity_array()))

    def _encoding_for(self, view: ClusterView) -> Deepk8sEncoding:
        """The encoding of the cluster being run (a pairs network), else of the training cluster."""
        if self._capacity is not view.capacity:
            if self._capacity is None or not np.array_equal(self._capacity, view.capacity):
                self._on_training_cluster = self._trained_on(view.capacity)
                if self.policy.any_machines:
                    self._encoding = Deepk8sEncoding(view.capacity, self.policy.config.window,
                                                     shown=self.policy.resources)
            self._capacity = view.capacity
        return self._encoding

    def decide(self, view: ClusterView) -> Decision | None:
        encoding = self._encoding_for(view)
        mask = encoding.action_mask(view)
        if not mask[:-1].any():
            return None
        if not (self.policy.learned_to_wait and self._on_training_cluster) or not (view.free < view.capacity).any():
            # When nothing runs, a wait could end only at an arrival, and after the last one never (the training
            # environment cuts such an episode short as stalled): an idle cluster takes the best pair.
            mask[-1] = False
        obs = encoding.observe(view)
        # The action is a function of the observation and the mask alone (the greedy choice): after a wait
        # that nothing changed (woken by ``wake_after``), they are the same, and so is the action.
        key = (obs.tobytes(), mask.tobytes())
        if key != self._last[0]:
            self._last = (key, self.policy.act(obs, mask))
        return encoding.decode(self._last[1], view)


def _cluster_entry(cluster: ClusterSpec) -> dict:
    return {"machines": cluster.machines, "resources": list(cluster.resources),
            "capacity": cluster.capacity_array().tolist()}


def _cluster_of(entry: dict) -> ClusterSpec:
    capacity = entry["capacity"]
    if len(set(map(tuple, capacity))) != 1:
        raise ValueError("a Deepk8s policy is trained on identical machines")
    return ClusterSpec.uniform(int(entry["machines"]), dict(zip(entry["resources"], capacity[0])))


def save_policy(path: str | Path, net: ActorCritic, config: Deepk8sConfig, cluster: ClusterSpec,
                extra: dict | None = None) -> Path:
    """The broker's checkpoint: the network's weights with the config and the cluster it was trained for."""
    return save_checkpoint(path, agent=AGENT, config=config, model=net.state_dict(),
                           extra={"cluster": _cluster_entry(cluster), **(extra or {})})


def load_policy(path: str | Path | None = None, algo: str = "ppo") -> Deepk8sPolicy:
    """The policy saved at ``path`` (default: the checkpoint shipped for ``algo``)."""
    path = Path(path) if path is not None else shipped_checkpoint(algo)
    saved = read_checkpoint(path, agent=AGENT, title="Deepk8s", keys=("cluster",), config_type=Deepk8sConfig,
                            older={"network": "flat"},  # written before the pairs network existed
                            fix="train one with `cloudsim train deepk8s --out DIR` and pass DIR/policy.pt")
    return Deepk8sPolicy(saved["model"], saved["config"], _cluster_of(saved["cluster"]), path)


# ------------------------------------------------------------------ environments
def make_env(config: Deepk8sConfig, workload: Workload, cluster: ClusterSpec) -> Deepk8sEnv:
    return Deepk8sEnv(workload, cluster, window=config.window, max_wait=config.max_wait)


def expert_action(env: Deepk8sEnv, expert: Windowed) -> int:
    """What SJF on the same window does in the environment's current state, as an action: the first
    decision of its plan (the environment takes one decision per step)."""
    plan = as_plan(expert.decide(env.view))
    return env.encoding.encode(plan[0] if plan else None)


# ------------------------------------------------------------------ A2C and PPO (Stable-Baselines3)
def _sb3_policy(config: Deepk8sConfig, resources: int) -> tuple[type | str, dict]:
    """The SB3 policy class and its keyword arguments for ``config.network`` (PPO's masked class or A2C's)."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    optimizer = {"optimizer_class": _optimizer(config), "optimizer_kwargs": {}}
    if config.network == "pairs":
        base = MaskableActorCriticPolicy if config.algo == "ppo" else ActorCriticPolicy

        class Heads(nn.Module):
            """`PairActorCritic` where SB3 expects its MLP extractor: its outputs are already the logits and the
            value."""

            def __init__(self, actions: int) -> None:
                super().__init__()
                self.net = PairActorCritic(resources, config)
                self.latent_dim_pi, self.latent_dim_vf = actions, 1

            def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
                logits, value = self.net(features)
                return logits, value[..., None]

            def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
                return self.forward(features)[0]

            def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
                return self.forward(features)[1]

        class PairPolicy(base):
            def _build_mlp_extractor(self) -> None:
                self.mlp_extractor = Heads(int(self.action_space.n))

            def _build(self, lr_schedule) -> None:
                super()._build(lr_schedule)
                # No layer of SB3's after the network's own logits and value (the optimiser then sees only ours).
                self.action_net, self.value_net = nn.Identity(), nn.Identity()
                self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

        return PairPolicy, {"ortho_init": False, **optimizer}

    class SharedTrunk(BaseFeaturesExtractor):
        """The two layers the actor and the critic share (SB3 shares the features extractor)."""

        def __init__(self, observation_space, sizes: tuple[int, ...]) -> None:
            super().__init__(observation_space, sizes[-1])
            self.trunk = _layers(observation_space.shape[0], sizes)

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            return self.trunk(obs)

    return "MlpPolicy", {"features_extractor_class": SharedTrunk, "features_extractor_kwargs": {"sizes": config.trunk},
                         "share_features_extractor": True,
                         "net_arch": {"pi": list(config.head), "vf": list(config.head)}, "activation_fn": nn.ReLU,
                         **optimizer}


def _optimizer(config: Deepk8sConfig) -> type[torch.optim.Optimizer]:
    return {"adam": torch.optim.Adam, "sgd": torch.optim.SGD}[config.optimizer]


def from_sb3(policy, config: Deepk8sConfig, observations: int, actions: int, resources: int) -> nn.Module:
    """The network (`ActorCritic` or `PairActorCritic`) holding an SB3 actor-critic policy's weights."""
    if config.network == "pairs":
        net = PairActorCritic(resources, config)
        net.load_state_dict(policy.mlp_extractor.net.state_dict())
        return net
    net = ActorCritic(observations, actions, config)
    net.trunk.load_state_dict(policy.features_extractor.trunk.state_dict())
    net.pi.load_state_dict(nn.Sequential(*policy.mlp_extractor.policy_net, policy.action_net).state_dict())
    net.v.load_state_dict(nn.Sequential(*policy.mlp_extractor.value_net, policy.value_net).state_dict())
    return net


def check_init(policy: Deepk8sPolicy, config: Deepk8sConfig) -> None:
    """Refuse to start a training of ``config`` from a policy of another network."""
    if policy.config.network != config.network:
        raise CheckpointMismatchError(f"{policy.path}: a {policy.config.network} network; this training builds a "
                                      f"{config.network} one: give --network {policy.config.network}",
                                      path=policy.path)


def to_sb3(policy: Deepk8sPolicy, sb3_policy, config: Deepk8sConfig) -> None:
    """Copy a trained policy's actor (all but the critic's own layers) into an SB3 policy of ``config``."""
    check_init(policy, config)
    state = {k: torch.as_tensor(v) for k, v in policy.state.items()}
    try:
        if config.network == "pairs":
            actor = {k: v for k, v in state.items() if not k.startswith("v.")}
            missing, unexpected = sb3_policy.mlp_extractor.net.load_state_dict(actor, strict=False)
            if unexpected or any(not k.startswith("v.") for k in missing):
                raise RuntimeError(f"missing {missing}, unexpected {unexpected}")
            return
        actor = nn.Sequential(*sb3_policy.mlp_extractor.policy_net, sb3_policy.action_net)
        sb3_policy.features_extractor.trunk.load_state_dict(
            {k.split(".", 1)[1]: v for k, v in state.items() if k.startswith("trunk.")})
        actor.load_state_dict({k.split(".", 1)[1]: v for k, v in state.items() if k.startswith("pi.")})
    except RuntimeError as err:
        raise CheckpointMismatchError(f"{policy.path}: its network does not have this training's layer sizes "
                                      f"({err}); train with its trunk and head sizes", path=policy.path) from None


def _episode_returns(infos: Sequence[dict]) -> list[float]:
    return [info["episode"]["r"] for info in infos if "episode" in info]


def train_sb3(config: Deepk8sConfig, workload: Workload, out: Path, cluster: ClusterSpec, *, resume: bool,
              log: TrainingLog, progress: bool, save_every: int, device: str = "auto") -> Path:
    """A2C or MaskablePPO on ``config.envs`` environments; ``out/model.zip`` holds the state to resume from.

    With ``config.init``, a new training's actor starts from that policy's (the critic starts untrained).
    """
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import A2C
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import VecNormalize
    from tqdm.auto import tqdm

    torch.set_num_threads(1)  # tiny networks: threads cost more than they give, and the envs need the cores
    envs = make_vec_env(lambda: make_env(config, workload, cluster), n_envs=config.envs, seed=config.seed)
    # Rewards are divided by a running estimate of the return's spread (returns reach -thousands while
    # the policy still waits a lot); the logged rewards are the environment's own.
    statistics = out / "reward_scale.pkl"
    algorithm = MaskablePPO if config.algo == "ppo" else A2C
    saved = out / "model.zip"
    resources = len(cluster.resources)
    policy_class, policy_kwargs = _sb3_policy(config, resources)
    if resume:
        try:
            envs = VecNormalize.load(str(statistics), envs)
            model = algorithm.load(saved, env=envs, device=training_device(device))
        except Exception as err:  # SB3 raises what zipfile, pickle or torch raise for a damaged file
            raise unusable_checkpoint(out, f"its {config.algo.upper()} state (model.zip, reward_scale.pkl) cannot be "
                                      f"read ({type(err).__name__}: {err})", agent=AGENT, title="Deepk8s training",
                                      fix="start a new training in another folder") from None
    else:
        envs = VecNormalize(envs, norm_obs=False, norm_reward=True, gamma=config.gamma)
        if config.algo == "ppo":
            model = MaskablePPO(policy_class, envs, learning_rate=config.learning_rate, n_steps=config.steps_per_env,
                                batch_size=config.minibatch, n_epochs=config.epochs, gamma=config.gamma,
                                gae_lambda=config.gae_lambda, clip_range=config.clip, ent_coef=config.entropy,
                                policy_kwargs=policy_kwargs, seed=config.seed,
                                device=training_device(device))
        else:
            model = A2C(policy_class, envs, learning_rate=config.learning_rate, n_steps=config.a2c_steps,
                        gamma=config.gamma, gae_lambda=1.0, ent_coef=config.entropy,
                        normalize_advantage=False, policy_kwargs=policy_kwargs, seed=config.seed,
                        device=training_device(device))
    if config.init is not None and not resume:
        to_sb3(load_policy(config.init), model.policy, config)
    model.set_logger(Logger(folder=None, output_formats=[]))  # losses are read from it; TrainingLog writes them
    per_iteration = config.envs * config.steps_per_env
    done = model.num_timesteps // per_iteration
    space = envs.observation_space.shape[0], envs.action_space.n

    def save() -> None:
        partial = out / "model.partial.zip"
        model.save(partial)
        envs.save(str(out / "reward_scale.partial.pkl"))
        os.replace(out / "reward_scale.partial.pkl", statistics)
        os.replace(partial, saved)
        save_policy(out / POLICY_FILE, from_sb3(model.policy, config, *space, resources), config, cluster,
                    extra={"iterations": model.num_timesteps // per_iteration})

    class Iterations(BaseCallback):
        """One log row per iteration (its episodes' returns, the update's losses), checkpoints, a progress bar."""

        def _on_training_start(self) -> None:
            self.iteration, self.returns, self.started = done, [], time.perf_counter()
            self.bar = tqdm(total=config.iterations, initial=done, unit="it", desc=f"deepk8s {config.algo}",
                            disable=not progress)

        def _on_step(self) -> bool:
            self.returns += _episode_returns(self.locals["infos"])
            return True

        def _on_rollout_start(self) -> None:  # after an update: log the iteration if its steps are done
            if self.model.num_timesteps >= (self.iteration + 1) * per_iteration:
                self.finish_iteration()

        def finish_iteration(self) -> None:
            self.iteration += 1
            values = self.model.logger.name_to_value
            log.write({"iteration": self.iteration, "timesteps": self.model.num_timesteps,
                       "episodes": len(self.returns),
                       "reward": float(np.mean(self.returns)) if self.returns else float("nan"),
                       "policy_loss": values.get("train/policy_gradient_loss", values.get("train/policy_loss")),
                       "value_loss": values.get("train/value_loss"), "entropy_loss": values.get("train/entropy_loss"),
                       "wall_s": time.perf_counter() - self.started})
            self.returns = []
            self.bar.update()
            if self.iteration % save_every == 0:
                save()

        def _on_training_end(self) -> None:
            self.finish_iteration()
            self.bar.close()

    remaining = config.iterations - done
    if remaining > 0:
        try:
            model.learn(total_timesteps=remaining * per_iteration, callback=Iterations(), log_interval=None,
                        reset_num_timesteps=not resume)
        finally:
            envs.close()
    save()
    return out / POLICY_FILE


# ------------------------------------------------------------------ DAgger (eq. 5)
def train_dagger(config: Deepk8sConfig, workload: Workload, out: Path, cluster: ClusterSpec, *, resume: bool,
                 log: TrainingLog, progress: bool, save_every: int, device: str = "auto") -> Path:
    """DAgger: the learner acts, SJF labels every visited state, minibatches from the aggregated set.

    ``out/dagger.pt`` holds the whole state (weights, optimiser, random states,
    the aggregated set), so a resumed training continues exactly as an
    uninterrupted one.
    """
    from tqdm.auto import tqdm

    torch.set_num_threads(1)
    rng = np.random.default_rng(config.seed)
    torch.manual_seed(config.seed)
    env = make_env(config, workload, cluster)
    expert = Windowed(ShortestJobFirst(), config.window)
    net = make_network(config, env.observation_space.shape[0], env.action_space.n, len(cluster.resources))
    where = training_device(device)  # the updates run there; the learner acts with ``net``, on the CPU
    learner = net if where.type == "cpu" else copy.deepcopy(net).to(where)
    optimiser = _optimizer(config)(learner.parameters(), lr=config.learning_rate)
    states, masks, labels = [], [], []  # the aggregated set D
    done = 0
    state_file = out / "dagger.pt"
    if resume:
        saved = read_checkpoint(state_file, agent=AGENT + "-dagger", title="Deepk8s DAgger",
                                keys=("iteration", "states", "masks", "labels"),
                                fix=f"the training in {out} cannot be resumed; start it afresh in another folder "
                                    "(cloudsim train deepk8s --algo dagger --out NEW)")
        net.load_state_dict(saved["model"])
        learner.load_state_dict(saved["model"])
        optimiser.load_state_dict(saved["optimizer"])
        restore_rng(saved, rng)
        done = int(saved["iteration"])
        states, masks, labels = ([saved[name].numpy()] for name in ("states", "masks", "labels"))

    def save(iteration: int) -> None:
        data = {name: torch.as_tensor(np.concatenate(rows))  # tensors: a checkpoint is read with weights_only
                for name, rows in (("states", states), ("masks", masks), ("labels", labels))}
        save_checkpoint(state_file, agent=AGENT + "-dagger", config=config, model=net.state_dict(),
                        optimizer=optimiser.state_dict(), rng=rng_state(rng), extra={"iteration": iteration, **data})
        save_policy(out / POLICY_FILE, net, config, cluster, extra={"iterations": iteration})

    started = time.perf_counter()
    bar = tqdm(total=config.iterations, initial=done, unit="it", desc="deepk8s dagger", disable=not progress)
    for iteration in range(done + 1, config.iterations + 1):
        # Roll out the learner's policy; the expert labels each state it visits.
        returns, agreed, visited = [], 0, 0
        for _ in range(config.dagger_episodes):
            obs, _ = env.reset(seed=int(rng.integers(2**31)))
            total, finished = 0.0, False
            while not finished:
                mask = env.action_masks()
                with torch.no_grad():
                    logits, _ = net(torch.as_tensor(obs))
                probs = torch.softmax(masked_logits(logits, torch.as_tensor(mask)), -1).numpy().astype(np.float64)
                action = int(rng.choice(len(probs), p=probs / probs.sum()))
                label = expert_action(env, expert)
                states.append(obs[None])
                masks.append(mask[None])
                labels.append(np.array([label]))
                agreed += action == label
                visited += 1
                obs, reward, terminated, truncated, _ = env.step(action)
                total += reward
                finished = terminated or truncated
            returns.append(total)
        # Maximise sum log pi(a_expert|s) + beta H(pi(.|s)) over minibatches of D.
        data_s, data_m, data_l = (np.concatenate(a) for a in (states, masks, labels))
        states, masks, labels = [data_s], [data_m], [data_l]
        losses = []
        for _ in range(config.dagger_updates):
            pick = rng.integers(len(data_l), size=min(config.minibatch, len(data_l)))
            logits, _ = learner(torch.as_tensor(data_s[pick], device=where))
            log_pi = torch.log_softmax(masked_logits(logits, torch.as_tensor(data_m[pick], device=where)), -1)
            chosen = log_pi.gather(1, torch.as_tensor(data_l[pick], device=where).long()[:, None]).squeeze(1)
            entropy = -(log_pi.exp() * log_pi).sum(-1)
            loss = -(chosen + config.entropy * entropy).mean()
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            losses.append(loss.item())
        if learner is not net:
            net.load_state_dict(learner.state_dict())
        log.write({"iteration": iteration, "episodes": len(returns), "reward": float(np.mean(returns)),
                   "imitation_loss": float(np.mean(losses)), "expert_agreement": agreed / max(visited, 1),
                   "dataset": len(data_l), "wall_s": time.perf_counter() - started})
        bar.update()
        if iteration % save_every == 0 or iteration == config.iterations:
            save(iteration)
    bar.close()
    if done >= config.iterations:
        save(done)
    return out / POLICY_FILE


# ------------------------------------------------------------------ one entry point
def train(config: Deepk8sConfig, workload: Workload, out: str | Path, *, cluster: ClusterSpec | None = None,
          resume: bool = False, tensorboard: bool = False, progress: bool = True, save_every: int = 10,
          device: str = "auto") -> Path:
    """Train a Deepk8s agent with ``config.algo`` on sequences ``workload(seed)``; return the policy's checkpoint.

    ``out`` gets ``policy.pt`` (the broker's checkpoint), the algorithm's state
    to resume from (``model.zip`` or ``dagger.pt``), ``config.json`` and the log
    (``log.csv``, ``log.jsonl``, one row per iteration), every ``save_every``
    iterations and at the end. ``device`` (`agents.kit.DEVICES`) is where the
    updates run (Stable-Baselines3 keeps its whole policy there; DAgger acts with
    a CPU copy refreshed after each update).
    """
    import json

    out = Path(out)
    if config.init is not None and not resume:  # before anything is written
        check_init(load_policy(config.init), config)
    out.mkdir(parents=True, exist_ok=True)
    cluster = cluster if cluster is not None else deepk8s_cluster()
    (out / "config.json").write_text(json.dumps(dataclasses.asdict(config), indent=2) + "\n")
    if resume:  # the log goes on from the saved state, not from the last iteration logged
        saved = read_checkpoint(out / POLICY_FILE, agent=AGENT, keys=("iterations",))
        trim_log(out, int(saved["iterations"]))
    trainer = train_dagger if config.algo == "dagger" else train_sb3
    with TrainingLog(out, tensorboard=tensorboard) as log:
        try:
            return trainer(config, workload, out, cluster, resume=resume, log=log, progress=progress,
                           save_every=save_every, device=device)
        except KeyboardInterrupt as interrupted:
            if (out / POLICY_FILE).is_file():
                done = read_checkpoint(out / POLICY_FILE, agent=AGENT, keys=("iterations",))["iterations"]
                interrupted.add_note(f"the training saved at iteration {done} is in {out}; add --resume to "
                                     f"continue it")
            raise
