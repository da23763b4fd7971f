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
  along their mean (`returns_to_go` and `baselines` of the learning kit,
  `agents.kit`; `DeepJSTrainer.update`).
  The log-probabilities of all decisions of all N trajectories are recomputed
  in one batched forward with a softmax per decision (`segment_log_softmax`).
* 4.2 sliding chunks: 10 jobs per chunk, 10 iterations x 12 trajectories per
  chunk, the chunk's makespan recorded before training on it
  (`DeepJSTrainer.train_chunk`).

Rollouts run the network in numpy (a forward over a few hundred pairs costs
microseconds, and worker processes need no torch); updates run in torch.
Checkpoints, random states, the training log and evaluation episodes come
from the learning kit (`agents.kit`), which every learned agent shares; the
kit's names that DeepJS always exported (`returns_to_go`, `baselines`,
`CheckpointError`, `CheckpointMismatchError`) are still importable from here.
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections import Counter
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Iterable, Sequence

import numpy as np
import torch
from torch import nn

from agents import kit
from agents.deepjs.config import (
    CONFIG_FILE,
    POLICY_FILE,
    FEATURES,
    PAPER_FEATURES,
    REWARDS,
    CompletionReward,
    DeepJSConfig,
    MakespanReward,
    SlowdownReward,
    needed_resources,
)
from agents.incremental import INCREMENTAL_FROM, BestPairs, best_decision, keeps_best_pairs
from agents.kit import SHIPPED_CHECKPOINTS, CheckpointError, CheckpointMismatchError, baselines, returns_to_go
from cloudsim.engine import arithmetic
from cloudsim import ClusterSpec, ClusterView, Decision, JobSpec, Simulation
from cloudsim.engine.broker import ArrayPlan, CompiledRound
from cloudsim.engine.runner import Runner

__all__ = [
    "CheckpointError",
    "CheckpointMismatchError",
    "CompletionReward",
    "DeepJS",
    "DeepJSConfig",
    "DeepJSTrainer",
    "FitnessNet",
    "MakespanReward",
    "Policy",
    "SlowdownReward",
    "Trajectory",
    "baselines",
    "load_policy",
    "read_checkpoint",
    "returns_to_go",
    "run_training",
    "segment_log_softmax",
]

SHIPPED_CHECKPOINT = SHIPPED_CHECKPOINTS / "deepjs_5x64.pt"

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
    """The same network as numpy arrays, for decisions and rollouts (no autograd, no torch in workers).

    Computed by `cloudsim.engine.arithmetic` (a fixed order of sums, one ``tanh``): a pair's fitness is the
    same bits on every processor, and the same whatever other pairs share its batch, so incremental
    scoring (a few pairs rescored at a time) ranks exactly as a whole-round forward.
    """

    def __init__(self, state: dict[str, np.ndarray], config: DeepJSConfig) -> None:
        linear = sorted({k.rsplit(".", 1)[0] for k in state}, key=lambda k: int(k.split(".")[1]))
        self.weights = [(np.asarray(state[f"{k}.weight"], dtype=np.float64).T.copy(),
                         np.asarray(state[f"{k}.bias"], dtype=np.float64)) for k in linear]
        self.mean = np.asarray(config.feature_mean or [0.0] * len(config.features))
        self.std = np.asarray(config.feature_std or [1.0] * len(config.features))
        self.network = arithmetic.Network(self.weights, activation="tanh")

    def __call__(self, raw: np.ndarray) -> np.ndarray:
        """The fitness of each row of raw (unnormalised) features, shape (pairs,)."""
        return self.network((raw - self.mean) / self.std)[:, 0]


def segment_log_softmax(scores: torch.Tensor, segments: torch.Tensor, count: int) -> torch.Tensor:
    """log softmax of ``scores`` within each segment (``segments[i]`` in 0..count-1)."""
    top = torch.full((count,), -math.inf, dtype=scores.dtype, device=scores.device).scatter_reduce(
        0, segments, scores, "amax")
    shifted = scores - top[segments].detach()
    total = torch.zeros(count, dtype=scores.dtype, device=scores.device).index_add(0, segments, shifted.exp())
    return shifted - total.log()[segments]


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


