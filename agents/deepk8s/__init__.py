"""Deepk8s (Zhao & Sun, 2021): an actor-critic that places tasks from a window of 10 onto the machines.

The paper, section by section, and where each part lives:

* 4.1-4.3, state, actions and reward: `cloudsim.engine.envs.Deepk8sEnv` and its
  `Deepk8sEncoding` (observation, (slot, machine) actions plus wait, reward
  r = -sum_j t / d_j), which the trained broker below shares.
* 4.4, the network (`agents.deepk8s.network`): `ActorCritic`, whose first two layers (the trunk) the
  actor and the critic share (``network="flat"``); or `PairActorCritic`, which
  scores every (slot, machine) pair with the same weights, so that a policy
  trained on 5 machines runs on any number (``network="pairs"``, the default).
* 4.5, training (`train`, `agents.deepk8s.training`):
  - A3C, eq. 2-3 (`agents.deepk8s.sb3`): Stable-Baselines3's A2C, its synchronous form, with
    ``envs`` parallel environments: actor loss -log pi(a|s) (R - V(s)) minus
    beta H(pi), critic loss (R - V(s))^2;
  - PPO, eq. 4: sb3-contrib's MaskablePPO, the clipped objective
    min(rho A, clip(rho, 1 - eps, 1 + eps) A) with rho = pi(a|s) / pi_old(a|s),
    plus the same entropy bonus; the mask keeps it to pairs that fit;
  - imitation of SJF by DAgger, eq. 5: `train_dagger` (`agents.deepk8s.dagger`). The learner acts;
    the expert (SJF on the same window) labels every state the learner visits;
    the labelled states are aggregated and sampled in minibatches to maximise
    sum log pi(a_expert | s) + beta H(pi(.|s)).
* 5, baselines: FCFS, Random, SJF and Tetris on the same window
  (`agents.heuristics.Windowed`).

A trained policy is a broker (`Deepk8sBroker`, with its checkpoint and numpy forward in
`agents.deepk8s.broker`): it sees the window, acts
greedily among the pairs that fit, and waits (at most ``max_wait``) otherwise.
"""

from agents.kit.exports import lazy_exports

__getattr__, __all__ = lazy_exports(__name__, {
    "network": ("ActorCritic", "PairActorCritic", "make_network", "masked_logits", "optimizer_class"),
    "broker": ("AGENT", "POLICY_FILE", "Deepk8sBroker", "Deepk8sPolicy", "load_policy", "save_policy"),
    "envs": ("Workload", "expert_action", "make_env"),
    "sb3": ("check_init", "from_sb3", "sb3_policy", "to_sb3", "train_sb3"),
    "dagger": ("train_dagger",),
    "training": ("train",),
    "config": ("Deepk8sConfig", "shipped_checkpoint"),
})
