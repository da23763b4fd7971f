"""Deepk8s's A3C (eq. 2-3, as Stable-Baselines3's synchronous A2C) and PPO (eq. 4, sb3-contrib's
MaskablePPO), with the network of section 4.4 as their policy."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Sequence

import numpy as np
import torch
from torch import nn

from agents.deepk8s.broker import AGENT, POLICY_FILE, Deepk8sPolicy, load_policy, save_policy
from agents.deepk8s.envs import Workload, make_env
from agents.deepk8s.network import ActorCritic, PairActorCritic, layers, optimizer_class
from agents.deepk8s.config import Deepk8sConfig
from agents.kit import CheckpointMismatchError, TrainingLog, training_device, unusable_checkpoint, written_whole
from cloudsim import ClusterSpec


def sb3_policy(config: Deepk8sConfig, resources: int) -> tuple[type | str, dict]:
    """The SB3 policy class and its keyword arguments for ``config.network`` (PPO's masked class or A2C's)."""
    from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
    from stable_baselines3.common.policies import ActorCriticPolicy
    from stable_baselines3.common.torch_layers import BaseFeaturesExtractor

    optimizer = {"optimizer_class": optimizer_class(config), "optimizer_kwargs": {}}
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
            self.trunk = layers(observation_space.shape[0], sizes)

        def forward(self, obs: torch.Tensor) -> torch.Tensor:
            return self.trunk(obs)

    return "MlpPolicy", {"features_extractor_class": SharedTrunk, "features_extractor_kwargs": {"sizes": config.trunk},
                         "share_features_extractor": True,
                         "net_arch": {"pi": list(config.head), "vf": list(config.head)}, "activation_fn": nn.ReLU,
                         **optimizer}


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

    envs = make_vec_env(lambda: make_env(config, workload, cluster), n_envs=config.envs, seed=config.seed)
    # Rewards are divided by a running estimate of the return's spread (returns reach -thousands while
    # the policy still waits a lot); the logged rewards are the environment's own.
    statistics = out / "reward_scale.pkl"
    algorithm = MaskablePPO if config.algo == "ppo" else A2C
    saved = out / "model.zip"
    resources = len(cluster.resources)
    policy_class, policy_kwargs = sb3_policy(config, resources)
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
        # model.zip last: what a resume looks for. Stopped on the way (Ctrl-C), no partial file is left.
        with written_whole(statistics, saved) as (scale, state):
            model.save(state)
            envs.save(str(scale))
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
