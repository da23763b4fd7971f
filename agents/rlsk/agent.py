"""RLSK (Huang, Xiao & Wu): a deep Q-network that sends each arriving job to one of M clusters, or postpones it.

The paper, section by section, and where each part lives:

* III-A and III-C, the federation, state (eq. 2), actions (eq. 3) and reward
  (eq. 4-8): `cloudsim.engine.envs.RLSKEnv` and its `Federation`, which the trained
  broker shares (`agents.rlsk.federation.FederatedBroker`).
* III-D, the network: a feed-forward Q-network from the state vector to one
  value per action (`hidden` ReLU layers).
* Algorithms 1 and 2, training: Stable-Baselines3's DQN, which is Algorithm 1
  line by line: epsilon-greedy actions (epsilon falling linearly from
  ``exploration_initial`` to ``exploration_final``), transitions
  (s_k, a_k, r_k, s_k+1) stored in a replay memory of N = ``buffer_size``,
  minibatches sampled from it, targets y = r + gamma max_a' Q-hat(s', a')
  (r alone at an episode's end) from a target network copied from Q every
  C = ``target_update`` steps. SB3 minimises the Huber loss of y - Q(s, a),
  the usual form of the squared error of Algorithm 1 with clipped gradients.
  Algorithm 2's "job_sequences" are a fixed set of ``sequences`` sequences,
  episodes drawing among them; an epoch (Figure 4's unit) is ``sequences``
  episodes.
* IV, the baselines: First Fit, Random, Round Robin and Least Load over clusters
  (`agents.rlsk.federation`).

A trained agent is a dispatcher (`RLSKPolicy`): greedy on its Q-values, numpy
only at decision time.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import torch

from agents.kit import (SHIPPED_CHECKPOINTS, TRAINING_THREADS, CheckpointMismatchError, TrainingLog, last_logged,
                        read_checkpoint,
                        save_checkpoint, training_device, training_threads, trim_log, unusable_checkpoint, write_config,
                        written_whole)
from agents.rlsk.config import RLSKConfig
from cloudsim.engine import arithmetic
from cloudsim import ClusterSpec, ClusterView, JobSpec
from cloudsim.engine.envs import TRAINING_SEEDS
from cloudsim.engine.envs.rlsk import Federation, RLSKEnv, RLSKWeights, cluster_bounds, federation_cluster

__all__ = ["RLSKConfig", "RLSKPolicy", "load_policy", "make_env", "run_training", "shipped_checkpoint", "train",
           "training_sequences"]

AGENT = "rlsk"
POLICY_FILE = "policy.pt"  # the broker's checkpoint: Q-network weights, config, cluster
SHIPPED = SHIPPED_CHECKPOINTS
Workload = Callable[[int], Sequence[JobSpec]]


# ------------------------------------------------------------------ the trained agent
class RLSKPolicy:
    """A trained Q-network as a dispatcher of `agents.rlsk.federation.FederatedBroker`: the action with the
    highest Q-value for the state of eq. 2 (a few small matrix products, `cloudsim.engine.arithmetic`'s)."""

    def __init__(self, layers: list[tuple[np.ndarray, np.ndarray]], config: RLSKConfig, cluster: ClusterSpec,
                 path: Path | None = None, preprocess: dict | None = None) -> None:
        self.layers = layers
        self.network = arithmetic.Network(layers)
        self.preprocess = preprocess
        self.config = config
        self.cluster = cluster
        self.path = path

    def q_values(self, obs: np.ndarray) -> np.ndarray:
        x = np.asarray(obs, dtype=np.float64)
        if self.preprocess is not None:  # phi: the training's standardisation, frozen
            p = self.preprocess
            x = np.clip((x - p["mean"]) / np.sqrt(p["var"] + p["epsilon"]), -p["clip"], p["clip"])
        return self.network(x)

    def __call__(self, federation: Federation, view: ClusterView, task: int) -> int:
        return int(np.argmax(self.q_values(federation.observe(view, task))))

    def check_cluster(self, cluster: ClusterSpec, clusters: int) -> list[str]:
        """Refuse a federation whose shape differs from the training one's (the state's size)."""
        trained = self.cluster
        if clusters != self.config.clusters or tuple(cluster.resources) != tuple(trained.resources):
            raise CheckpointMismatchError(
                f"{self.path or 'this RLSK policy'} was trained for {self.config.clusters} clusters with resources "
                f"{', '.join(trained.resources)}; this federation has {clusters} with {', '.join(cluster.resources)}. "
                f"Run it on such a federation (cloudsim compare rlsk ...) or train one for it (cloudsim train rlsk "
                f"--clusters N)", path=self.path)
        if cluster.machines != trained.machines or not np.allclose(cluster.capacity_array(), trained.capacity_array()):
            sizes = np.diff(cluster_bounds(cluster.machines, clusters)).tolist()
            shapes = np.unique(cluster.capacity_array(), axis=0).tolist()
            return [f"rlsk: trained on {self.config.clusters} clusters of {self.config.nodes} node(s) of "
                    f"{trained.capacity_array()[0].tolist()}; running on {cluster.machines} machines in clusters of "
                    f"{', '.join(map(str, sizes))} node(s) of "
                    f"{shapes[0] if len(shapes) == 1 else f'{len(shapes)} shapes'}: "
                    f"its states are ratios of a cluster's capacity, so it runs, but on clusters it has not seen"]
        return []


def _layers_from_sb3(q_net: torch.nn.Module) -> list[tuple[np.ndarray, np.ndarray]]:
    """(weight as inputs x outputs, bias) of each linear layer of SB3's Q-network, in order."""
    linear = [m for m in q_net.modules() if isinstance(m, torch.nn.Linear)]
    return [(m.weight.detach().numpy().T.copy(), m.bias.detach().numpy().copy()) for m in linear]


def save_policy(path: str | Path, layers: list[tuple[np.ndarray, np.ndarray]], config: RLSKConfig,
                cluster: ClusterSpec, preprocess: dict | None = None, extra: dict | None = None) -> Path:
    """The broker's checkpoint: the Q-network's weights (and the frozen standardisation of its inputs,
    with ``config.normalize``) with the config and the cluster it was trained for."""
    model = {}
    for i, (w, b) in enumerate(layers):
        model[f"layers.{i}.weight"] = torch.as_tensor(w.T.copy())
        model[f"layers.{i}.bias"] = torch.as_tensor(b)
    if preprocess is not None:
        model["preprocess.mean"] = torch.as_tensor(np.asarray(preprocess["mean"], dtype=np.float64))
        model["preprocess.var"] = torch.as_tensor(np.asarray(preprocess["var"], dtype=np.float64))
        extra = {"preprocess": {"epsilon": float(preprocess["epsilon"]), "clip": float(preprocess["clip"])},
                 **(extra or {})}
    cluster_entry = {"resources": list(cluster.resources), "capacity": cluster.capacity_array().tolist()}
    return save_checkpoint(path, agent=AGENT, config=config, model=model,
                           extra={"cluster": cluster_entry, **(extra or {})})


def shipped_checkpoint() -> Path:
    return SHIPPED / "rlsk.pt"


def load_policy(path: str | Path | None = None) -> RLSKPolicy:
    """The policy saved at ``path`` (default: the checkpoint shipped with the package)."""
    path = Path(path) if path is not None else shipped_checkpoint()
    saved = read_checkpoint(path, agent=AGENT, title="RLSK", keys=("cluster",), config_type=RLSKConfig,
                            fix="train one with `cloudsim train rlsk --out DIR` and pass DIR/policy.pt")
    model, config = saved["model"], saved["config"]
    count = len([k for k in model if k.startswith("layers.") and k.endswith(".weight")])
    layers = [(model[f"layers.{i}.weight"].numpy().T.copy(), model[f"layers.{i}.bias"].numpy().copy())
              for i in range(count)]
    entry = saved["cluster"]
    cluster = ClusterSpec(tuple(entry["resources"]), tuple(map(tuple, entry["capacity"])))
    expected = (config.clusters + 1) * len(cluster.resources)
    if layers[0][0].shape[0] != expected or layers[-1][0].shape[1] != config.clusters + 1:
        raise CheckpointMismatchError(f"{path}: its network's shape does not match its config ({config.clusters} "
                                      f"clusters); the file is damaged or was edited; train a new one with "
                                      f"`cloudsim train rlsk`", path=path)
    preprocess = None
    if config.normalize:
        if "preprocess.mean" not in model or "preprocess" not in saved:
            raise CheckpointMismatchError(f"{path}: its config standardises the state, but the file holds no "
                                          f"standardisation; the file is damaged or was edited; train a new one "
                                          f"with `cloudsim train rlsk`", path=path)
        preprocess = {"mean": model["preprocess.mean"].numpy(), "var": model["preprocess.var"].numpy(),
                      **saved["preprocess"]}
    return RLSKPolicy(layers, config, cluster, path, preprocess)


# ------------------------------------------------------------------ training (Algorithms 1 and 2)
def make_env(config: RLSKConfig, workload: Workload) -> RLSKEnv:
    """RLSK's environment as ``config`` sets it up (clusters, nodes, postponement, eq. 4's weights)."""
    return RLSKEnv(workload, federation_cluster(config.clusters, config.nodes), clusters=config.clusters,
                   postpone=config.postpone, weights=RLSKWeights(config.alpha, config.beta, config.gamma))


def train(config: RLSKConfig, workload: Workload, out: str | Path, *, resume: bool = False,
          tensorboard: bool = False, progress: bool = True, save_every: int = 5, device: str = "auto",
          threads: int = TRAINING_THREADS[AGENT]) -> Path:
    """Train RLSK by DQN on ``workload(seed)`` (the run layer passes the ``sequences`` training sequences);
    return the policy's checkpoint.

    ``out`` gets ``policy.pt`` (the broker's checkpoint), ``model.zip`` and
    ``replay.pkl`` (DQN's whole state, to resume from), ``config.json`` and the
    log (``log.csv``, ``log.jsonl``: one row per epoch with its episodes' mean
    total reward, imbalances and makespan), every ``save_every`` epochs and at the end. ``device``
    (`agents.kit.DEVICES`) is where Stable-Baselines3's DQN holds its networks; ``threads``, torch's CPU
    threads (`agents.kit.training_threads`).
    """
    from stable_baselines3 import DQN
    from stable_baselines3.common.callbacks import BaseCallback
    from stable_baselines3.common.env_util import make_vec_env
    from stable_baselines3.common.logger import Logger
    from stable_baselines3.common.vec_env import VecNormalize
    from tqdm.auto import tqdm

    training_threads(threads, training_device(device))
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    write_config(out, config)
    cluster = federation_cluster(config.clusters, config.nodes)
    envs = make_vec_env(lambda: make_env(config, workload), n_envs=config.envs, seed=config.seed)
    saved, buffer, statistics = out / "model.zip", out / "replay.pkl", out / "preprocess.pkl"
    if config.normalize:  # phi; the replay memory keeps raw states, standardised when sampled
        if resume:
            envs = VecNormalize.load(str(statistics), envs)
        else:
            envs = VecNormalize(envs, norm_obs=True, norm_reward=False, gamma=config.discount)
    done_epochs = 0
    if resume:
        done_epochs = int(read_checkpoint(out / POLICY_FILE, agent=AGENT, keys=("epochs",))["epochs"])
        trim_log(out, done_epochs, column="epoch")
        try:
            model = DQN.load(saved, env=envs, device=training_device(device))
            model.load_replay_buffer(buffer)
        except Exception as err:  # SB3 raises what zipfile, pickle or torch raise for a damaged file
            raise unusable_checkpoint(out, f"its DQN state (model.zip, replay.pkl) cannot be read "
                                      f"({type(err).__name__}: {err})", agent=AGENT, title="RLSK training",
                                      fix="start a new training in another folder") from None
    else:
        model = DQN("MlpPolicy", envs, learning_rate=config.learning_rate, buffer_size=config.buffer_size,
                    learning_starts=config.learning_starts, batch_size=config.batch_size, gamma=config.discount,
                    train_freq=config.train_freq, gradient_steps=1, target_update_interval=config.target_update,
                    exploration_fraction=config.exploration_fraction,
                    exploration_initial_eps=config.exploration_initial,
                    exploration_final_eps=config.exploration_final,
                    policy_kwargs={"net_arch": list(config.hidden)}, seed=config.seed,
                    device=training_device(device))
    model.set_logger(Logger(folder=None, output_formats=[]))  # the loss is read from it; TrainingLog writes

    def save(epochs: int) -> None:
        # model.zip last: what a resume looks for. Stopped on the way (Ctrl-C), no partial file is left.
        with written_whole(*([statistics] if config.normalize else []), buffer, saved) as partials:
            if config.normalize:
                envs.save(str(partials[0]))
            model.save_replay_buffer(partials[-2])
            model.save(partials[-1])
        preprocess = None
        if config.normalize:
            preprocess = {"mean": envs.obs_rms.mean, "var": envs.obs_rms.var, "epsilon": envs.epsilon,
                          "clip": envs.clip_obs}
        save_policy(out / POLICY_FILE, _layers_from_sb3(model.policy.q_net), config, cluster, preprocess,
                    extra={"epochs": epochs, "timesteps": model.num_timesteps})

    with TrainingLog(out, tensorboard=tensorboard) as log:

        class Epochs(BaseCallback):
            """One log row per epoch (``sequences`` finished episodes), checkpoints, a progress bar."""

            def _on_training_start(self) -> None:
                self.epoch = done_epochs
                self.episodes: list[dict] = []
                self.started = time.perf_counter()
                self.bar = tqdm(total=config.timesteps, initial=self.model.num_timesteps, unit="step",
                                desc="rlsk dqn", disable=not progress)

            def _on_step(self) -> bool:
                self.bar.update(self.training_env.num_envs)
                for info in self.locals["infos"]:
                    if "episode" in info:
                        self.episodes.append({"reward": info["episode"]["r"],
                                              **{k: info.get(k, float("nan")) for k in EPISODE_NUMBERS}})
                        if len(self.episodes) >= config.sequences:
                            self.finish_epoch()
                return True

            def finish_epoch(self) -> None:
                self.epoch += 1
                rows = self.episodes
                values = self.model.logger.name_to_value
                log.write({"epoch": self.epoch, "timesteps": self.model.num_timesteps, "episodes": len(rows),
                           "reward": float(np.mean([r["reward"] for r in rows])),
                           **{k: float(np.nanmean([r[k] for r in rows])) for k in EPISODE_NUMBERS},
                           "epsilon": float(self.model.exploration_rate), "loss": values.get("train/loss"),
                           "wall_s": time.perf_counter() - self.started})
                self.episodes = []
                if self.epoch % save_every == 0:
                    save(self.epoch)

            def _on_training_end(self) -> None:
                self.bar.close()
                save(self.epoch)

        remaining = config.timesteps - model.num_timesteps
        try:
            if remaining > 0:
                model.learn(total_timesteps=remaining, callback=Epochs(), log_interval=None,
                            reset_num_timesteps=not resume)
            elif not (out / POLICY_FILE).is_file():
                save(0)
        except KeyboardInterrupt as interrupted:
            if (out / POLICY_FILE).is_file():
                done = read_checkpoint(out / POLICY_FILE, agent=AGENT, keys=("epochs",))["epochs"]
                interrupted.add_note(f"the training saved at epoch {done} is in {out}; add --resume to continue it")
            raise
        finally:
            envs.close()
    return out / POLICY_FILE


def training_sequences(config: RLSKConfig, draw: Callable[..., Sequence[JobSpec]]) -> Workload:
    """``workload(s)``: the training sequence ``s mod sequences``, drawn by ``draw`` (`traces.rlsk_workload`) from
    seed 1,000 + that (`cloudsim.engine.envs.TRAINING_SEEDS`' range), so that held-out evaluations
    (``cloudsim compare rlsk --seeds 0:20``) never meet a training sequence."""
    first = TRAINING_SEEDS[0]

    def workload(seed: int) -> Sequence[JobSpec]:
        return draw(config.load, config.jobs, seed=first + seed % config.sequences, clusters=config.clusters)

    return workload


def run_training(config: RLSKConfig, out: str | Path, *, workload: Callable[..., Sequence[JobSpec]], **run) -> dict:
    """``cloudsim train rlsk`` (its `agents.registry.TrainingSpec`): `train` on the training sequences ``workload``
    draws (`training_sequences`), then the summary the command prints: steps, epochs, the policy, the wall time
    and the last epoch's mean total reward."""
    started = time.perf_counter()
    policy = train(config, training_sequences(config, workload), out, **run)
    last = last_logged(out)
    return {"agent": AGENT, "timesteps": config.timesteps, "epochs": last.get("epoch", 0), "policy": str(policy),
            "wall_s": round(time.perf_counter() - started, 3), "last_reward": last.get("reward")}


EPISODE_NUMBERS = ("total_reward", "imbalance_resources", "imbalance_machines", "mean_utilisation", "makespan",
                   "postponements")
"""What the training log averages over an epoch's episodes, from each finished episode's info."""
