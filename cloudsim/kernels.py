"""The engine's compiled loops: a long plan of starts checked in one call, and GPU fragmentation.

`cloudsim.broker.PlanCheck` checks a plan decision by decision in Python, a few microseconds
each; a Tetris round at Alibaba scale holds thousands of decisions. `check_starts` makes the
same checks, in the same order and with the same float arithmetic (free resources as running
totals, one subtraction per instance), compiled with numba. It only says where the first
impossible decision is: the engine then asks `PlanCheck` for the message, which finds it there.

`fragmentation` is `cloudsim.fragmentation.node_fragmentation`'s loop over node states, target shapes
and devices: FGD asks for it at every decision on a handful of states, where numpy's cost per call
would outweigh the arithmetic.
"""

from __future__ import annotations

import numba

__all__ = ["check_starts", "fragmentation", "state_fragmentation"]


@numba.njit(cache=True)
def check_starts(free, up, demand, waiting, machine, task, count, free_after):
    """Check starts now, in order, each after those before it: ``count[i]`` instances of the view's task
    ``task[i]`` on ``machine[i]``.

    ``free`` and ``waiting`` (copies of the view's) are updated in place; ``free_after[i]`` receives the
    machine's free vector after decision ``i``. Returns the position of the first decision that cannot
    happen (a machine or task out of range, a count outside 1..waiting, a machine down, an instance that
    does not fit what the earlier ones left), or -1 when all can.
    """
    machines, tasks, resources = free.shape[0], demand.shape[0], free.shape[1]
    for i in range(len(machine)):
        m, t, c = machine[i], task[i], count[i]
        if m < 0 or m >= machines or t < 0 or t >= tasks or c < 1 or c > waiting[t] or not up[m]:
            return i
        for _ in range(c):
            for r in range(resources):
                if demand[t, r] > free[m, r]:
                    return i
            for r in range(resources):
                free[m, r] -= demand[t, r]
        waiting[t] -= c
        free_after[i] = free[m]
    return -1


@numba.njit(cache=True)
def state_fragmentation(free_cpu, device_free, accepted, cpu, milli, count, p):
    """The fragmentation of one node state (`cloudsim.fragmentation` defines it), in milli-GPU: ``free_cpu``,
    ``device_free`` (devices,; -1 for none), ``accepted`` (shapes,), the target's ``cpu``, ``milli``,
    ``count`` and ``p`` per shape."""
    idle = 0
    for d in range(device_free.shape[0]):
        if device_free[d] > 0:
            idle += device_free[d]
    total = 0.0
    for s in range(p.shape[0]):
        part = idle
        if count[s] > 0 and accepted[s] and free_cpu >= cpu[s]:
            enough = 0
            below = 0
            for d in range(device_free.shape[0]):
                left = device_free[d]
                if left >= milli[s]:
                    enough += 1
                elif left > 0:
                    below += left
            if enough >= count[s]:
                part = below
        total += p[s] * part
    return total


@numba.njit(cache=True)
def fragmentation(free_cpu, device_free, accepted, cpu, milli, count, p, out):
    """``out[k]``: `state_fragmentation` of node state k."""
    for k in range(device_free.shape[0]):
        out[k] = state_fragmentation(free_cpu[k], device_free[k], accepted[k], cpu, milli, count, p)
