"""DeepRM (Mao et al., HotNets 2016): a policy network on the cluster image, trained by REINFORCE.

The network (section 4) is one fully connected hidden layer of 20 units on the
image, then a softmax over the M slots and the void action. Training (section
3.3, Figure 3) runs N episodes on each of the jobsets with the current policy;
from each episode's rewards it computes the returns v_t; the baseline b_t is,
per jobset, the mean of v_t over its N episodes at the same step t (shorter
episodes padded with zeros); one rmsprop step then follows

    grad = mean over all steps of all episodes of  grad log pi(a_t | s_t) (v_t - b_t).

All ``jobsets x N`` episodes of an iteration run in lockstep in one
`DeepRMBatch`, with one batched forward per step. The forward never draws the
image: the hidden layer's dot product with a picture made of filled prefixes
and rectangles equals a sum of prefix sums of its weights, one gather per
image row and slot (`DeepRMNet.logits_snapshot`; `DeepRMNet.forward` is the same
function on a drawn image, and a test holds them equal). That makes a step
about 60 times cheaper than the matrix product over the 4,480 pixels.
"""

from __future__ import annotations

import copy
import dataclasses
import json
import shutil
import time
from pathlib import Path
from typing import Callable

import numpy as np
import torch
from torch import nn

from agents.deeprm.config import DeepRMConfig
from agents.deeprm.numpy_forward import NumpyDeepRM
from agents.kit import (SHIPPED_CHECKPOINTS, TRAINING_THREADS, TrainingLog, baselines, changed_settings, last_logged,
                        read_checkpoint, restore_rng, returns_to_go, rng_state, save_checkpoint, training_device,
                        training_threads, trim_log, write_config, written_whole)
from cloudsim.engine import arithmetic
from cloudsim.engine.envs.deeprm import DeepRMBatch, DeepRMParams, render_image

__all__ = ["AGENT", "POLICY_FILE", "shipped_checkpoint", "DeepRMNet", "DeepRMPolicy", "make_net", "load_policy",
           "read_policy_checkpoint", "rollout", "run_training", "train"]

AGENT = "deeprm"
POLICY_FILE = "policy.pt"
SHIPPED = SHIPPED_CHECKPOINTS


def shipped_checkpoint(objective: str = "slowdown", agent: str = AGENT) -> Path:
    """The checkpoint shipped for ``agent`` ("deeprm": trained at 70 % load, M = 10, the code's job
    sizes; "deeprm-plus": at 140 % on DeepRM_Plus's Poisson workload) and ``objective``."""
    return SHIPPED / (f"{agent}.pt" if objective == "slowdown" else f"{agent}-{objective}.pt")


