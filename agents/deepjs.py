"""DeepJS (Li & Hu, ICBDC 2019): a learned fitness of every fit machine-task pair, trained by REINFORCE.

The paper, section by section, and where each part lives here:

* 3.2.1-3.2.2 state and action: the list of fit machine-task pairs; one
  decision starts one instance; when the list is empty the agent takes the
  *None* action, which ends the decision instant (`DeepJS.decide`).
* 3.2.4 agent: every pair's feature row (machine free cpu and memory; task cpu,
  memory, duration and waiting instances, section 4.1), normalised, goes
  through one fully connected network in one batched forward (`FitnessNet`,
  Table 1: 6 -> 3 -> 9 -> 6 -> 1, tanh); training samples a pair from the
  softmax over pairs, evaluation takes the best.
* 3.2.3 rewards: -1 per time step until all jobs finish, given on the None
  action (`MakespanReward`; DeepRM's slowdown and completion rewards too).
* 3.2.5 training, Algorithm 2: N trajectories per iteration on one chunk;
  returns-to-go q_t; baseline b_t = mean of q_t over the N trajectories at the
  same decision index, shorter ones padded with zeros; then, for each
  trajectory, theta <- theta + alpha * sum_t grad log pi(a_t | s_t) (q_t - b_t),
  all gradients taken at the same weights, so one Adam step (alpha = 0.001)
  along their mean (`returns_to_go`, `baselines`, `DeepJSTrainer.update`).
  The log-probabilities of all decisions of all N trajectories are recomputed
  in one batched forward with a softmax per decision (`segment_log_softmax`).
* 4.2 sliding chunks: 10 jobs per chunk, 10 iterations x 12 trajectories per
  chunk, the chunk's makespan recorded before training on it
  (`DeepJSTrainer.train_chunk`).

Rollouts run the network in numpy (a forward over a few hundred pairs costs
microseconds, and worker processes need no torch); updates run in torch.
"""

from __future__ import annotations

import dataclasses
import math
import os
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch
from torch import nn

from cloudsim import ClusterSpec, ClusterView, Decision, JobSpec, Simulation

__all__ = [
    "CompletionReward",
    "DeepJS",
    "DeepJSConfig",
    "DeepJSTrainer",
    "FitnessNet",
    "MakespanReward",
    "SlowdownReward",
    "Trajectory",
    "baselines",
    "load_policy",
    "read_checkpoint",
    "returns_to_go",
    "segment_log_softmax",
]

SHIPPED_CHECKPOINT = Path(__file__).with_name("checkpoints") / "deepjs_5x64.pt"


# ------------------------------------------------------------------ features
def _machine_free(resource: str):
    return lambda view, m, t: view.free[m, view.resources.index(resource)]


def _task_demand(resource: str):
    return lambda view, m, t: view.demand[t, view.resources.index(resource)]


FEATURES: dict[str, Callable[[ClusterView, np.ndarray, np.ndarray], np.ndarray]] = {
    "machine_cpu": _machine_free("cpu"),
    "machine_memory": _machine_free("memory"),
    "task_cpu": _task_demand("cpu"),
    "task_memory": _task_demand("memory"),
    "task_duration": lambda view, m, t: view.duration[t],
    "task_waiting": lambda view, m, t: view.waiting[t],
    "task_running": lambda view, m, t: view.running[t],
    "task_age": lambda view, m, t: view.time - view.arrival_time[t],
}
"""Named pair features: f(view, machines, tasks) -> one value per pair."""


PAPER_FEATURES = ("machine_cpu", "machine_memory", "task_cpu", "task_memory", "task_duration", "task_waiting")
"""Section 4.1: machine free cpu and memory; task cpu, memory, duration and waiting instances."""


