"""`DeepRMEnv` (``cloudsim/DeepRM-v0``): one episode of `DeepRMBatch` as a Gymnasium environment."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import gymnasium as gym
import numpy as np

from cloudsim.engine.envs.base import TRAINING_SEEDS
from cloudsim.engine.envs.deeprm.batch import DeepRMBatch
from cloudsim.engine.envs.deeprm.jobsets import deeprm_jobsets
from cloudsim.engine.envs.deeprm.params import DeepRMParams, rate_for_load


class DeepRMEnv(gym.Env):
    """DeepRM's environment (``cloudsim/DeepRM-v0``): one episode of `DeepRMBatch`.

    Args:
        observation: ``"image"`` (Box(0, 1, (T, width)); 20 x 124 for 5 slots,
            20 x 224 for 10) or ``"compact"`` (the code's vector, 76 or 91 long).
        load: the expected load per resource (1.0 = 100 %); sets ``new_job_rate``
            (give one or the other).
        **params: `DeepRMParams` fields (``slots``, ``mode``, ``objective``, ...).

    Actions: Discrete(slots + 1): a slot's index allocates its job at the
    earliest offset it fits; ``slots`` (void), an empty slot or a job that fits
    nowhere moves time on by one step. Reward: see `DeepRMParams.objective`; 0
    for an allocation. ``info["time"]`` is the time step after the step and
    ``info["dropped"]`` the jobs dropped so far, ``info["action_mask"]`` the
    slots whose job can be placed now (and void); when the episode ends
    (``terminated``, or ``truncated`` past ``max_time``) ``info["jobs"]`` lists every
    job in arrival order with ``enter_time``, ``start_time``, ``finish_time`` and
    ``length``, and ``info["summary"]`` the averages.

    ``reset(options={"jobset": {"lengths": L, "sizes": S}})`` replays a jobset in
    the code's form (index t arrives at time t, length 0 = no job), and with
    ``"arrivals": A`` one whose job i arrives at time A[i] (`poisson_jobsets`);
    ``{"jobset_seed": s}`` the jobset `deeprm_jobsets` draws from ``s``;
    otherwise a seed is drawn from `TRAINING_SEEDS`.
    """

    metadata = {"render_modes": []}

    def __init__(self, observation: str = "image", load: float | None = None, **params) -> None:
        if observation not in ("image", "compact"):
            raise ValueError(f"observation must be 'image' or 'compact', got {observation!r}")
        self.params = DeepRMParams(**params)
        if load is not None:
            if "new_job_rate" in params:
                raise ValueError("give load or new_job_rate, not both")
            self.params = replace(self.params, new_job_rate=rate_for_load(load, self.params))
        self.observation = observation
        p = self.params
        self.action_space = gym.spaces.Discrete(p.slots + 1)
        if observation == "image":
            self.observation_space = gym.spaces.Box(0.0, 1.0, p.image_shape, dtype=np.float32)
        else:
            high = float(max(2 * p.horizon * p.res_slot, p.backlog, p.max_job_len))
            self.observation_space = gym.spaces.Box(0.0, high, (p.compact_size,), dtype=np.float32)
        self.batch: DeepRMBatch | None = None
        self.jobset_seed: int | None = None

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        options = dict(options or {})
        unknown = set(options) - {"jobset", "jobset_seed"}
        if unknown:
            raise ValueError(f"unknown reset options {sorted(unknown)}; use 'jobset' or 'jobset_seed'")
        if "jobset" in options:
            jobset = options["jobset"]
            if not (isinstance(jobset, dict)
                    and {"lengths", "sizes"} <= set(jobset) <= {"lengths", "sizes", "arrivals"}):
                raise ValueError("options['jobset'] must be a dict with 'lengths' and 'sizes' (and 'arrivals', "
                                 "optional)")
            lengths, sizes, arrivals = jobset["lengths"], jobset["sizes"], jobset.get("arrivals")
            self.jobset_seed = None
        else:
            self.jobset_seed = int(options.get("jobset_seed", self.np_random.integers(*TRAINING_SEEDS)))
            lengths, sizes = deeprm_jobsets(self.jobset_seed, 1, self.params)
            arrivals = None
        self.batch = DeepRMBatch(self.params, lengths, sizes, arrivals)
        if self.batch.B != 1:
            raise ValueError(f"options['jobset'] holds {self.batch.B} jobsets; give one")
        return self._obs(), {"time": 0, "dropped": 0, "jobset_seed": self.jobset_seed,
                             "action_mask": self.action_masks()}

    def step(self, action):
        if self.batch is None or self.batch.done[0]:
            raise RuntimeError("call reset() before step(), and again after an episode ends")
        rewards, done = self.batch.step(np.array([int(action)]))
        b = self.batch
        info: dict[str, Any] = {"time": int(b.time[0]), "dropped": int(b.dropped[0].sum()),
                                "action_mask": self.action_masks()}
        terminated = bool(done[0] and not b.truncated[0])
        truncated = bool(b.truncated[0])
        if done[0]:
            info["jobs"] = b.jobs(0)
            info["summary"] = b.summary(0)
        return self._obs(), float(rewards[0]), terminated, truncated, info

    def action_masks(self) -> np.ndarray:
        """Slots whose job can be allocated at some offset now, and void (always)."""
        mask = np.ones(self.params.slots + 1, dtype=bool)
        if self.batch is not None:
            mask[:-1] = self.batch.placeable()[0]
        return mask

    def _obs(self) -> np.ndarray:
        return self.batch.image()[0] if self.observation == "image" else self.batch.compact()[0]
