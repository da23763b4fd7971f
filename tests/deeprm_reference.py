"""A plain, one-episode model of DeepRM's code, written from DEEPRM_ENV.md's description, for tests.

It keeps the code's data structures: a Python list of running jobs from which
finished jobs are removed inside a ``for`` loop over the same list (so the
stale-job quirk arises by itself, not by emulation), slots and a backlog of
job objects, and a time-shifted table of free units. The batched model in
`cloudsim.engine.envs.deeprm` is checked against it step by step.
"""

from __future__ import annotations

import numpy as np


class Job:
    def __init__(self, length: int, size, enter: int) -> None:
        self.length, self.size, self.enter = length, np.asarray(size), enter
        self.start = self.finish = -1


class ReferenceEpisode:
    def __init__(self, lengths, sizes, *, slots, horizon=20, res_slot=10, backlog=60, max_time=20_000) -> None:
        self.lengths, self.sizes = list(lengths), np.asarray(sizes)
        self.M, self.T, self.cap, self.backlog_size, self.max_time = slots, horizon, res_slot, backlog, max_time
        self.time = self.seq = 0
        self.avbl = np.full((horizon, self.sizes.shape[1]), res_slot)
        self.running: list[Job] = []
        self.slot: list[Job | None] = [None] * slots
        self.backlog: list[Job] = []
        self.record: list[Job] = []
        self.dropped = 0

    def step(self, action: int) -> tuple[float, bool]:
        if action < self.M and self.slot[action] is not None and self._allocate(self.slot[action]):
            self.slot[action] = self.backlog.pop(0) if self.backlog else None
            return 0.0, False
        self.time += 1
        self.avbl[:-1] = self.avbl[1:].copy()
        self.avbl[-1] = self.cap
        for job in self.running:  # removing while iterating, as the code does
            if job.finish <= self.time:
                self.running.remove(job)
        self.seq += 1
        done = False
        if self.seq >= len(self.lengths) and not self.running and all(s is None for s in self.slot) \
                and not self.backlog:
            done = True
        elif self.time > self.max_time:
            done = True
        if not done and self.seq < len(self.lengths) and self.lengths[self.seq] > 0:
            job = Job(self.lengths[self.seq], self.sizes[self.seq], self.time)
            if None in self.slot:
                self.slot[self.slot.index(None)] = job
                self.record.append(job)
            elif len(self.backlog) < self.backlog_size:
                self.backlog.append(job)
                self.record.append(job)
            else:
                self.dropped += 1
        reward = 0.0
        for job in self.running + [s for s in self.slot if s is not None] + self.backlog:
            reward += -1 / float(job.length)
        return reward, done

    def _allocate(self, job: Job) -> bool:
        for t in range(0, self.T - job.length):
            if np.all(self.avbl[t:t + job.length] - job.size >= 0):
                self.avbl[t:t + job.length] -= job.size
                job.start, job.finish = self.time + t, self.time + t + job.length
                self.running.append(job)
                return True
        return False