class Policy(tuple):
    """The pair (network, config) that `load_policy` and `DeepJSTrainer.policy` return, plus where it came from:
    ``path``, the checkpoint file (None: not read from a file), and ``cluster``, the `ClusterSpec` it was trained
    on (None: unknown), which `DeepJS.check_cluster` compares with the cluster it is asked to schedule.

    A tuple of two so that code written for the plain pair (``fitness, config = policy``, ``policy[1]``) keeps
    working; a plain ``(fitness, config)`` tuple is still accepted wherever a policy is.
    """

    def __new__(cls, fitness: NumpyFitness, config: DeepJSConfig, *, path: str | Path | None = None,
                cluster: ClusterSpec | None = None) -> "Policy":
        self = super().__new__(cls, (fitness, config))
        self.path = None if path is None else Path(path)
        self.cluster = cluster
        return self

    def __getnewargs_ex__(self):  # pickling (worker processes): rebuild with the keywords, not tuple(self) alone
        return (self[0], self[1]), {"path": self.path, "cluster": self.cluster}

    @property
    def fitness(self) -> NumpyFitness:
        return self[0]

    @property
    def config(self) -> DeepJSConfig:
        return self[1]


def _checkpoint_label(path: Path | None) -> str:
    """How messages name a checkpoint: the shipped one by its file name, others by the path as given."""
    if path is None:
        return "this DeepJS policy"
    if path.resolve() == SHIPPED_CHECKPOINT.resolve():
        return f"the shipped checkpoint {SHIPPED_CHECKPOINT.name}"
    return f"checkpoint {path}"


def _number(value: float) -> str:
    return str(int(value)) if float(value).is_integer() else f"{value:g}"


def _capacity_text(resources: Sequence[str], row: Sequence[float]) -> str:
    return ", ".join(f"{r}={_number(v)}" for r, v in zip(resources, row))


def _describe_cluster(cluster: ClusterSpec) -> str:
    """'5 machines of cpu=64, memory=1', or for mixed machines '3 machines: 2 of cpu=64, memory=1 and 1 of ...'."""
    groups = Counter(cluster.capacities)  # insertion order: machines' order of first appearance
    count = f"{cluster.machines} machine{'s' if cluster.machines != 1 else ''}"
    if len(groups) == 1:
        return f"{count} of {_capacity_text(cluster.resources, cluster.capacities[0])}"
    shown = [f"{n} of {_capacity_text(cluster.resources, row)}" for row, n in list(groups.items())[:3]]
    if len(groups) > 3:  # a trace's machine table can have hundreds of shapes: name a few, count the rest
        shown.append(f"{sum(list(groups.values())[3:])} of {len(groups) - 3} other shapes")
    return f"{count}: {', '.join(shown[:-1])} and {shown[-1]}"


# Features computed from the pair alone: its machine's free resources, its task's fixed attributes and
# waiting count (the view's change counters cover them); "task_running" and "task_age" change otherwise.
_PAIR_ALONE = {"machine_cpu", "machine_memory", "task_cpu", "task_memory", "task_duration", "task_waiting"}