@dataclass(frozen=True)
class DeepJSConfig:
    """Everything that defines a DeepJS agent and its training; saved with every checkpoint.

    ``features`` name entries of `FEATURES`; ``feature_mean`` / ``feature_std``
    normalise them (``(x - mean) / std``; `DeepJSTrainer` fits them on the
    training workload when left empty). ``hidden`` are the hidden layer sizes
    of Table 1. ``reward``: "makespan", "slowdown" or "completion".
    ``normalize_advantage`` scales each iteration's advantages to zero mean and
    unit variance (the paper is silent on it). ``gamma`` discounts the
    returns-to-go (Algorithm 2: 1).
    """

    features: tuple[str, ...] = PAPER_FEATURES
    hidden: tuple[int, ...] = (3, 9, 6)
    feature_mean: tuple[float, ...] = ()
    feature_std: tuple[float, ...] = ()
    reward: str = "makespan"
    learning_rate: float = 0.001
    iterations: int = 10
    trajectories: int = 12
    gamma: float = 1.0
    normalize_advantage: bool = True
    tick: float = 1.0
    seed: int = 0

    def __post_init__(self) -> None:
        unknown = [f for f in self.features if f not in FEATURES]
        if unknown:
            raise ValueError(f"unknown DeepJS features {unknown}; choose from {sorted(FEATURES)}")
        if self.reward not in REWARDS:
            raise ValueError(f"unknown reward {self.reward!r}; choose from {sorted(REWARDS)}")
        if self.feature_mean and len(self.feature_mean) != len(self.features):
            raise ValueError("feature_mean needs one value per feature")


# ------------------------------------------------------------------ network
class FitnessNet(nn.Module):
    """The fitness network of Table 1: features -> hidden layers (tanh) -> one score per pair."""

    def __init__(self, inputs: int, hidden: Sequence[int] = (3, 9, 6)) -> None:
        super().__init__()
        sizes = [inputs, *hidden]
        layers: list[nn.Module] = []
        for a, b in zip(sizes, sizes[1:]):
            layers += [nn.Linear(a, b), nn.Tanh()]
        layers.append(nn.Linear(sizes[-1], 1))
        self.layers = nn.Sequential(*layers)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.layers(x).squeeze(-1)


class NumpyFitness:
    """The same network as numpy arrays, for rollouts (no autograd, no torch in workers)."""

    def __init__(self, state: dict[str, np.ndarray], config: DeepJSConfig) -> None:
        linear = sorted({k.rsplit(".", 1)[0] for k in state}, key=lambda k: int(k.split(".")[1]))
        self.weights = [(np.asarray(state[f"{k}.weight"], dtype=np.float64).T,
                         np.asarray(state[f"{k}.bias"], dtype=np.float64)) for k in linear]
        self.mean = np.asarray(config.feature_mean or [0.0] * len(config.features))
        self.std = np.asarray(config.feature_std or [1.0] * len(config.features))

    def __call__(self, raw: np.ndarray) -> np.ndarray:
        h = (raw - self.mean) / self.std
        for w, b in self.weights[:-1]:
            h = np.tanh(h @ w + b)
        w, b = self.weights[-1]
        return (h @ w + b)[:, 0]


def segment_log_softmax(scores: torch.Tensor, segments: torch.Tensor, count: int) -> torch.Tensor:
    """log softmax of ``scores`` within each segment (``segments[i]`` in 0..count-1)."""
    top = torch.full((count,), -math.inf, dtype=scores.dtype).scatter_reduce(0, segments, scores, "amax")
    shifted = scores - top[segments].detach()
    total = torch.zeros(count, dtype=scores.dtype).index_add(0, segments, shifted.exp())
    return shifted - total.log()[segments]


# ------------------------------------------------------------------ rewards
class MakespanReward:
    """-1 per decision instant (one time step in tick mode) until all jobs finish (DeepJS 3.2.3)."""

    def __call__(self, view: ClusterView) -> float:
        return -1.0


class SlowdownReward:
    """-sum over jobs in the system of 1 / T_j (DeepRM 3.4): its total is minus the sum of slowdowns."""

    def __call__(self, view: ClusterView) -> float:
        lengths = view.job_length[view.jobs_in_system]
        return -float(np.sum(1.0 / lengths[lengths > 0]))


class CompletionReward:
    """-(number of jobs in the system) (DeepRM 3.4): its total is minus the sum of completion times."""

    def __call__(self, view: ClusterView) -> float:
        return -float(len(view.jobs_in_system))


REWARDS = {"makespan": MakespanReward, "slowdown": SlowdownReward, "completion": CompletionReward}


