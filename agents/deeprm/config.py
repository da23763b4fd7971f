"""DeepRM's hyper-parameters, in one dataclass that imports no torch (the command line reads its defaults).

Section 4 of Mao et al. (2016) gives the network (one hidden layer of 20
units), 100 jobsets, N = 20 episodes per jobset, rmsprop at 0.001, M = 10 slots
and 50 steps of arrivals per jobset; its published code gives the rest
(rmsprop's decay 0.9 and epsilon 1e-9, trajectories cut at 200 actions,
undiscounted returns).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from agents.kit.checks import check_finite, check_learning_rate, check_whole
from agents.kit.settings import SettingProblem, setting
from agents.registry import TrainingSpec
from cloudsim.engine.checks import is_finite_number, number_problem
from cloudsim.engine.envs.deeprm import ARRIVALS, MODES, OBJECTIVES, DeepRMParams, arrival_rate, jobsets_at_load

__all__ = ["CLONING", "DEEPRM_PLUS_DEFAULTS", "DEEPRM_PLUS_TRAINING", "DEEPRM_TRAINING", "DeepRMConfig",
           "DeepRMTrainingOptions", "TRAINING_JOBSET_SEED", "NETWORKS", "HIDDEN"]

NETWORKS = ("dense", "cnn")
"""``dense``: DeepRM's one hidden layer; ``cnn``: DeepRM_Plus's Table I network."""

HIDDEN = {"dense": 20, "cnn": 69}
"""The hidden units each network has in its paper."""

TRAINING_JOBSET_SEED = 1_000
"""Training jobsets come from this seed (all ``jobsets`` in one draw, as the code does; cloning's from the
next one, fresh iterations' from the ones after); evaluation jobsets are single draws from seeds below
it, so they are never trained on."""


@dataclass(frozen=True)
class DeepRMConfig:
    """How a DeepRM agent is built and trained.

    Attributes:
        slots: M, the visible job slots (the paper's 10).
        load: the expected load per resource the jobsets offer (0.7 = 70 %).
        mode: "code" (the published code's job sizes and quirks) or "paper" (section 4.1's sizes).
        objective: the reward: "slowdown", "completion" or "makespan" (section 3.4).
        simu_len: time steps with arrivals per jobset (the paper's 50).
        jobsets: training jobsets (the paper's 100).
        episodes: N, episodes per jobset and iteration (the paper's 20).
        iterations: training iterations (the paper's 1000).
        learning_rate: rmsprop's step (the paper's 0.001).
        rms_decay, rms_eps: rmsprop's decay and epsilon (the code's 0.9 and 1e-9).
        hidden: units of the hidden layer (the paper's 20).
        gamma: the discount of returns (1: the cumulative reward is minus the summed slowdowns).
        max_actions: an episode's trajectory is cut after this many actions, allocations
            included (the code's episode_max_length, 200), and the environment's time cap.
        jobset_seed: the seed the training jobsets are drawn from.
        seed: torch's and the action sampler's seed.
        network: ``"dense"`` (DeepRM) or ``"cnn"`` (DeepRM_Plus, Table I).
        workload: ``"bernoulli"`` (DeepRM's jobsets of ``simu_len`` steps) or
            ``"poisson"`` (DeepRM_Plus's jobsets of 5-50 jobs; ``simu_len`` unused).
        clone_jobsets: DeepRM_Plus's Algorithm 2 before REINFORCE: the jobsets
            (drawn from ``jobset_seed + 1``) on which SJF's state-action pairs are
            collected to clone it; 0 starts from random weights.
        clone_accuracy: cloning stops once the test accuracy passes this.
        clone_epochs: cloning stops after this many epochs at the latest.
        clone_learning_rate, clone_batch: the cloning's Adam step and minibatch (1e-3 and 256; the paper gives
            neither).
        fresh_jobsets: draw the ``jobsets`` afresh every iteration (iteration i's from seed
            ``jobset_seed + 1 + i``), so that the policy cannot fit a fixed set; False trains on one
            set drawn from ``jobset_seed``, as DeepRM's code does.
    """

    slots: int = setting(10, "M, the visible job slots", metavar="M")
    load: float = setting(0.7, "expected load per resource of the training jobsets (0.7 = 70 %)")
    mode: str = setting("code", "job sizes: code (the published code's, loads up to 184 %) or paper (section 4.1's, "
                        "loads up to 92 %)", flag="--sizes", choices=MODES)
    objective: str = setting("slowdown", "the reward: slowdown (-sum 1/len), completion (-jobs in the system) or "
                             "makespan (-1 while jobs remain)", choices=OBJECTIVES)
    simu_len: int = 50
    jobsets: int = setting(100, "training jobsets")
    episodes: int = setting(20, "episodes per jobset and iteration (N)")
    iterations: int = setting(1000, "training iterations (in all, counting those a resumed run already did; "
                              "DeepRM_Plus's come after cloning)")
    learning_rate: float = setting(1e-3, "rmsprop's learning rate", metavar="LR")
    rms_decay: float = 0.9
    rms_eps: float = 1e-9
    hidden: int | None = None
    gamma: float = 1.0
    max_actions: int = 200
    jobset_seed: int = TRAINING_JOBSET_SEED
    seed: int = setting(0, "seeds the network and the action sampler")
    network: str = "dense"
    workload: str = setting("bernoulli", "bernoulli (DeepRM's jobsets: 50 steps, at most one arrival per step) or "
                            "poisson (DeepRM_Plus's: 5-50 jobs, Poisson arrivals)", flag="--arrivals", choices=ARRIVALS)
    clone_jobsets: int = setting(0, "jobsets on which SJF's state-action pairs are collected (Algorithm 2); 0 skips "
                                 "cloning")
    clone_accuracy: float = setting(0.9, "cloning stops once the test accuracy passes this")
    clone_epochs: int = setting(30, "cloning stops after this many epochs")
    clone_learning_rate: float = 1e-3
    clone_batch: int = 256
    fresh_jobsets: bool = setting(False, "draw the --jobsets afresh every iteration (from seeds above the training "
                                  "seed) instead of training on one fixed set")

    def __post_init__(self) -> None:
        if self.network not in NETWORKS:
            raise ValueError(f"DeepRMConfig.network must be one of {NETWORKS}, got {self.network!r}")
        if self.workload not in ARRIVALS:
            raise ValueError(f"DeepRMConfig.workload must be one of {ARRIVALS}, got {self.workload!r}")
        if self.hidden is None:
            object.__setattr__(self, "hidden", HIDDEN[self.network])
        check_whole(self, ("clone_jobsets",), 0)
        if self.clone_jobsets and self.network != "cnn":
            raise ValueError("cloning SJF (clone_jobsets > 0) is DeepRM_Plus's first stage: use network 'cnn'")
        check_finite(self, ("clone_accuracy",), above=0, at_most=1)
        check_whole(self, ("clone_epochs", "clone_batch"), 1)
        check_learning_rate(self, "clone_learning_rate")
        check_whole(self, ("slots", "simu_len", "jobsets", "episodes", "iterations", "hidden", "max_actions"), 1)
        if self.mode not in MODES:
            raise ValueError(f"DeepRMConfig.mode must be one of {MODES}, got {self.mode!r}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"DeepRMConfig.objective must be one of {OBJECTIVES}, got {self.objective!r}")
        check_learning_rate(self)
        check_finite(self, ("rms_eps",), above=0)
        if not (is_finite_number(self.rms_decay) and 0 < self.rms_decay < 1):
            raise ValueError(f"rms_decay must be in (0, 1), got {self.rms_decay!r}")
        check_finite(self, ("gamma",), above=0, at_most=1)
        self.env_params()  # the load must be reachable with one arrival per step

    def env_params(self) -> DeepRMParams:
        """The environment this agent trains in (time capped at ``max_actions``)."""
        base = DeepRMParams(slots=self.slots, mode=self.mode, objective=self.objective, simu_len=self.simu_len,
                            max_time=self.max_actions)
        rate = arrival_rate(self.workload, self.load, base)  # checks the load
        return base if self.workload == "poisson" else replace(base, new_job_rate=rate)

    def draw_jobsets(self, seed: int, count: int):
        """``count`` jobsets of this workload drawn from ``seed``: (lengths, sizes, arrivals or None)."""
        return jobsets_at_load(self.workload, seed, count, self.env_params(), self.load)


DEEPRM_PLUS_DEFAULTS = DeepRMConfig(network="cnn", workload="poisson", load=1.4, jobsets=25, episodes=5,
                                    iterations=300, learning_rate=1e-4, clone_jobsets=200, clone_epochs=20)
"""DeepRM_Plus's settings unless told otherwise: section V-B's 25 jobsets at 140 %; 5 episodes per jobset and 300
iterations keep a training within hours on two cores (the CNN's step costs 100 times the dense network's);
rmsprop at 1e-4 moves the cloned weights gently (the paper gives neither)."""


CLONING = ("clone_jobsets", "clone_accuracy", "clone_epochs")
"""DeepRM_Plus's settings of cloning SJF (Algorithm 2), which DeepRM's dense network does not take."""


@dataclass(frozen=True)
class DeepRMTrainingOptions:
    """``cloudsim train deeprm``'s and ``deeprm-plus``'s options beside the agent's settings."""

    keep_every: int = setting(0, "also keep every Nth iteration's checkpoint as policy-NNNNN.pt, to choose one on "
                              "validation jobsets afterwards (default 0: keep only the last)", metavar="N")


def check_training(command) -> None:
    """--keep-every: a whole number >= 0 (`agents.registry.TrainingSpec.check`)."""
    problem = number_problem(command.keep_every, whole=True, at_least=0)
    if problem is not None:
        raise SettingProblem("keep_every", f"{problem} (0 keeps only the last checkpoint)")


def _describe(title: str):
    return lambda agent: (f"{title} ({agent.objective}, load {agent.load:g}, {agent.workload} workload, {agent.mode} "
                          f"sizes, {agent.jobsets} jobsets x {agent.episodes} episodes) for {agent.iterations} "
                          "iterations")


DEEPRM_TRAINING = TrainingSpec(
    "deeprm", "DeepRM", DeepRMConfig, "agents.deeprm.agent:run_training",
    summary="DeepRM (REINFORCE on the cluster image)",
    description="Train DeepRM by REINFORCE with a per-step baseline in DeepRM's environment (M slots, a 20-step "
                "image, jobsets of 50 steps): the jobsets' N episodes run in lockstep. Writes DIR/policy.pt (use it "
                "with --checkpoint deeprm=DIR/policy.pt), config.json and a log of every iteration (mean and maximum "
                "total reward, mean slowdown).",
    describe=_describe("DeepRM"),
    writes="folder for policy.pt (also the state to resume from), config.json and the log (log.csv, log.jsonl)",
    threads=1, options=DeepRMTrainingOptions, check=check_training, leave_out=CLONING, progress_key="iteration")
"""``cloudsim train deeprm``: DeepRM by REINFORCE in its own environment; training jobsets are drawn from
`TRAINING_JOBSET_SEED`, held-out evaluations use single jobsets of seeds below it (``cloudsim compare deeprm --env
deeprm --seeds 0:100``). One thread: the dense network is small enough that more cost more than they give."""

DEEPRM_PLUS_TRAINING = TrainingSpec(
    "deeprm-plus", "DeepRM_Plus", DeepRMConfig, "agents.deeprm.agent:run_training",
    summary="DeepRM_Plus (SJF cloned into a CNN, then REINFORCE)",
    description="Train DeepRM_Plus in DeepRM's environment: Table I's CNN first clones SJF on its state-action "
                "pairs (Algorithm 2), then REINFORCE with DeepRM's per-step baseline improves it (Algorithm 3), on "
                "the paper's Poisson workload (jobsets of 5-50 jobs). Writes DIR/policy.pt (use it with --checkpoint "
                "deeprm-plus=DIR/policy.pt), config.json, clone.json and a log of every iteration.",
    describe=_describe("DeepRM_Plus"),
    writes="folder for policy.pt (also the state to resume from), config.json, clone.json (the cloning's test "
           "accuracy) and the log",
    threads=2, options=DeepRMTrainingOptions, check=check_training, defaults=DEEPRM_PLUS_DEFAULTS,
    marks={"network": "cnn"}, progress_key="iteration", checkpoint_agent="deeprm")
"""``cloudsim train deeprm-plus``: DeepRM_Plus's defaults (Table I's CNN, SJF cloned first, its Poisson workload
at 140 %) on DeepRM's config and training; its checkpoints are DeepRM's (one agent, two networks)."""