class DeepJS:
    """The DeepJS broker: scores every fit pair with the fitness network and starts one instance.

    Args:
        policy: the network (`NumpyFitness`) and its config, e.g. from `load_policy` (a `Policy`, which also
            says which checkpoint and cluster it comes from, for `check_cluster`).
        sample: draw the pair from the softmax over pairs (training) instead of
            taking the best (evaluation; the first best pair on ties).
        seed: seed of the sampling.
        record: keep a `Trajectory` of the episode (features, choices, rewards).
    """

    name = "deepjs"
    empty_rounds = False  # nothing waiting: no round needed (`cloudsim.Simulation.run`)
    incremental_from = INCREMENTAL_FROM
    """Clusters of at least this many machines keep each machine's best pairs between decisions
    (`agents.incremental.BestPairs`, ranking by `score`) when the greedy policy reads only machines'
    free resources and tasks' fixed attributes and waiting counts (the paper's features); smaller
    ones score every pair at every decision, as the committed results were made."""
    scaled = False
    compiled_rounds = True
    """False: one decision per call from the kept best pairs, even where `fitness_round` could plan the round."""

    def __init__(self, policy: tuple[NumpyFitness, DeepJSConfig], *, sample: bool = False, seed: int | None = 0,
                 record: bool = False) -> None:
        self.fitness, self.config = policy
        self.checkpoint: Path | None = getattr(policy, "path", None)
        self.trained_on: ClusterSpec | None = getattr(policy, "cluster", None)
        self.sample = sample
        self.rng = np.random.default_rng(seed)
        self.reward = REWARDS[self.config.reward]()
        self.trajectory = Trajectory() if record else None
        # A recorded episode takes a reward at every round, also those in which nothing waits (the makespan
        # reward counts every tick): it is asked at every round then.
        self.empty_rounds = record
        self.reads_waiting = "task_waiting" in self.config.features
        self.incremental = not sample and not record and set(self.config.features) <= _PAIR_ALONE
        self.best_pairs: BestPairs | None = None  # kept between decisions on large clusters

    def check_cluster(self, cluster: ClusterSpec) -> list[str]:
        """Check, once before simulating, that this policy can schedule ``cluster``; returns warnings.

        Raises `CheckpointMismatchError` when the cluster lacks a resource the features read: the features
        would be missing. Returns warnings when the resources differ otherwise (the features read resources
        by name, so they are read right), and when the machines differ (another count or other capacities):
        the policy runs, but its feature normaliser and what it learned were fitted to the training cluster.
        """
        label = _checkpoint_label(self.checkpoint)
        trained = self.trained_on
        needed = needed_resources(self.config.features)
        lacking = [r for r in needed if r not in cluster.resources]
        warnings = []
        if trained is not None and tuple(trained.resources) != tuple(cluster.resources) and not lacking:
            # The features read resources by name: a resource they do not read may differ (e.g. the
            # trace's clusters without disk), but the user should know the cluster is not the training one.
            warnings.append(f"{label} was trained on resources ({', '.join(trained.resources)}) but this cluster "
                            f"has ({', '.join(cluster.resources)}); its features read only "
                            f"{', '.join(needed)}, which this cluster has, so it runs.")
        if lacking:
            raise CheckpointMismatchError(
                f"{label}: its features ({', '.join(self.config.features)}) need resources ({', '.join(needed)}) "
                f"but this cluster has ({', '.join(cluster.resources)}), without {', '.join(lacking)}. Add "
                f"{', '.join(lacking)} to the cluster (--capacity), or use a policy whose features this cluster "
                f"has.", path=self.checkpoint)
        if trained is None or tuple(trained.capacities) == tuple(cluster.capacities):
            return warnings
        # The machine features are normalised around the training cluster's mean capacity (fit_normaliser):
        # say so when that is what changed, the likelier cause of poor decisions.
        scaled = [r for r in needed if any(f"machine_{r}" == f for f in self.config.features)]
        index = [cluster.resources.index(r) for r in scaled]
        was = np.asarray(trained.capacities)[:, index].mean(axis=0)
        now = np.asarray(cluster.capacities)[:, index].mean(axis=0)
        if not np.array_equal(was, now):
            # Not "its normaliser was fitted there": a training from --init keeps the normaliser of its start.
            why = (f"it learned on a mean machine capacity of {_capacity_text(scaled, was)} (this cluster: "
                   f"{_capacity_text(scaled, now)}), so its machine features fall elsewhere here and may not fit")
        else:
            why = "its fitness was learned on those machines and may rank pairs differently on these"
        return warnings + [f"{label} was trained on {_describe_cluster(trained)}; this cluster has "
                f"{_describe_cluster(cluster)}: {why}. Train a checkpoint on this cluster (`cloudsim train deepjs` "
                f"with the same --machines and --capacity) before relying on its makespans."]

    def compiled_round(self, resources: Sequence[str]) -> CompiledRound | None:
        """The engine's compiled round of this broker (`CompiledRound` ``"fitness"``), which decides as `decide`
        does on every cluster (the fittest pair, the first machine, then the first task, on ties, one instance
        at a time): with the paper's features, taking the best pair (not ``sample``), nothing recorded, and a
        network whose output is a finite number (two layers or more, tanh bounding what the last one reads,
        whose weights are finite), so that no fit pair scores -inf, which the compiled round reserves for a
        pair that does not fit; None otherwise."""
        if (not self.compiled_rounds or self.sample or self.trajectory is not None
                or self.config.features != PAPER_FEATURES or not {"cpu", "memory"} <= set(resources)):
            return None
        network = self.fitness.network
        if len(network.weights) < 2 or not network.tanh:
            return None
        bound = np.abs(network.weights[-1]).sum() + np.abs(network.biases[-1]).sum()
        if not bound < 1e300:  # (NaN or inf weights too)
            return None
        return CompiledRound("fitness", (list(resources).index("cpu"), list(resources).index("memory")), network,
                             tuple(float(x) for x in self.fitness.mean), tuple(float(x) for x in self.fitness.std))

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

    def score(self, view: ClusterView, machines: np.ndarray, tasks: np.ndarray) -> np.ndarray:
        """The fitness of each pair (``machines[i]``, ``tasks[i]``), from that pair alone: what
        incremental scoring ranks."""
        return self.fitness(self.features(view, machines, tasks))

    def decide(self, view: ClusterView) -> ArrayPlan | Decision | None:
        """The fittest pair (one decision); on a cluster where it keeps best pairs, with the paper's
        features, the whole round as one plan (`fitness_round`)."""
        if keeps_best_pairs(self, view):
            if self.compiled_rounds and self.config.features == PAPER_FEATURES:
                return self.fitness_round(view)
            return best_decision(self, view)
        machines, tasks = view.fit_pairs
        if len(tasks) == 0:
            if self.trajectory is not None:
                self._record(None, -1, self.reward(view))
            return None
        raw = self.features(view, machines, tasks)
        scores = self.fitness(raw)
        if self.sample:
            p = arithmetic.exp(scores - scores.max())
            cumulative = np.cumsum(p)
            pick = int(np.searchsorted(cumulative, self.rng.random() * cumulative[-1], side="right"))
            pick = min(pick, len(p) - 1)
        else:
            pick = int(np.argmax(scores))
        if self.trajectory is not None:
            self._record(raw, pick, 0.0)
        return Decision(int(machines[pick]), int(tasks[pick]))

    def fitness_round(self, view: ClusterView) -> ArrayPlan | None:
        """The round the one-decision path makes (the fittest pair, one instance, until none fits) as one
        final plan, computed by machine state in one compiled call (`agents.kernels.state_round`):
        machines with equal free resources score a task alike, so a start rescores its task over the
        distinct states (tens), not over every machine."""
        from agents import kernels  # numba: loaded when a large cluster is first scheduled

        machines, tasks, counts, _, nan = kernels.round_plan(view, kernels.FITNESS, fitness=self.fitness)
        if nan:
            raise ValueError(f"broker {self.name!r} at t={view.time}: a pair's score is NaN; scores must be numbers "
                             "(check the checkpoint's weights and feature normaliser)")
        return ArrayPlan(machines, tasks, counts, final=True) if len(machines) else None

    def _record(self, raw: np.ndarray | None, pick: int, reward: float) -> None:
        t = self.trajectory
        if raw is not None:
            t.features.append(raw)
        t.pairs.append(0 if raw is None else len(raw))
        t.chosen.append(pick)
        t.rewards.append(reward)


