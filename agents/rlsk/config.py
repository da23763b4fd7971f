"""RLSK's hyper-parameters, in one dataclass that imports no torch (the command line reads its defaults).

Huang, Xiao & Wu give the setting (3 clusters of 1r per resource, the
workload of section IV-A, about 70 % load), the algorithm (DQN with replay, a
target network updated every C steps, epsilon-greedy) and the reward's form;
they give no numbers for the network, the reward's weights, the postponement,
the discount or DQN's settings. The values below are this project's choices,
documented in docs/papers/rlsk.md.
"""

from __future__ import annotations

from dataclasses import dataclass

from agents.kit.checks import check_finite, check_learning_rate, check_whole
from agents.kit.settings import setting
from agents.registry import TrainingSpec

from cloudsim.engine.envs.rlsk import DEFAULT_POSTPONE, RLSKWeights, postpone_range

__all__ = ["RLSKConfig", "RLSK_TRAINING"]

_WEIGHTS = RLSKWeights()  # eq. 4's default weights are the environment's


@dataclass(frozen=True)
class RLSKConfig:
    """How an RLSK agent is built and trained (Algorithms 1 and 2).

    Attributes:
        timesteps: environment steps (dispatch decisions) in all.
        envs: environments stepped together (one batched forward per step of all of them).
        learning_rate: Adam's step size.
        buffer_size: N, the replay memory's capacity in transitions.
        learning_starts: steps of random actions before the first update.
        batch_size: transitions per minibatch.
        discount: the gamma of eq. 1 (a step is one decision, about 0.8 time units at 70 % load).
        target_update: C, steps between copies of Q into the target network Q-hat.
        train_freq: steps (per environment) between gradient steps.
        exploration_fraction: share of ``timesteps`` over which epsilon falls linearly.
        exploration_initial, exploration_final: epsilon at the start and after the fall.
        hidden: sizes of the Q-network's hidden layers (ReLU).
        normalize: Algorithm 1's preprocessing phi: each state feature standardised
            by its running mean and standard deviation over the states seen in
            training (frozen in the saved policy). Clusters' utilisations differ
            by a few hundredths; standardised, the network tells them apart.
        load: the training sequences' load (section IV-A evaluates at about 70 %).
        jobs: jobs per sequence.
        sequences: the fixed set of training sequences (Algorithm 2's
            job_sequences); an epoch is that many episodes.
        clusters: M.
        nodes: nodes per cluster (1: each cluster is one resource pool, as in the paper).
        postpone: (low, high), whole steps a postponed job stays away (uniform).
        alpha, beta, gamma: eq. 4's weights of Util, DiffCluster and DiffRes.
        seed: seeds the network, exploration and the environments.
    """

    timesteps: int = setting(600_000, "dispatch decisions in all (counting those a resumed run already made)")
    envs: int = setting(4, "environments stepped together")
    learning_rate: float = setting(2.5e-4, "Adam's step size", metavar="LR")
    buffer_size: int = setting(100_000, "N: the replay memory's capacity")
    learning_starts: int = 5_000
    batch_size: int = 256
    discount: float = setting(0.9, "gamma of the Q-learning target, per decision", metavar="G")
    target_update: int = setting(5_000, "C: steps between copies of Q into the target network", metavar="C")
    train_freq: int = 4
    exploration_fraction: float = setting(0.3, "share of the steps over which epsilon falls to its final value",
                                          metavar="F")
    exploration_initial: float = 1.0
    exploration_final: float = 0.02
    hidden: tuple[int, ...] = (128, 128)
    normalize: bool = True
    load: float = setting(0.7, "the training sequences' load (0.7 = 70 % of the clusters' capacity)",
                          metavar="LOAD")
    jobs: int = setting(1000, "jobs per training sequence")
    sequences: int = setting(10, "training sequences; an epoch is one episode per sequence")
    clusters: int = setting(3, "M, the clusters", metavar="M")
    nodes: int = setting(1, "nodes per cluster (1: a cluster is one resource pool)")
    postpone: tuple[int, int] = setting(DEFAULT_POSTPONE, "LOW:HIGH, whole steps a postponed job stays away "
                                        "(uniform)")
    alpha: float = setting(_WEIGHTS.alpha, "eq. 4's weight of Util", metavar="A")
    beta: float = setting(_WEIGHTS.beta, "eq. 4's weight of DiffCluster (eq. 7)", metavar="B")
    gamma: float = setting(_WEIGHTS.gamma, "eq. 4's weight of DiffRes (eq. 8)", metavar="C")
    seed: int = setting(0, "seeds the network, exploration and the environments")

    def __post_init__(self) -> None:
        check_whole(self, ("timesteps", "envs", "buffer_size", "batch_size", "target_update", "train_freq", "jobs",
                           "sequences", "clusters", "nodes"), 1)
        check_whole(self, ("learning_starts", "seed"), 0)
        if not self.hidden or not all(isinstance(s, int) and s >= 1 for s in self.hidden):
            raise ValueError(f"hidden must be one or more layer sizes >= 1, got {self.hidden!r}")
        postpone_range(self.postpone)
        check_finite(self, ("load",), above=0)
        check_learning_rate(self)
        check_finite(self, ("discount", "exploration_fraction", "exploration_initial", "exploration_final"),
                     at_least=0, at_most=1)
        check_finite(self, ("alpha", "beta", "gamma"), at_least=0)


RLSK_TRAINING = TrainingSpec(
    "rlsk", "RLSK", RLSKConfig, "agents.rlsk.agent:run_training",
    summary="RLSK (DQN over federated clusters)",
    description="Train RLSK's deep Q-network (replay memory, target network, epsilon-greedy) to send each arriving "
                "job to one of M clusters or postpone it, on a fixed set of RLSK job sequences (section IV-A: "
                "Bernoulli arrivals, 3 clusters of 1 cpu and 1 memory, 70 % load). Writes DIR/policy.pt (use it with "
                "--checkpoint rlsk=DIR/policy.pt), the state to resume from, config.json and a log of every epoch "
                "(one episode per sequence).",
    describe=lambda agent: (f"RLSK by DQN for {agent.timesteps} steps on {agent.sequences} sequences of {agent.jobs} "
                            f"jobs (load {agent.load:g}, {agent.clusters} clusters of {agent.nodes} node(s))"),
    writes="folder for policy.pt, the state to resume from (model.zip, replay.pkl), config.json and the log (log.csv, "
           "log.jsonl)",
    threads=1, length="timesteps", unit="epochs", save_every=5, progress_key="timesteps", state_file="model.zip",
    workload="rlsk_workload", load_of="rlsk")
"""``cloudsim train rlsk``: the DQN on a fixed set of `traces.rlsk_workload` sequences
(`agents.rlsk.agent.training_sequences`), whose loads the rlsk generator must be able to draw."""
