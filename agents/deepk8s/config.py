"""Deepk8s's hyper-parameters, in one dataclass that imports no torch (the command line reads its defaults).

Zhao & Sun (2021) give the learning rate (0.001), the window (10 tasks), the
cluster (5 machines of 10 cpu and 64 memory), the wait's cap (16 time units)
and the algorithms; they are silent on the rest, so the other values are
the usual ones for these algorithms, chosen here and documented in docs/papers/deepk8s.md.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agents.kit.checkpoints import SHIPPED_CHECKPOINTS
from agents.kit.checks import check_finite, check_learning_rate, check_whole
from agents.kit.settings import SettingProblem, setting
from agents.registry import TrainingSpec
from cloudsim.engine.checks import number_problem
from cloudsim.engine.envs.deepk8s import DEEPK8S_WINDOW

__all__ = ["ALGORITHMS", "BROKER_NAMES", "EXPERTS", "LOOK_AHEADS", "NETWORKS", "OPTIMIZERS", "Deepk8sConfig",
           "shipped_checkpoint", "DEEPK8S_TRAINING", "Deepk8sTrainingOptions"]

ALGORITHMS = ("ppo", "a2c", "dagger")
EXPERTS = ("sjf", "oracle", "online")
"""DAgger's expert: SJF on the window (the paper's); the rollout oracle (`agents.deepk8s.rollout.RolloutOracle`),
which knows the whole sequence and plays every candidate out with SJF; or the online look-ahead, the same
play-outs without the tasks still to arrive."""
LOOK_AHEADS = ("oracle", "online")
"""The experts that are look-aheads: they label an episode after it is played, in parallel processes."""
OPTIMIZERS = ("adam", "sgd")
NETWORKS = ("pairs", "flat")
BROKER_NAMES = {"ppo": "deepk8s", "a2c": "deepk8s-a2c", "dagger": "deepk8s-dagger"}
"""The broker name a trained policy of each algorithm has in replay, compare and bench."""
SHIPPED = SHIPPED_CHECKPOINTS


def shipped_checkpoint(algo: str) -> Path:
    """The checkpoint shipped for ``algo`` (its broker's name, .pt, in agents/checkpoints)."""
    return SHIPPED / f"{BROKER_NAMES[algo]}.pt"


@dataclass(frozen=True)
class Deepk8sConfig:
    """How a Deepk8s agent is built and trained.

    Attributes:
        algo: "ppo" (clipped objective, eq. 4, with action masks: sb3-contrib's
            MaskablePPO), "a2c" (eq. 2-3, the synchronous form of A3C, from
            Stable-Baselines3) or "dagger" (imitation of SJF, eq. 5).
        iterations: training iterations. PPO/A2C: ``envs x steps_per_env``
            environment steps and their updates (PPO: one update of several
            epochs; A2C: one update every ``a2c_steps`` steps per environment);
            DAgger: ``dagger_episodes`` episodes labelled by the expert and
            ``dagger_updates`` minibatch steps.
        envs: parallel environments.
        steps_per_env: environment steps per environment and iteration (PPO/A2C).
        a2c_steps: A3C's t_max: steps per environment between two A2C updates.
        learning_rate: the paper's 0.001.
        optimizer: "adam", or "sgd" (plain stochastic gradient descent, the
            paper's; A2C's updates every few steps diverged with Adam at 0.001).
        gamma: discount per step. 1: the return is then exactly minus the
            episode's summed weighted turnaround, as the paper states. Steps
            last different times (a wait at most 16, a placement none), so a
            discount below 1 would make splitting time into many waits look
            cheaper than it is; a policy trained with 0.99 learned to wait.
        gae_lambda: GAE's lambda for PPO (A2C uses n-step returns: lambda 1).
        entropy: beta, the weight of the entropy bonus (eq. 2 and 5).
        clip: epsilon of PPO's clipped ratio (eq. 4).
        epochs: PPO's passes over each rollout.
        minibatch: PPO's and DAgger's minibatch size.
        network: "pairs": every (slot, machine) pair scored by the same
            weights from the machine's free resources, the task's demand and
            duration and a summary of the whole state; waiting and the value
            from that summary alone. No weight depends on the number of
            machines, so a policy trained on 5 runs on any cluster.
            "flat": the paper's network, one MLP over the whole observation,
            whose input and output sizes fix the number of machines.
        trunk: "flat": sizes of the two layers actor and critic share.
            "pairs": sizes of the pair scorer's first two layers (the critic
            has its own of the same sizes).
        head: hidden sizes of the actor's and the critic's own layers (after
            the trunk's).
        window: visible tasks (n).
        max_wait: a wait lasts until the next event, at most this long.
        tasks: tasks per training sequence.
        dagger_episodes: episodes the learner plays per DAgger iteration.
        dagger_updates: minibatch steps per DAgger iteration on the aggregated set.
        expert: DAgger's expert (`EXPERTS`): "sjf"; "oracle", the rollout oracle, whose
            labels cost a play-out per candidate action (about 15-30 s a sequence of 250 tasks);
            or "online", the look-ahead that does not know the arrivals (about 4 s a sequence).
            PPO and A2C ignore it (a PPO training that starts from a DAgger policy keeps its config).
        seed: seeds the networks, the environments and the workload draws.
        init: a trained policy (``policy.pt``) whose actor started this PPO or
            A2C training (e.g. DAgger's: imitation, then reinforcement), or None
            for a network trained from scratch, as in the paper.
    """

    algo: str = setting("ppo", "ppo (clipped objective, masked), a2c (synchronous A3C) or dagger (imitation of SJF)",
                        choices=ALGORITHMS)
    iterations: int = setting(300, "training iterations (in all, counting those a resumed run already did)")
    envs: int = setting(4, "parallel environments (PPO, A2C)")
    steps_per_env: int = setting(256, "rollout steps per environment and iteration (PPO, A2C)")
    a2c_steps: int = 5
    learning_rate: float = setting(1e-3, "the optimiser's learning rate", metavar="LR")
    optimizer: str = setting("adam", "adam, or sgd (the paper's)", choices=OPTIMIZERS)
    gamma: float = 1.0
    gae_lambda: float = 0.95
    entropy: float = setting(0.01, "weight of the entropy bonus (beta)", metavar="BETA")
    clip: float = 0.2
    epochs: int = 4
    minibatch: int = 256
    network: str = setting("pairs", "pairs (every slot-machine pair scored by shared weights: runs on any number of "
                           "machines) or flat (the paper's MLP over the whole state: only on the training cluster's "
                           "machine count)", choices=NETWORKS)
    trunk: tuple[int, ...] = (128, 128)
    head: tuple[int, ...] = (64,)
    window: int = DEEPK8S_WINDOW
    max_wait: float = 16.0
    tasks: int = setting(250, "tasks per training sequence")
    dagger_episodes: int = setting(2, "episodes the learner plays per DAgger iteration")
    dagger_updates: int = setting(16, "minibatch steps per DAgger iteration on the aggregated set")
    expert: str = setting("sjf", "DAgger's expert: sjf (the paper's), oracle (the rollout oracle, which knows the "
                          "whole sequence: about 15-30 s of labelling a sequence of 250 tasks, kept in "
                          "DIR/oracle-labels) or online (its play-outs without the arrivals to come: about 4 s, "
                          "kept in DIR/online-labels)", choices=EXPERTS)
    seed: int = setting(0, "seeds the networks, environments and sequence draws")
    init: str | None = setting(None, "a trained policy.pt whose actor starts a PPO or A2C training (e.g. DAgger's: "
                               "imitation, then reinforcement)", metavar="PATH")

    def __post_init__(self) -> None:
        if self.optimizer not in OPTIMIZERS:
            raise ValueError(f"optimizer must be one of {', '.join(OPTIMIZERS)}, got {self.optimizer!r}")
        if self.network not in NETWORKS:
            raise ValueError(f"network must be one of {', '.join(NETWORKS)}, got {self.network!r}")
        if self.algo not in ALGORITHMS:
            raise ValueError(f"algo must be one of {', '.join(ALGORITHMS)}, got {self.algo!r}")
        if self.expert not in EXPERTS:
            raise ValueError(f"expert must be one of {', '.join(EXPERTS)}, got {self.expert!r}")
        if self.init is not None and self.algo == "dagger":
            raise ValueError("init applies to PPO and A2C; DAgger starts from scratch")
        check_whole(self, ("iterations", "envs", "steps_per_env", "a2c_steps", "epochs", "minibatch", "window",
                           "tasks", "dagger_episodes", "dagger_updates"), 1)
        if len(self.trunk) != 2 or not all(isinstance(s, int) and s >= 1 for s in (*self.trunk, *self.head)):
            raise ValueError(f"trunk must be two layer sizes >= 1 (the shared layers), got {self.trunk!r}; "
                             f"head sizes >= 1, got {self.head!r}")
        check_finite(self, ("clip", "max_wait"), above=0)
        check_learning_rate(self)
        check_finite(self, ("gamma", "gae_lambda"), at_least=0, at_most=1)
        check_finite(self, ("entropy",), at_least=0)

    @property
    def broker_name(self) -> str:
        return BROKER_NAMES[self.algo]


@dataclass(frozen=True)
class Deepk8sTrainingOptions:
    """``cloudsim train deepk8s``'s options beside the agent's settings."""

    workers: int = setting(1, "processes labelling DAgger's episodes with --expert oracle or online (the labels, and "
                           "so the training, are the same for any number)", metavar="N")


DAGGER_SETTINGS = ("expert", "dagger_episodes", "dagger_updates")
"""The settings that apply to DAgger only."""


def check_training(command) -> None:
    """How ``cloudsim train deepk8s``'s options fit together (`agents.registry.TrainingSpec.check`): DAgger's
    settings with another algorithm, --workers without a look-ahead expert, --init with DAgger or naming no file."""
    if command.kind != "dagger":
        for name in DAGGER_SETTINGS:
            if name in command.given:
                raise SettingProblem(name, "applies to DAgger; add --algo dagger")
    problem = number_problem(command.workers, whole=True, at_least=1)
    if problem is not None:
        raise SettingProblem("workers", problem)
    if command.workers > 1 and command.agent.expert not in LOOK_AHEADS:
        raise SettingProblem("workers", "label DAgger's episodes with a look-ahead in parallel; add --algo dagger "
                                        "--expert oracle (or online), or leave --workers out")
    if command.init is not None:
        if command.kind == "dagger":
            raise SettingProblem("init", "starts a PPO or A2C training; DAgger starts from scratch")
        if not Path(command.init).is_file():
            raise SettingProblem("init", "no such file; give a policy.pt from cloudsim train deepk8s")


DEEPK8S_TRAINING = TrainingSpec(
    "deepk8s", "Deepk8s", Deepk8sConfig, "agents.deepk8s.training:run_training",
    summary="Deepk8s (PPO, A2C or DAgger)",
    description="Train a Deepk8s agent on Alibaba task sequences (5 machines of 10 cpu and 64 memory, a window of 10 "
                "tasks): PPO, A2C or DAgger imitation of SJF. Writes DIR/policy.pt (use it with --checkpoint "
                "deepk8s=DIR/policy.pt), the state to resume from and a log of every iteration.",
    describe=lambda agent: f"Deepk8s by {agent.algo} for {agent.iterations} iterations",
    writes="folder for policy.pt, the state to resume from, config.json and the log (log.csv, log.jsonl)",
    threads=1, options=Deepk8sTrainingOptions, check=check_training, kind="algo", state_file="model.zip",
    state_files={"dagger": "dagger.pt"}, reads=("init",), workload="deepk8s_workload")
"""``cloudsim train deepk8s``: the paper's agents on `traces.deepk8s_workload`'s sequences of seeds drawn from
`cloudsim.engine.envs.TRAINING_SEEDS`, so held-out evaluations (``cloudsim compare deepk8s --seeds 0:100``) never
meet a training sequence."""