CHECKPOINT_KEYS = ("model", "optimizer", "config", "cluster", "chunks_done", "log", "torch_rng")
"""What every DeepJS checkpoint holds; a file without all of them was not written by `DeepJSTrainer.save`.
Those it writes since the learning kit also hold ``agent`` ("deepjs") and ``python_rng``, which older files
(the shipped one among them) lack."""


def read_checkpoint(path: str | Path | None = None, *, fix: str | None = None) -> dict:
    """A checkpoint written by `DeepJSTrainer.save` (None: the shipped one), with its ``config`` as a
    `DeepJSConfig` and its ``cluster`` as a `ClusterSpec`; also ``model``, ``optimizer``, ``log``...

    The learning kit's `agents.kit.read_checkpoint` checks the file (readable, a dict of DeepJS's, its keys, its
    config, finite weights); this adds what only DeepJS knows: its cluster, and weights of the network its
    config describes.

    Raises FileNotFoundError (`agents.kit.CheckpointNotFoundError`) when nothing is at ``path``, and
    `CheckpointError` (naming the path, what is wrong and what to do) when what is there is not a usable
    checkpoint. ``fix`` ends those messages (default: train one, or pass another with --checkpoint).
    """
    path = Path(path) if path is not None else SHIPPED_CHECKPOINT
    saved = kit.read_checkpoint(path, agent="deepjs", title="DeepJS", keys=CHECKPOINT_KEYS, config_type=DeepJSConfig,
                                writer="`DeepJSTrainer.save`", fix=fix, allow_unnamed=True)

    def bad(reason: str) -> CheckpointError:
        return kit.unusable_checkpoint(path, reason, agent="deepjs", title="DeepJS", fix=fix)

    try:
        saved["cluster"] = ClusterSpec(tuple(saved["cluster"]["resources"]), saved["cluster"]["capacities"])
    except (TypeError, ValueError, KeyError) as err:
        raise bad(f"its cluster is invalid ({err})") from err
    # The weights must be the network the config describes, or the first decision would fail in a matmul.
    # Shapes worked out here rather than by building a FitnessNet, whose initialisation would draw from torch's
    # global random generator and so change a training run that reads a checkpoint.
    config = saved["config"]
    sizes = [len(config.features), *config.hidden, 1]
    expected = {}
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        expected[f"layers.{2 * i}.weight"], expected[f"layers.{2 * i}.bias"] = (b, a), (b,)
    found = {k: tuple(v.shape) for k, v in saved["model"].items()}
    if found != expected:
        raise bad(f"its weights {found} are not the network its config describes ({len(config.features)} "
                  f"features, hidden {config.hidden}: {expected})")
    return saved