# ------------------------------------------------------------------ broker
@dataclass
class Trajectory:
    """One episode's decisions. Step k chose pair ``chosen[k]`` among ``pairs[k]`` rows of
    ``features`` (``chosen = -1``: the None action, the only option) and got ``rewards[k]``."""

    features: list[np.ndarray] = field(default_factory=list)
    pairs: list[int] = field(default_factory=list)
    chosen: list[int] = field(default_factory=list)
    rewards: list[float] = field(default_factory=list)
    makespan: float = math.nan

    def packed(self) -> "Trajectory":
        """The same trajectory with the features as one float32 array (compact to send between processes)."""
        rows = np.concatenate(self.features).astype(np.float32) if self.features else np.empty((0, 0), np.float32)
        return dataclasses.replace(self, features=[rows])


class DeepJS:
    """The DeepJS broker: scores every fit pair with the fitness network and starts one instance.

    Args:
        policy: the network (`NumpyFitness`) and its config, e.g. from `load_policy`.
        sample: draw the pair from the softmax over pairs (training) instead of
            taking the best (evaluation; the first best pair on ties).
        seed: seed of the sampling.
        record: keep a `Trajectory` of the episode (features, choices, rewards).
    """

    name = "deepjs"

    def __init__(self, policy: tuple[NumpyFitness, DeepJSConfig], *, sample: bool = False, seed: int | None = 0,
                 record: bool = False) -> None:
        self.fitness, self.config = policy
        self.sample = sample
        self.rng = np.random.default_rng(seed)
        self.reward = REWARDS[self.config.reward]()
        self.trajectory = Trajectory() if record else None

    def features(self, view: ClusterView, machines: np.ndarray, tasks: np.ndarray) -> np.ndarray:
        """Raw (unnormalised) feature rows of the given pairs, shape (pairs, features)."""
        if self.config.features == PAPER_FEATURES:  # the paper's six in one gather: the rollouts' hot path
            r = [view.resources.index("cpu"), view.resources.index("memory")]
            out = np.empty((len(tasks), 6))
            out[:, :2] = view.free[machines][:, r]
            out[:, 2:4] = view.demand[tasks][:, r]
            out[:, 4] = view.duration[tasks]
            out[:, 5] = view.waiting[tasks]
            return out
        return np.column_stack([FEATURES[name](view, machines, tasks) for name in self.config.features])

    def decide(self, view: ClusterView) -> Decision | None:
        machines, tasks = view.fit_pairs
        if len(tasks) == 0:
            if self.trajectory is not None:
                self._record(None, -1, self.reward(view))
            return None
        raw = self.features(view, machines, tasks)
        scores = self.fitness(raw)
        if self.sample:
            p = np.exp(scores - scores.max())
            cumulative = np.cumsum(p)
            pick = int(np.searchsorted(cumulative, self.rng.random() * cumulative[-1], side="right"))
            pick = min(pick, len(p) - 1)
        else:
            pick = int(np.argmax(scores))
        if self.trajectory is not None:
            self._record(raw, pick, 0.0)
        return Decision(int(machines[pick]), int(tasks[pick]))

    def _record(self, raw: np.ndarray | None, pick: int, reward: float) -> None:
        t = self.trajectory
        if raw is not None:
            t.features.append(raw)
        t.pairs.append(0 if raw is None else len(raw))
        t.chosen.append(pick)
        t.rewards.append(reward)


def read_checkpoint(path: str | Path | None = None) -> dict:
    """A checkpoint written by `DeepJSTrainer.save` (None: the shipped one), with its ``config`` as a
    `DeepJSConfig` and its ``cluster`` as a `ClusterSpec`; also ``model``, ``optimizer``, ``log``..."""
    path = Path(path) if path is not None else SHIPPED_CHECKPOINT
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no DeepJS checkpoint there (train one with `cloudsim train deepjs`)")
    saved = torch.load(path, weights_only=True)
    saved["config"] = DeepJSConfig(**{k: tuple(v) if isinstance(v, list) else v for k, v in saved["config"].items()})
    saved["cluster"] = ClusterSpec(tuple(saved["cluster"]["resources"]), saved["cluster"]["capacities"])
    return saved


def load_policy(path: str | Path | None = None) -> tuple[NumpyFitness, DeepJSConfig]:
    """(network, config) from a checkpoint written by `DeepJSTrainer.save`; None: the shipped one."""
    saved = read_checkpoint(path)
    return NumpyFitness({k: v.numpy() for k, v in saved["model"].items()}, saved["config"]), saved["config"]