class DeepRMNet(nn.Module):
    """Image -> 20 ReLU units -> logits over the slots and void (section 4)."""

    update_rows = 16_384
    """Steps per forward pass of `update`: the prefix-sum forward needs little memory per step."""

    def __init__(self, params: DeepRMParams, hidden: int = 20) -> None:
        super().__init__()
        self.params = params
        height, width = params.image_shape
        self.hidden = nn.Linear(height * width, hidden)
        self.out = nn.Linear(hidden, params.slots + 1)
        for layer in (self.hidden, self.out):  # the code's initialisation: N(0, 0.01), zero biases
            nn.init.normal_(layer.weight, std=0.01)
            nn.init.zeros_(layer.bias)

    def forward(self, image: torch.Tensor) -> torch.Tensor:
        """Logits (B, slots + 1) of images (B, T, width)."""
        return self.out(torch.relu(self.hidden(image.flatten(1))))

    def logits_snapshot(self, snap: dict[str, torch.Tensor], tables: dict | None = None) -> torch.Tensor:
        """`forward` of the image a snapshot draws (`DeepRMBatch.snapshot`, as long tensors), without drawing it.

        Each image part is a set of filled prefixes: per resource, row r of the
        cluster holds its first ``used[r]`` cells; slot j's block is a rectangle of
        ``len_j`` rows by ``size_j`` columns; the backlog fills its first n cells
        row by row; the last column is constant. A dot product with such a part is
        a prefix sum of the weights (`prefix_tables`, which a caller whose weights
        do not change may compute once and pass) read at one index.
        """
        t = self.prefix_tables() if tables is None else tables
        device = self.hidden.bias.device
        snap = {k: v.to(device) for k, v in snap.items()}
        B = snap["used"].shape[0]
        T, M = self.params.horizon, self.params.slots
        rows, slots = torch.arange(T, device=device), torch.arange(M, device=device)
        h = self.hidden.bias.expand(B, -1)
        for i in range(self.params.resources):
            h = h + t["canvas"][i][rows[None, :], snap["used"][:, :, i]].sum(1)
            h = h + t["blocks"][i][slots[None, :], snap["slot_len"], snap["slot_size"][:, :, i]].sum(1)
        h = h + t["backlog"][snap["backlog_n"]]
        h = h + (snap["since_new"].float() / self.params.max_track_since_new)[:, None] * t["since"][None, :]
        return self.out(torch.relu(h))

    def prefix_tables(self) -> dict:
        """The hidden layer's weights as prefix sums over each image part (see `logits_snapshot`)."""
        p = self.params
        T, R, M, S, C = p.horizon, p.resources, p.slots, p.max_job_size, p.res_slot
        H = self.hidden.out_features
        W = self.hidden.weight.view(H, T, -1)
        width = C + M * S
        canvas_tables, block_tables = [], []
        for i in range(R):
            canvas = W[:, :, i * width:i * width + C].permute(1, 2, 0)  # (T, C, H)
            canvas_tables.append(torch.cat([canvas.new_zeros(T, 1, H), canvas.cumsum(1)], 1))  # (T, C + 1, H)
            blocks = W[:, :, i * width + C:(i + 1) * width].reshape(H, T, M, S).permute(2, 1, 3, 0)  # (M, T, S, H)
            block_tables.append(torch.nn.functional.pad(blocks.cumsum(1).cumsum(2), (0, 0, 1, 0, 1, 0)))
        bw = p.backlog_width
        backlog = W[:, :, R * width:R * width + bw].reshape(H, T * bw).T  # row-major cells
        return {"canvas": canvas_tables, "blocks": block_tables,
                "backlog": torch.cat([backlog.new_zeros(1, H), backlog.cumsum(0)], 0), "since": W[:, :, -1].sum(1)}


def snapshot_tensors(snap: dict[str, np.ndarray]) -> dict[str, torch.Tensor]:
    return {k: torch.from_numpy(v.astype(np.int64)) for k, v in snap.items()}