def load_policy(path: str | Path | None = None) -> Policy:
    """(network, config) from a checkpoint written by `DeepJSTrainer.save`; None: the shipped one.

    A `Policy`: also carries the checkpoint's path and training cluster, for `DeepJS.check_cluster`.
    """
    saved = read_checkpoint(path)
    fitness = NumpyFitness({k: v.numpy() for k, v in saved["model"].items()}, saved["config"])
    return Policy(fitness, saved["config"], path=SHIPPED_CHECKPOINT if path is None else path,
                  cluster=saved["cluster"])


# ------------------------------------------------------------------ training
def _rollout(args) -> Trajectory:
    state, config, cluster, jobs, seed = args
    broker = DeepJS((NumpyFitness(state, config), config), sample=True, seed=seed, record=True)
    result = Simulation(cluster, jobs, broker, tick=config.tick).run()
    broker.trajectory.makespan = result.makespan
    return broker.trajectory.packed()


def evaluate(policy: tuple[NumpyFitness, DeepJSConfig], cluster: ClusterSpec, jobs: list[JobSpec]) -> float:
    """Makespan of the greedy (evaluation) policy on ``jobs``, in this process."""
    (summary,) = kit.evaluate(partial(DeepJS, policy), cluster, [jobs], tick=policy[1].tick)
    return summary["makespan"]


