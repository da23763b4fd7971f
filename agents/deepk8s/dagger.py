"""Deepk8s's imitation of SJF by DAgger (eq. 5): the learner acts, the expert labels every state it
visits, and the aggregated labels are fitted with an entropy bonus.

The expert is SJF on the window (the paper's), or a look-ahead (`agents.deepk8s.rollout.RolloutOracle`): the rollout
oracle (``expert="oracle"``), which knows the whole sequence, or the online look-ahead (``expert="online"``),
which plays out only the tasks that have arrived. A look-ahead's label costs a play-out per candidate
action, so it labels an iteration's episodes after the learner has played them: each episode is
replayed from its seed and actions (the environment is deterministic) in ``workers`` processes, and its
labels are kept in ``out/oracle-labels/`` (``online-labels/``) as soon as they are made, so that a stopped
training resumes without labelling them again. The labels, and so the training, are the same for any number
of workers.
"""

from __future__ import annotations

import copy
import multiprocessing
import signal
import time
from pathlib import Path

import numpy as np
import torch

from agents.deepk8s.broker import AGENT, POLICY_FILE, save_policy
from agents.deepk8s.envs import Workload, expert_action, make_env
from agents.deepk8s.network import make_network, masked_logits, optimizer_class
from agents.deepk8s.config import Deepk8sConfig
from agents.heuristics.classic import ShortestJobFirst, Windowed
from agents.kit import (TrainingLog, read_checkpoint, restore_rng, rng_state, save_checkpoint, training_device,
                        written_whole)
from agents.deepk8s.rollout import RolloutOracle
from cloudsim import ClusterSpec

def labels_folder(expert: str) -> str:
    """The folder of a training's ``out`` where the look-ahead ``expert`` keeps its labels of each episode."""
    return f"{expert}-labels"


def oracle_labels(config: Deepk8sConfig, workload: Workload, cluster: ClusterSpec, seed: int,
                  actions: np.ndarray) -> np.ndarray:
    """The look-ahead's (``config.expert``'s) action in each state of the episode that ``env.reset(seed=seed)``
    starts and ``actions`` play (the learner's): it continues with SJF, and the oracle knows the episode's whole
    sequence."""
    env = make_env(config, workload, cluster)
    _, info = env.reset(seed=seed)
    jobs = workload(info["workload_seed"])
    oracle = RolloutOracle(jobs, cluster, lambda: Windowed(ShortestJobFirst(), config.window), window=config.window,
                           max_wait=config.max_wait, knows_arrivals=config.expert == "oracle")
    labels = np.empty(len(actions), dtype=np.int64)
    for step, action in enumerate(actions):
        labels[step] = expert_action(env, oracle)
        env.step(int(action))
    return labels


_SHARED: tuple = ()  # (config, workload, cluster) of the labelling processes, inherited when they fork


def _label_episode(task: tuple[int, np.ndarray]) -> np.ndarray:
    return oracle_labels(*_SHARED, *task)


def _quiet() -> None:
    # Ctrl-C stops the training, which ends the workers; they die quietly on the SIGTERM that ends them, not
    # through the handler the command line installed before they forked.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def label_with_oracle(config: Deepk8sConfig, workload: Workload, cluster: ClusterSpec, episodes: list,
                      folder: Path, iteration: int, workers: int) -> list[np.ndarray]:
    """The look-ahead's labels of ``episodes`` (``(seed, actions)`` each), in their order: read from ``folder``
    where an earlier run of this iteration kept them (for the same actions), else made in ``workers``
    processes and kept there as each episode is done."""
    global _SHARED
    folder.mkdir(parents=True, exist_ok=True)
    paths = [folder / f"{iteration:05d}-{k:03d}.npz" for k in range(len(episodes))]
    labels: list[np.ndarray | None] = [None] * len(episodes)
    for k, (path, (_, actions)) in enumerate(zip(paths, episodes)):
        if path.is_file():
            kept = np.load(path)
            if np.array_equal(kept["actions"], actions):
                labels[k] = kept["labels"]
    todo = [k for k, found in enumerate(labels) if found is None]

    def keep(k: int, made: np.ndarray) -> None:
        labels[k] = made
        with written_whole(paths[k]) as (partial,), open(partial, "wb") as handle:  # whole or absent
            np.savez(handle, actions=episodes[k][1], labels=made)

    if workers <= 1 or len(todo) <= 1:
        for k in todo:
            keep(k, oracle_labels(config, workload, cluster, *episodes[k]))
        return labels
    _SHARED = (config, workload, cluster)
    pool = multiprocessing.get_context("fork").Pool(min(workers, len(todo)), initializer=_quiet)
    try:
        for k, made in zip(todo, pool.imap(_label_episode, [episodes[k] for k in todo])):
            keep(k, made)
        pool.close()
    except BaseException:
        pool.terminate()  # stopped or failed: the episodes not labelled yet are labelled on the next run
        raise
    finally:
        pool.join()
        _SHARED = ()
    return labels


def train_dagger(config: Deepk8sConfig, workload: Workload, out: Path, cluster: ClusterSpec, *, resume: bool,
                 log: TrainingLog, progress: bool, save_every: int, device: str = "auto", workers: int = 1) -> Path:
    """DAgger: the learner acts, the expert labels every visited state, minibatches from the aggregated set.

    ``out/dagger.pt`` holds the whole state (weights, optimiser, random states,
    the aggregated set), so a resumed training continues exactly as an
    uninterrupted one. ``workers``: processes labelling with a look-ahead (the
    module's docstring); SJF labels as the learner plays.
    """
    from tqdm.auto import tqdm

    rng = np.random.default_rng(config.seed)
    torch.manual_seed(config.seed)
    env = make_env(config, workload, cluster)
    expert = Windowed(ShortestJobFirst(), config.window) if config.expert == "sjf" else None  # None: a look-ahead
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
        returns, agreed, visited, played = [], 0, 0, []
        for _ in range(config.dagger_episodes):
            seed = int(rng.integers(2**31))
            obs, _ = env.reset(seed=seed)
            total, finished, actions = 0.0, False, []
            while not finished:
                mask = env.action_masks()
                with torch.no_grad():
                    logits, _ = net(torch.as_tensor(obs))
                probs = torch.softmax(masked_logits(logits, torch.as_tensor(mask)), -1).numpy().astype(np.float64)
                action = int(rng.choice(len(probs), p=probs / probs.sum()))
                states.append(obs[None])
                masks.append(mask[None])
                if expert is not None:
                    label = expert_action(env, expert)
                    labels.append(np.array([label]))
                    agreed += action == label
                actions.append(action)
                visited += 1
                obs, reward, terminated, truncated, _ = env.step(action)
                total += reward
                finished = terminated or truncated
            returns.append(total)
            played.append((seed, np.array(actions, dtype=np.int64)))
        if expert is None:  # the look-ahead labels the episodes just played, in parallel
            made = label_with_oracle(config, workload, cluster, played, out / labels_folder(config.expert), iteration,
                                     workers)
            labels += made
            agreed += sum(int((episode_labels == actions).sum()) for episode_labels, (_, actions) in zip(made, played))
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