# ------------------------------------------------------------------ training maths
def returns_to_go(rewards: Sequence[float], gamma: float = 1.0) -> np.ndarray:
    """q_t = sum_{t' >= t} gamma^(t'-t) r_t' for one trajectory."""
    q = np.zeros(len(rewards))
    running = 0.0
    for t in range(len(rewards) - 1, -1, -1):
        running = rewards[t] + gamma * running
        q[t] = running
    return q


def baselines(returns: Sequence[np.ndarray]) -> np.ndarray:
    """b_t = (1/N) sum_i q_t^i over the N trajectories, shorter ones padded with zeros (Algorithm 2)."""
    length = max(len(q) for q in returns)
    padded = np.zeros((len(returns), length))
    for i, q in enumerate(returns):
        padded[i, : len(q)] = q
    return padded.mean(axis=0)


def _rollout(args) -> Trajectory:
    state, config, cluster, jobs, seed = args
    broker = DeepJS((NumpyFitness(state, config), config), sample=True, seed=seed, record=True)
    result = Simulation(cluster, jobs, broker, tick=config.tick).run()
    broker.trajectory.makespan = result.makespan
    return broker.trajectory.packed()


def evaluate(policy: tuple[NumpyFitness, DeepJSConfig], cluster: ClusterSpec, jobs: list[JobSpec]) -> float:
    """Makespan of the greedy (evaluation) policy on ``jobs``."""
    return Simulation(cluster, jobs, DeepJS(policy), tick=policy[1].tick).run().makespan