class DeepJSTrainer:
    """Algorithm 2 on sliding chunks, with checkpoints that resume exactly.

    Args:
        config: the agent and its training; empty ``feature_mean``/``feature_std``
            are fitted by `fit_normaliser` before the first chunk.
        cluster: the cluster every chunk runs on.
        workers: processes for the rollouts (default: all cores), when no ``runner`` is given.
        runner: where the rollouts run (`cloudsim.engine.runner.Runner`: local processes or Ray); the
            trainer makes its own from ``workers`` when None, and closes only its own.
        device: where the updates run (`agents.kit.DEVICES`).
        threads: torch's CPU threads from now on (`agents.kit.training_threads`: a fixed count keeps
            the training's numbers the same on any machine; default `agents.kit.TRAINING_THREADS`'s).
    """

    def __init__(self, config: DeepJSConfig, cluster: ClusterSpec, workers: int | None = None,
                 runner: Runner | None = None, device: str = "auto", threads: int | None = None) -> None:
        lacking = [r for r in needed_resources(config.features) if r not in cluster.resources]
        if lacking:  # refused now rather than at the first rollout, after the set-up work
            raise ValueError(f"DeepJSConfig.features ({', '.join(config.features)}) read resources "
                             f"{', '.join(lacking)}, which the cluster ({', '.join(cluster.resources)}) lacks; add "
                             f"them to the cluster (--capacity) or choose features it has")
        self.config = config
        self.cluster = cluster
        self.runner = runner if runner is not None else Runner(workers=workers, progress=False)
        self._owns_runner = runner is None
        self.device = kit.training_device(device)  # where the updates run; rollouts use numpy copies
        kit.training_threads(kit.TRAINING_THREADS["deepjs"] if threads is None else threads, self.device)
        torch.manual_seed(config.seed)
        self.model = FitnessNet(len(config.features), config.hidden).to(self.device)
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=config.learning_rate)
        self.chunks_done: list[int] = []
        self.log: list[dict] = []

    # --------------------------------------------------------------- set-up
    def fit_normaliser(self, jobs: Sequence[JobSpec]) -> None:
        """Set ``feature_mean``/``feature_std`` from the workload: task features over its tasks
        (waiting = all instances), machine free resources as uniform over [0, capacity]."""
        if not jobs:  # the mean and std of nothing are NaN, and every later score with them
            raise ValueError("DeepJSTrainer.fit_normaliser: no jobs to fit the feature normaliser on; pass the "
                             "training workload (check that --chunks and --chunk-size select at least one job)")
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
                # A resource of capacity 0 everywhere is a constant 0 feature: std 1 as for constant task
                # features below, rather than a division by zero.
                std.append(float(cap / math.sqrt(12)) or 1.0)
            else:
                v = np.asarray(values[name], dtype=float)
                mean.append(float(v.mean()))
                std.append(float(v.std()) or 1.0)
        self.config = dataclasses.replace(self.config, feature_mean=tuple(mean), feature_std=tuple(std))

    def policy(self) -> Policy:
        """The current weights as a `Policy` for `DeepJS` (it knows the cluster it is trained on)."""
        return Policy(NumpyFitness(self._numpy_state(), self.config), self.config, cluster=self.cluster)

    def _numpy_state(self) -> dict[str, np.ndarray]:
        return {k: v.detach().cpu().numpy().copy() for k, v in self.model.state_dict().items()}

    # --------------------------------------------------------------- training
    def collect(self, jobs: list[JobSpec], seeds: Sequence[int]) -> list[Trajectory]:
        """One trajectory per seed, sampled with the current weights, in worker processes."""
        args = [(self._numpy_state(), self.config, self.cluster, jobs, s) for s in seeds]
        return list(self.runner.map(_rollout, args, desc="rollouts", unit="trajectory"))

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
        on = self.device
        x = torch.from_numpy(np.concatenate([t.features[0] for t in trajectories if len(t.features[0])])).to(on)
        segments = torch.from_numpy(np.repeat(np.arange(len(sizes)), sizes)).to(on)
        chosen = torch.from_numpy(first_row + picked[choice]).to(on)
        weights = torch.from_numpy(np.concatenate(advantages)[choice].astype(np.float32)).to(on)
        mean = torch.tensor(self.config.feature_mean or [0.0] * x.shape[1], dtype=torch.float32, device=on)
        std = torch.tensor(self.config.feature_std or [1.0] * x.shape[1], dtype=torch.float32, device=on)
        log_probs = segment_log_softmax(self.model((x - mean) / std), segments, len(sizes))
        weighted = log_probs[chosen] * weights
        # Algorithm 2 adds one step per trajectory, each gradient taken at the same weights: a step along
        # their sum. Adam takes it on their mean, sum_i sum_t grad log pi(a_t^i | s_t^i) adv_t^i / N.
        objective = weighted.sum() / len(trajectories)
        self.optimizer.zero_grad()
        (-objective).backward()  # ascend
        self.optimizer.step()
        if not all(bool(torch.isfinite(p).all()) for p in self.model.parameters()):
            raise ValueError(f"DeepJS training diverged: the weights hold NaN or infinite values after an update "
                             f"with learning rate {self.config.learning_rate:g}; train again with a smaller "
                             f"--learning-rate (the paper's is 0.001)")
        return {"decisions": int(len(sizes)), "mean_return": float(np.mean([q[0] for q in returns])),
                "loss": float(-objective.detach())}

    def train_chunk(self, index: int, jobs: list[JobSpec],
                    on_iteration: Callable[[dict], None] | None = None) -> dict:
        """Record the greedy makespan on the chunk, then train on it (iterations x trajectories).

        ``on_iteration`` receives one row per iteration, for a `agents.kit.TrainingLog`: ``iteration`` (counted
        over the whole training: chunks trained before this one times ``config.iterations``, plus
        ``chunk_iteration``), ``chunk``, ``chunk_iteration``, ``makespan_before`` (the chunk's), the iteration's
        ``mean_makespan`` over its trajectories, `update`'s statistics and ``wall_s``. It only reads what the
        training computes anyway: the training is the same with or without it.
        """
        if not jobs:  # an empty episode has no decisions: the chunk would be logged as trained having taught nothing
            raise ValueError(f"DeepJSTrainer.train_chunk: chunk {index} has no jobs, so there is nothing to train "
                             f"on; pass a non-empty chunk (check --chunks against the number of chunks in the "
                             f"workload)")
        before = evaluate(self.policy(), self.cluster, jobs)
        makespans = []
        for iteration in range(self.config.iterations):
            started = time.perf_counter()
            seeds = [self.config.seed * 1_000_003 + index * 10_007 + iteration * 101 + i
                     for i in range(self.config.trajectories)]
            trajectories = self.collect(jobs, seeds)
            makespans += [t.makespan for t in trajectories]
            stats = self.update(trajectories)
            if on_iteration is not None:
                on_iteration({"iteration": len(self.chunks_done) * self.config.iterations + iteration,
                              "chunk": int(index), "chunk_iteration": iteration, "makespan_before": float(before),
                              "mean_makespan": float(np.mean([t.makespan for t in trajectories])), **stats,
                              "wall_s": round(time.perf_counter() - started, 3)})
        entry = {"chunk": int(index), "makespan_before": float(before),
                 "mean_sampled_makespan": float(np.mean(makespans))}
        self.chunks_done.append(index)
        self.log.append(entry)
        return entry

    def close(self) -> None:
        """Stop the rollout workers (of the trainer's own runner)."""
        if self._owns_runner:
            self.runner.close()

    # --------------------------------------------------------------- checkpoints
    def save(self, path: str | Path) -> Path:
        """Weights, optimizer state, config, random states and progress, written atomically (`agents.kit`)."""
        return kit.save_checkpoint(
            path, agent="deepjs", config=self.config, model={k: v.cpu() for k, v in self.model.state_dict().items()},
            optimizer=self.optimizer.state_dict(), rng=kit.rng_state(),
            extra={
                # The cluster shape the weights and the normaliser were fitted to, for `DeepJS.check_cluster`.
                "cluster": {"resources": list(self.cluster.resources),
                            "capacities": [list(c) for c in self.cluster.capacities]},
                "chunks_done": self.chunks_done,
                "log": self.log,
            })

    @classmethod
    def from_weights(cls, path: str | Path, config: DeepJSConfig, cluster: ClusterSpec, *,
                     runner: Runner | None = None, device: str = "auto", threads: int | None = None) -> "DeepJSTrainer":
        """A new training that starts from the weights of the checkpoint at ``path`` (a fine-tuning): its
        features, hidden layers and feature normaliser are kept, so that the network's inputs mean what they
        meant; the rest of ``config`` (learning rate, reward, iterations...) is this training's, and the
        optimiser, the chunks done and the log start afresh."""
        saved = read_checkpoint(path)
        kept = saved["config"]
        config = dataclasses.replace(config, features=kept.features, hidden=kept.hidden,
                                     feature_mean=kept.feature_mean, feature_std=kept.feature_std)
        trainer = cls(config, cluster, runner=runner, device=device, threads=threads)
        trainer.model.load_state_dict(saved["model"])  # shapes already checked by read_checkpoint
        return trainer

    @classmethod
    def resume(cls, path: str | Path, workers: int | None = None, *, config: DeepJSConfig | None = None,
               cluster: ClusterSpec | None = None, given: Iterable[str] = (),
               runner: Runner | None = None, device: str = "auto", threads: int | None = None) -> "DeepJSTrainer":
        """A trainer in exactly the state `save` wrote.

        ``given`` names what the user asked for explicitly: `DeepJSConfig` field names (their values in
        ``config``) and "cluster" (``cluster``). Each must agree with the checkpoint, or `CheckpointError` lists
        every contradiction; what is not in ``given`` is taken from the checkpoint, whatever ``config`` and
        ``cluster`` hold (defaults the user never chose must not block a resume).
        """
        given = set(given)
        fields = [f.name for f in dataclasses.fields(DeepJSConfig)]
        unknown = sorted(g for g in given if g not in fields and g != "cluster")
        if unknown:
            raise ValueError(f"DeepJSTrainer.resume(given=...): unknown names {unknown}; name DeepJSConfig fields "
                             f"({', '.join(fields)}) or 'cluster'")
        if config is None and any(g != "cluster" for g in given):
            raise ValueError(f"DeepJSTrainer.resume(given={sorted(given)}) names config fields but config is None; "
                             f"pass the asked-for DeepJSConfig as config=")
        if cluster is None and "cluster" in given:
            raise ValueError("DeepJSTrainer.resume(given=...) names 'cluster' but cluster is None; pass the "
                             "asked-for ClusterSpec as cluster=")
        saved = read_checkpoint(path)
        contradictions = []
        # In the config's field order, then the cluster: the same message whatever order ``given`` came in
        # (a set's order changes from one process to the next).
        for name in kit.changed_settings(saved["config"], config, [f for f in fields if f in given]):
            contradictions.append(f"{name}: the checkpoint has {getattr(saved['config'], name)!r}, asked for "
                                  f"{getattr(config, name)!r}")
        if "cluster" in given:
            had = saved["cluster"]
            if (tuple(had.resources), had.capacities) != (tuple(cluster.resources), cluster.capacities):
                contradictions.append(f"cluster: the checkpoint has {_describe_cluster(had)}, asked for "
                                      f"{_describe_cluster(cluster)}")
        if contradictions:  # one line, as every refusal of the command line
            raise CheckpointError(
                f"{path}: cannot resume with options that contradict the checkpoint ({'; '.join(contradictions)}); "
                "drop those options to continue the training as saved, or start a new training (another --out "
                "folder, without --resume)", path=path)
        trainer = cls(saved["config"], saved["cluster"], workers, runner, device, threads)
        trainer.model.load_state_dict(saved["model"])  # shapes already checked by read_checkpoint
        try:  # what only a resume reads: a damaged file can still fail here
            trainer.optimizer.load_state_dict(saved["optimizer"])
            trainer.chunks_done = list(saved["chunks_done"])
            trainer.log = list(saved["log"])
            kit.restore_rng(saved)  # torch's generator (and Python's, in checkpoints written since the kit)
        except (TypeError, ValueError, KeyError, RuntimeError) as err:
            raise CheckpointError(f"{path}: cannot resume from it: its optimizer state, progress or random state "
                                  f"is damaged ({type(err).__name__}: {err}); start a new training (another --out "
                                  f"folder, without --resume)", path=path) from err
        return trainer


