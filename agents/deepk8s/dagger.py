"""Deepk8s's imitation of SJF by DAgger (eq. 5): the learner acts, the expert labels every state it
visits, and the aggregated labels are fitted with an entropy bonus."""

from __future__ import annotations

import copy
import time
from pathlib import Path

import numpy as np
import torch

from agents.deepk8s.broker import AGENT, POLICY_FILE, save_policy
from agents.deepk8s.envs import Workload, expert_action, make_env
from agents.deepk8s.network import make_network, masked_logits, optimizer_class
from agents.deepk8s_config import Deepk8sConfig
from agents.heuristics import ShortestJobFirst, Windowed
from agents.kit import TrainingLog, read_checkpoint, restore_rng, rng_state, save_checkpoint, training_device
from cloudsim import ClusterSpec


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
    optimiser = optimizer_class(config)(learner.parameters(), lr=config.learning_rate)
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