def _cat_snapshots(snaps: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    return {k: np.concatenate([s[k] for s in snaps]) for k in snaps[0]}


@dataclasses.dataclass
class Rollout:
    """The steps of a batch of episodes: per step, the episode, its index in the episode, state, action, reward."""

    episode: np.ndarray
    step: np.ndarray
    snap: dict[str, np.ndarray]
    action: np.ndarray
    reward: np.ndarray
    batch: DeepRMBatch


def rollout(net: DeepRMNet, params: DeepRMParams, lengths: np.ndarray, sizes: np.ndarray,
            arrivals: np.ndarray | None = None, *, generator: torch.Generator | None = None, greedy: bool = False,
            max_actions: int | None = None) -> Rollout:
    """Run every jobset of ``lengths``/``sizes``/``arrivals`` (see `DeepRMBatch`) as one episode, all in
    lockstep, acting with ``net``.

    Actions are sampled from the policy (``greedy``: its most likely action);
    an episode ends when the environment ends it or after ``max_actions`` actions.
    """
    batch = DeepRMBatch(params, lengths, sizes, arrivals)
    episodes, steps, snaps, actions, rewards = [], [], [], [], []
    t = 0
    with torch.no_grad():
        tables = net.prefix_tables()  # the weights do not change during a rollout
        while not batch.done.all() and (max_actions is None or t < max_actions):
            live = np.flatnonzero(~batch.done)
            snap = {k: v[live] for k, v in batch.snapshot().items()}
            logits = net.logits_snapshot(snapshot_tensors(snap), tables)
            if greedy:
                chosen = logits.argmax(1).numpy()
            else:
                chosen = torch.multinomial(torch.softmax(logits, 1), 1, generator=generator)[:, 0].numpy()
            action = np.full(batch.B, params.slots, dtype=np.int64)
            action[live] = chosen
            reward, _ = batch.step(action)
            episodes.append(live)
            steps.append(np.full(live.size, t))
            snaps.append(snap)
            actions.append(chosen)
            rewards.append(reward[live])
            t += 1
    return Rollout(np.concatenate(episodes), np.concatenate(steps), _cat_snapshots(snaps), np.concatenate(actions),
                   np.concatenate(rewards), batch)


def advantages(roll: Rollout, episodes_per_jobset: int, gamma: float) -> tuple[np.ndarray, np.ndarray]:
    """(v_t - b_t per step, total reward per episode): returns and the per-jobset, per-step baseline."""
    B, length = roll.batch.B, int(roll.step.max()) + 1
    rewards = np.zeros((B, length))
    rewards[roll.episode, roll.step] = roll.reward
    steps = np.zeros(B, dtype=np.int64)
    np.maximum.at(steps, roll.episode, roll.step + 1)
    adv = np.zeros((B, length))
    for j in range(B // episodes_per_jobset):
        members = range(j * episodes_per_jobset, (j + 1) * episodes_per_jobset)
        returns = [returns_to_go(rewards[e, :steps[e]], gamma) for e in members]
        b = baselines(returns)
        for e, q in zip(members, returns):
            adv[e, :q.size] = q - b[:q.size]
    return adv[roll.episode, roll.step], rewards.sum(1)


def slowdowns(batch: DeepRMBatch) -> np.ndarray:
    """Slowdown of every allocated job of every episode, pooled (the code counts a job once allocated)."""
    ok = (batch.enter >= 0) & (batch.start >= 0)
    return ((batch.finish - batch.enter)[ok] / batch.lengths[ok]).astype(float)


class DeepRMPolicy:
    """A trained DeepRM network acting in `DeepRMBatch` episodes: ``policy(batch) -> actions``.

    By default it draws each action from the policy with ``seed``, as the
    original evaluation script does. ``sample=False`` takes the most likely
    action; that can loop for ever: once arrivals stop, a state in which the
    network prefers to hold its jobs never changes, so the same choice repeats
    until the time cap (at 70 % load, 68 of 100 held-out jobsets).

    It acts as the broker of the core does (`agents.deeprm.numpy_forward.NumpyDeepRM`: the network's weights,
    copied when the policy is made, in float64 through `cloudsim.engine.arithmetic`; one draw per episode
    from the softmax by inverse transform with numpy's generator), so an action is the same bits on
    every processor. Training keeps torch's forward (`rollout`).
    """

    name = AGENT

    def __init__(self, net: DeepRMNet, *, sample: bool = True, seed: int | None = 0) -> None:
        dense = isinstance(net, DeepRMNet)
        if not dense:
            self.name = "deeprm-plus"
        self.params = net.params
        self.sample = sample
        self.rng = np.random.default_rng(0 if seed is None else seed)
        weights = {k: v.detach().cpu().numpy().astype(np.float64) for k, v in net.state_dict().items()}
        self.network = NumpyDeepRM(net.params, weights, "dense" if dense else "cnn")

    def check_params(self, params: DeepRMParams) -> None:
        """Refuse an environment whose slots or image differ from the training's."""
        if params.image_shape != self.params.image_shape or params.slots != self.params.slots:
            raise ValueError(f"this DeepRM policy was trained for {self.params.slots} slots and images "
                             f"{self.params.image_shape}; the environment has {params.slots} slots and "
                             f"{params.image_shape}: train one for this environment")

    def __call__(self, batch: DeepRMBatch) -> np.ndarray:
        self.check_params(batch.params)
        logits = self.network.logits(batch.snapshot())
        if not self.sample:
            return logits.argmax(1)
        probs = arithmetic.softmax(logits)
        drawn = (probs.cumsum(axis=1) < self.rng.random(len(probs))[:, None]).sum(axis=1)
        return np.minimum(drawn, probs.shape[1] - 1)


def make_net(config: DeepRMConfig) -> nn.Module:
    """The network ``config`` names: DeepRM's dense one or DeepRM_Plus's CNN."""
    if config.network == "cnn":
        from agents.deeprm.plus import DeepRMPlusNet

        return DeepRMPlusNet(config.env_params(), config.hidden)
    return DeepRMNet(config.env_params(), config.hidden)


def read_policy_checkpoint(path: str | Path) -> dict:
    """A checkpoint `train` wrote, checked (refused, with the reason, if unusable); ``config`` as a `DeepRMConfig`."""
    return read_checkpoint(path, agent=AGENT, title="DeepRM", config_type=DeepRMConfig, keys=("iteration",),
                           fix="train one with `cloudsim train deeprm --out DIR` (or deeprm-plus; it writes "
                               "DIR/policy.pt), or pass another with --checkpoint deeprm=PATH (or deeprm-plus=PATH)")


def load_policy(path: str | Path, **options) -> DeepRMPolicy:
    """The `DeepRMPolicy` of a checkpoint `train` wrote (refused, with the reason, if unusable)."""
    saved = read_policy_checkpoint(path)
    config: DeepRMConfig = saved["config"]
    net = make_net(config)
    net.load_state_dict(saved["model"])
    return DeepRMPolicy(net, **options)


def train(config: DeepRMConfig, out: str | Path, *, resume: bool = False, progress: bool = True,
          save_every: int = 10, keep_every: int = 0, tensorboard: bool = False, device: str = "auto",
          threads: int | None = None, on_iteration: Callable[[dict], None] | None = None) -> Path:
    """Train DeepRM by REINFORCE with the per-step baseline; return the policy's checkpoint ``out/policy.pt``.

    ``out`` also gets ``config.json`` and the log (``log.csv``, ``log.jsonl``: per
    iteration the mean and maximum total reward, the mean slowdown, the
    entropy and the wall time). ``resume`` continues from ``out/policy.pt``; a
    training that clones first saves it once cloned (iteration 0), so a resume
    does not clone again. With ``keep_every`` N, the checkpoint of every Nth
    iteration is also kept as ``out/policy-NNNNN.pt``, for choosing one on
    validation jobsets afterwards. ``device`` (`agents.kit.DEVICES`) is where the
    updates (and the cloning) run; rollouts run on the CPU with a copy of the
    weights taken after each update. On the CPU the network is that copy. ``threads``: torch's CPU
    threads (`agents.kit.training_threads`: a fixed count keeps the numbers the same on any machine;
    default `agents.kit.TRAINING_THREADS`' for DeepRM or DeepRM_Plus).
    """
    from tqdm.auto import tqdm

    where = training_device(device)  # the updates (and the cloning) run there; rollouts use ``net``, on the CPU
    agent = "deeprm" if config.network == "dense" else "deeprm-plus"  # the command, and its thread count
    training_threads(TRAINING_THREADS[agent] if threads is None else threads, where)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    torch.manual_seed(config.seed)
    params = config.env_params()
    net = make_net(config)
    learner = net if where.type == "cpu" else copy.deepcopy(net).to(where)
    optimiser = torch.optim.RMSprop(learner.parameters(), lr=config.learning_rate, alpha=config.rms_decay,
                                    eps=config.rms_eps)
    generator = torch.Generator().manual_seed(config.seed)
    done = 0
    policy_file = out / POLICY_FILE
    if resume:
        saved = read_checkpoint(policy_file, agent=AGENT, title="DeepRM", config_type=DeepRMConfig,
                                keys=("iteration", "sampler"),
                                fix=f"the training in {out} cannot be resumed; start it afresh in another folder "
                                    f"(cloudsim train {agent} --out NEW)")
        changed = changed_settings(saved["config"], config,
                                   [f.name for f in dataclasses.fields(config) if f.name != "iterations"])
        if changed:
            raise ValueError(f"{policy_file} was trained with other settings ({', '.join(changed)}); resume "
                             f"with the same options, or train into a new --out folder")
        net.load_state_dict(saved["model"])
        learner.load_state_dict(saved["model"])
        optimiser.load_state_dict(saved["optimizer"])
        restore_rng(saved)
        generator.set_state(saved["sampler"])
        done = int(saved["iteration"])
        trim_log(out, done)
    write_config(out, config)

    def save(iteration: int) -> None:
        save_checkpoint(policy_file, agent=AGENT, config=config, model=net.state_dict(),
                        optimizer=optimiser.state_dict(), rng=rng_state(),
                        extra={"iteration": iteration, "sampler": generator.get_state()})
        if keep_every and iteration and iteration % keep_every == 0:
            with written_whole(out / f"policy-{iteration:05d}.pt") as (kept,):
                shutil.copyfile(policy_file, kept)

    if not resume and config.clone_jobsets:
        from agents.deeprm.plus import clone_sjf

        clone_sjf(learner, config, out, progress=progress)
        net.load_state_dict(learner.state_dict())
        save(0)

    def jobsets_of(seed: int) -> list:  # jobset j's N episodes are rows jN .. jN + N - 1
        return [None if a is None else np.repeat(a, config.episodes, axis=0)
                for a in config.draw_jobsets(seed, config.jobsets)]

    fixed = None if config.fresh_jobsets else jobsets_of(config.jobset_seed)

    bar = tqdm(total=config.iterations, initial=done, unit="it", desc=f"deeprm ({config.network})",
               disable=not progress)
    with TrainingLog(out, tensorboard=tensorboard) as log:
        try:
            for iteration in range(done + 1, config.iterations + 1):
                start = time.perf_counter()
                net.train()
                jobsets = fixed if fixed is not None else jobsets_of(config.jobset_seed + 1 + iteration)
                roll = rollout(net, params, *jobsets, generator=generator, max_actions=config.max_actions)
                rollout_s = time.perf_counter() - start
                adv, totals = advantages(roll, config.episodes, config.gamma)
                entropy = update(learner, optimiser, roll, adv)
                if learner is not net:
                    net.load_state_dict(learner.state_dict())
                sd = slowdowns(roll.batch)
                row = {"iteration": iteration, "mean_reward": float(totals.mean()), "max_reward": float(totals.max()),
                       "mean_slowdown": float(sd.mean()) if sd.size else float("nan"),
                       "unallocated": int(((roll.batch.enter >= 0) & (roll.batch.start < 0)).sum()),
                       "steps": int(roll.reward.size), "entropy": entropy,
                       "rollout_s": round(rollout_s, 3), "seconds": round(time.perf_counter() - start, 3)}
                log.write(row)
                if on_iteration is not None:
                    on_iteration(row)
                bar.update(1)
                bar.set_postfix(reward=f"{row['mean_reward']:.1f}", slowdown=f"{row['mean_slowdown']:.2f}")
                if (iteration % save_every == 0 or iteration == config.iterations
                        or (keep_every and iteration % keep_every == 0)):
                    save(iteration)
        except KeyboardInterrupt as interrupted:
            if policy_file.is_file():
                saved_at = read_checkpoint(policy_file, agent=AGENT, keys=("iteration",))["iteration"]
                interrupted.add_note(f"the training saved at iteration {saved_at} is in {out}; add --resume to "
                                     "continue it")
            raise
        finally:
            bar.close()
    return policy_file


def run_training(config: DeepRMConfig, out: str | Path, **run) -> dict:
    """``cloudsim train deeprm`` and ``deeprm-plus`` (their `agents.registry.TrainingSpec`): `train` with ``run``'s
    options, then the summary the command prints: the agent, objective, load and iterations, the policy, the wall
    time, the last logged rewards and slowdown (and DeepRM_Plus's cloning accuracy)."""
    from agents.deeprm.plus import CLONE_FILE

    started = time.perf_counter()
    policy = train(config, out, **run)
    last = last_logged(out)
    clone = Path(out) / CLONE_FILE
    cloned = json.loads(clone.read_text()) if clone.is_file() else {}
    return {"agent": "deeprm" if config.network == "dense" else "deeprm-plus", "objective": config.objective,
            "load": config.load, "iterations": config.iterations, "policy": str(policy),
            "wall_s": round(time.perf_counter() - started, 3), "mean_reward": last.get("mean_reward"),
            "max_reward": last.get("max_reward"), "mean_slowdown": last.get("mean_slowdown"),
            **({"clone_test_accuracy": cloned["test_accuracy"][-1]} if cloned.get("test_accuracy") else {})}


def update(net: DeepRMNet, optimiser: torch.optim.Optimizer, roll: Rollout, adv: np.ndarray) -> float:
    """One rmsprop step on -mean(log pi(a|s) * adv) over all steps; returns the policy's mean entropy.

    The steps go through the network ``net.update_rows`` at a time, their gradients summed.
    """
    n, chunk = roll.reward.size, net.update_rows
    optimiser.zero_grad()
    entropy = 0.0
    for lo in range(0, n, chunk):
        part = slice(lo, min(lo + chunk, n))
        snap = snapshot_tensors({k: v[part] for k, v in roll.snap.items()})
        logp = torch.log_softmax(net.logits_snapshot(snap), 1)
        chosen = logp.gather(1, torch.from_numpy(roll.action[part])[:, None].to(logp.device))[:, 0]
        loss = -(chosen * torch.from_numpy(adv[part]).float().to(logp.device)).sum() / n
        loss.backward()
        entropy -= float((logp.exp() * logp).sum().detach()) / n
    optimiser.step()
    return entropy


def image_logits(net: DeepRMNet, batch: DeepRMBatch) -> torch.Tensor:
    """`DeepRMNet.forward` on the drawn image of every episode of ``batch`` (the slow, direct path)."""
    return net(torch.from_numpy(render_image(batch.snapshot(), net.params)))