def run_training(config: DeepJSConfig, out: str | Path, *, chunks: Sequence[tuple[int, list[JobSpec]]],
                 cluster: ClusterSpec, runner: Runner, record: dict, resume: bool = False, init: str | None = None,
                 given: Iterable[str] = (), tensorboard: bool = False, device: str = "auto",
                 threads: int | None = None, on_chunk: Callable[[dict], None] | None = None, **unused) -> dict:
    """``cloudsim train deepjs`` (its `agents.registry.TrainingSpec`): Algorithm 2 on ``chunks`` (label, jobs) of a
    workload run on ``cluster``, a checkpoint ``out/policy.pt`` after each chunk, and the summary the command prints.

    A new training fits the feature normaliser on all the chunks' jobs; ``init`` starts it from that checkpoint's
    weights and normaliser instead; ``resume`` continues ``out/policy.pt`` (``given``: the settings the user chose,
    which must match it), skipping the chunks it has done. ``out/config.json`` gets the agent's config with
    ``record`` (the run layer's account of the workload); each iteration is a row of the log (`agents.kit.TrainingLog`,
    written after the checkpoint that holds it); ``on_chunk`` is called with each chunk's entry as it is trained.
    ``unused``: the options of every training that DeepJS has no use for (it saves after every chunk, and reports
    its progress by ``on_chunk``)."""
    checkpoint = Path(out) / POLICY_FILE
    settings = dict(device=device, threads=threads)
    if resume:
        trainer = DeepJSTrainer.resume(checkpoint, config=config, cluster=cluster, given=frozenset(given),
                                       runner=runner, **settings)
    elif init is not None:  # fine-tuning: the network and its normaliser are the init's
        trainer = DeepJSTrainer.from_weights(init, config, cluster, runner=runner, **settings)
    else:
        trainer = DeepJSTrainer(config, cluster, runner=runner, **settings)
        trainer.fit_normaliser([job for _, jobs in chunks for job in jobs])
    Path(out).mkdir(parents=True, exist_ok=True)
    with kit.written_whole(Path(out) / CONFIG_FILE) as (partial,):
        partial.write_text(json.dumps({"agent": dataclasses.asdict(trainer.config), **record}, indent=2) + "\n")
    todo = [(label, jobs) for label, jobs in chunks if label not in trainer.chunks_done]
    started = time.perf_counter()
    trained = 0
    log = None
    try:
        log = kit.TrainingLog(out, tensorboard=tensorboard)
        for label, jobs in todo:
            chunk_started = time.perf_counter()
            rows: list[dict] = []
            entry = trainer.train_chunk(label, jobs, on_iteration=rows.append)
            trainer.save(checkpoint)
            trained += 1
            for row in rows:  # after the save: the log never holds an iteration that the checkpoint lacks
                log.write(row)
            if on_chunk is not None:
                on_chunk({**entry, "wall_s": round(time.perf_counter() - chunk_started, 2)})
    finally:
        if log is not None:
            log.close()
    summary = {"summary": True, "chunks_trained": trained, "chunks": len(trainer.chunks_done),
               "chunks_skipped_as_done": len(chunks) - len(todo),
               "wall_s": round(time.perf_counter() - started, 1),
               "config": dataclasses.asdict(trainer.config)}
    if checkpoint.is_file():  # never name a checkpoint that was not written
        summary["checkpoint"] = str(checkpoint)
    if log is not None:
        summary["log"] = str(log.folder)
    return summary