class DeepJSTrainer:
    """Algorithm 2 on sliding chunks, with checkpoints that resume exactly.

    Args:
        config: the agent and its training; empty ``feature_mean``/``feature_std``
            are fitted by `fit_normaliser` before the first chunk.
        cluster: the cluster every chunk runs on.
        workers: processes for the rollouts (default: all cores).
    """

    def __init__(self, config: DeepJSConfig, cluster: ClusterSpec, workers: int | None = None) -> None:
        self.config = config
        self.cluster = cluster
        self.workers = workers or os.cpu_count() or 1
        torch.manual_seed(config.seed)
        self.model = FitnessNet(len(config.features), config.hidden)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.learning_rate)
        self.chunks_done: list[int] = []
        self.log: list[dict] = []
        self._pool: ProcessPoolExecutor | None = None

    # --------------------------------------------------------------- set-up
    def fit_normaliser(self, jobs: Sequence[JobSpec]) -> None:
        """Set ``feature_mean``/``feature_std`` from the workload: task features over its tasks
        (waiting = all instances), machine free resources as uniform over [0, capacity]."""
        capacity = np.asarray(self.cluster.capacities).mean(axis=0)
        tasks = [t for job in jobs for t in job.tasks]
        values = {
            "task_duration": [t.nominal_duration for t in tasks],
            "task_waiting": [t.instances for t in tasks],
            "task_running": [0.0, 1.0],
            "task_age": [0.0, 100.0],
        }
        for i, r in enumerate(self.cluster.resources):
            values[f"task_{r}"] = [t.demand.get(r, 0.0) for t in tasks]
        mean, std = [], []
        for name in self.config.features:
            if name.startswith("machine_"):
                cap = capacity[self.cluster.resources.index(name.split("_", 1)[1])]
                mean.append(float(cap / 2))
                std.append(float(cap / math.sqrt(12)))
            else:
                v = np.asarray(values[name], dtype=float)
                mean.append(float(v.mean()))
                std.append(float(v.std()) or 1.0)
        self.config = dataclasses.replace(self.config, feature_mean=tuple(mean), feature_std=tuple(std))

    def policy(self) -> tuple[NumpyFitness, DeepJSConfig]:
        return NumpyFitness(self._numpy_state(), self.config), self.config

    def _numpy_state(self) -> dict[str, np.ndarray]:
        return {k: v.detach().numpy().copy() for k, v in self.model.state_dict().items()}

    # --------------------------------------------------------------- training
    def collect(self, jobs: list[JobSpec], seeds: Sequence[int]) -> list[Trajectory]:
        """One trajectory per seed, sampled with the current weights, in worker processes."""
        args = [(self._numpy_state(), self.config, self.cluster, jobs, s) for s in seeds]
        if self.workers <= 1:
            return [_rollout(a) for a in args]
        if self._pool is None:
            self._pool = ProcessPoolExecutor(max_workers=self.workers)
        return list(self._pool.map(_rollout, args))

    def update(self, trajectories: Sequence[Trajectory]) -> dict:
        """One iteration of Algorithm 2 on N trajectories; returns statistics."""
        returns = [returns_to_go(t.rewards, self.config.gamma) for t in trajectories]
        baseline = baselines(returns)
        advantages = [q - baseline[: len(q)] for q in returns]
        if self.config.normalize_advantage:
            flat = np.concatenate(advantages)
            advantages = [(a - flat.mean()) / (flat.std() + 1e-8) for a in advantages]
        # One batched forward over every pair of every decision of every trajectory; the None
        # action (one option, log-probability 0) only counts for the returns.
        pairs = np.concatenate([t.pairs for t in trajectories])
        picked = np.concatenate([t.chosen for t in trajectories])
        choice = picked >= 0
        if not choice.any():
            return {"decisions": 0}
        sizes = pairs[choice]
        first_row = np.cumsum(sizes) - sizes
        x = torch.from_numpy(np.concatenate([t.features[0] for t in trajectories if len(t.features[0])]))
        segments = torch.from_numpy(np.repeat(np.arange(len(sizes)), sizes))
        chosen = torch.from_numpy(first_row + picked[choice])
        weights = torch.from_numpy(np.concatenate(advantages)[choice].astype(np.float32))
        mean = torch.tensor(self.config.feature_mean or [0.0] * x.shape[1], dtype=torch.float32)
        std = torch.tensor(self.config.feature_std or [1.0] * x.shape[1], dtype=torch.float32)
        log_probs = segment_log_softmax(self.model((x - mean) / std), segments, len(sizes))
        weighted = log_probs[chosen] * weights
        # Algorithm 2 adds one step per trajectory, each gradient taken at the same weights: a step along
        # their sum. Adam takes it on their mean, sum_i sum_t grad log pi(a_t^i | s_t^i) adv_t^i / N.
        objective = weighted.sum() / len(trajectories)
        self.optimizer.zero_grad()
        (-objective).backward()  # ascend
        self.optimizer.step()
        return {"decisions": int(len(sizes)), "mean_return": float(np.mean([q[0] for q in returns]))}

    def train_chunk(self, index: int, jobs: list[JobSpec]) -> dict:
        """Record the greedy makespan on the chunk, then train on it (iterations x trajectories)."""
        before = evaluate(self.policy(), self.cluster, jobs)
        makespans = []
        for iteration in range(self.config.iterations):
            seeds = [self.config.seed * 1_000_003 + index * 10_007 + iteration * 101 + i
                     for i in range(self.config.trajectories)]
            trajectories = self.collect(jobs, seeds)
            makespans += [t.makespan for t in trajectories]
            self.update(trajectories)
        entry = {"chunk": int(index), "makespan_before": float(before),
                 "mean_sampled_makespan": float(np.mean(makespans))}
        self.chunks_done.append(index)
        self.log.append(entry)
        return entry

    def close(self) -> None:
        if self._pool is not None:
            self._pool.shutdown()
            self._pool = None

    # --------------------------------------------------------------- checkpoints
    def save(self, path: str | Path) -> Path:
        """Weights, optimizer state, config and progress, written atomically."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(path.suffix + ".partial")
        torch.save({
            "model": self.model.state_dict(),
            "optimizer": self.optimizer.state_dict(),
            "config": {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(self.config).items()},
            "cluster": {"resources": list(self.cluster.resources), "capacities": [list(c) for c in self.cluster.capacities]},
            "chunks_done": self.chunks_done,
            "log": self.log,
            "torch_rng": torch.get_rng_state(),
        }, partial)
        partial.replace(path)
        return path

    @classmethod
    def resume(cls, path: str | Path, workers: int | None = None) -> "DeepJSTrainer":
        """A trainer in exactly the state `save` wrote."""
        saved = read_checkpoint(path)
        trainer = cls(saved["config"], saved["cluster"], workers)
        trainer.model.load_state_dict(saved["model"])
        trainer.optimizer.load_state_dict(saved["optimizer"])
        trainer.chunks_done = list(saved["chunks_done"])
        trainer.log = list(saved["log"])
        torch.set_rng_state(saved["torch_rng"])
        return trainer
