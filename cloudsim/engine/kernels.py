"""The engine's compiled loops: a long plan of starts checked in one call, and GPU fragmentation.

`cloudsim.engine.plan_check.PlanCheck` checks a plan decision by decision in Python, a few microseconds
each; a Tetris round at Alibaba scale holds thousands of decisions. `check_starts` makes the
same checks, in the same order and with the same float arithmetic (free resources as running
totals, one subtraction per instance), compiled with numba. It only says where the first
impossible decision is: the engine then asks `PlanCheck` for the message, which finds it there.

The decision arithmetic of `cloudsim.engine.arithmetic` (`dense`, `exp1`, `tanh1`, ...): sums in a fixed order
and one ``exp`` and ``tanh`` written with IEEE 754's basic operations, so that a learned broker's choice,
FGD's score and a summary's time average are the same bits on every processor.

`fragmentation` is `cloudsim.engine.fragmentation.node_fragmentation`'s loop over node states, target shapes
and devices: FGD asks for it at every decision on a handful of states, where numpy's cost per call
would outweigh the arithmetic.

`draw_below` is numpy's ``Generator.integers(n)`` from a PCG64 state kept in an array, for the compiled
rounds of the random brokers (`generator_state` and `restore_generator` move the state to and from a
generator).
"""

from __future__ import annotations

import math

import numba
import numpy as np

from cloudsim.engine.specs import DEVICE_MILLI

__all__ = ["check_starts", "pair_score", "column_means", "conv2d", "dense", "draw_below", "earliest_fit", "exp1",
           "fgd_delta", "fragmentation", "generator_state", "map_exp", "map_tanh", "mlp", "restore_generator",
           "softmax", "state_fragmentation", "step_profile", "tanh1"]


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
    """The fragmentation of one node state (`cloudsim.engine.fragmentation` defines it), in milli-GPU: ``free_cpu``,
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
def fgd_delta(free_cpu, device_free, accepted, cpu, count, milli, target_cpu, target_milli, target_count, target_p,
              after):
    """FGD on one machine state (``free_cpu``, ``device_free``, ``accepted`` as `state_fragmentation` reads
    them): the largest decrease of its fragmentation that a placement of one instance (``cpu``, ``count``
    devices of ``milli``) makes, and for a share the device that makes it (the first on ties; -inf and 0 where
    no device holds it; -1 for whole devices or none, taken by the default rule, the lowest-indexed free ones,
    unchanged where fewer are free: the machine does not fit then). ``after``: scratch room, one per device."""
    before = state_fragmentation(free_cpu, device_free, accepted, target_cpu, target_milli, target_count, target_p)
    after[:] = device_free
    if count > 0 and milli < DEVICE_MILLI:
        best, device = -np.inf, 0
        for d in range(after.shape[0]):
            if device_free[d] >= milli:
                after[d] -= milli
                delta = before - state_fragmentation(free_cpu - cpu, after, accepted, target_cpu, target_milli,
                                                     target_count, target_p)
                after[d] += milli
                if delta > best:
                    best, device = delta, d
        return best, device
    whole = 0
    for d in range(after.shape[0]):
        if after[d] >= DEVICE_MILLI:
            whole += 1
    if whole >= count:
        taken = 0
        for d in range(after.shape[0]):
            if taken < count and after[d] >= DEVICE_MILLI:
                after[d] -= milli
                taken += 1
    return before - state_fragmentation(free_cpu - cpu, after, accepted, target_cpu, target_milli, target_count,
                                        target_p), -1


@numba.njit(cache=True)
def fragmentation(free_cpu, device_free, accepted, cpu, milli, count, p, out):
    """``out[k]``: `state_fragmentation` of node state k."""
    for k in range(device_free.shape[0]):
        out[k] = state_fragmentation(free_cpu[k], device_free[k], accepted[k], cpu, milli, count, p)


# ----------------------------------------------------------------------------- decision arithmetic
# exp: x = k ln2 + r, |r| <= ln2 / 2, with ln2 split so that k * _LN2_HI is exact (fdlibm's constants).
_LN2_HI = 6.93147180369123816490e-01
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_EXP_MAX = 709.782712893383973096  # exp overflows above
_EXP_MIN = -745.13321910194110842  # exp underflows to 0 below
# 1/n! for n = 0..13: the Taylor series of exp(r) is below 1e-17 of its sum beyond r^13 for |r| <= ln2/2.
_EXP_TERMS = np.array([1.0 / math.factorial(n) for n in range(14)])
(_C2, _C3, _C4, _C5, _C6, _C7, _C8, _C9, _C10, _C11, _C12, _C13) = (float(c) for c in _EXP_TERMS[2:])
# 2**k for k = -1021..1023: exp's result 2**k x (1 + ...), a number in [0.7, 1.5), is then a normal number,
# and the product is exact (as ldexp, which the rest of k take)
_POW2_LOW = -1021
_POW2 = np.array([math.ldexp(1.0, k) for k in range(_POW2_LOW, 1024)])
_TANH_SMALL = 0.625  # below, tanh by a rational function; above, by exp
_TANH_ONE = 22.0  # above, tanh(x) rounds to 1


@numba.njit(cache=True)
def exp1(x):
    if x != x:
        return x
    if x > _EXP_MAX:
        return np.inf
    if x < _EXP_MIN:
        return 0.0
    k = math.floor(x * _INV_LN2 + 0.5)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    # exp(r) = 1 + r + r^2 q(r), q by Horner's rule from 1/13! down to 1/2! (written out: a loop costs more);
    # the last addition to 1 rounds once
    q = ((((((((((_C13 * r + _C12) * r + _C11) * r + _C10) * r + _C9) * r + _C8) * r + _C7) * r + _C6) * r + _C5)
           * r + _C4) * r + _C3) * r + _C2
    y = 1.0 + (r + r * r * q)
    if _POW2_LOW <= k <= 1023:
        return y * _POW2[int(k) - _POW2_LOW]
    return math.ldexp(y, int(k))


@numba.njit(cache=True)
def tanh1(x):
    if x != x:
        return x
    a = abs(x)
    if a > _TANH_ONE:
        t = 1.0
    elif a >= _TANH_SMALL:
        t = 1.0 - 2.0 / (exp1(2.0 * a) + 1.0)
    else:  # the 8th convergent of Lambert's continued fraction, a rational function of a^2 (error < 1e-20),
        # written as a minus a small correction so that its rounding weighs little
        z = a * a
        den = (((45.0 * z + 13860.0) * z + 945945.0) * z + 16216200.0) * z + 34459425.0
        t = a - a * z * ((((44.0 * z + 12870.0) * z + 810810.0) * z + 11486475.0) / den)
    return math.copysign(t, x)


@numba.njit(cache=True)
def map_exp(values, out):
    for i in range(values.shape[0]):
        out[i] = exp1(values[i])


@numba.njit(cache=True)
def map_tanh(values, out):
    for i in range(values.shape[0]):
        out[i] = tanh1(values[i])


@numba.njit(cache=True)
def dense(x, w, b, out):
    """``out = x @ w + b``, each ``out[i, j]`` summed in input order, then the bias added. Rows are taken
    eight at a time so that each row of ``w`` is read once per eight rows (the order of each sum is
    unchanged: blocking only reorders independent sums)."""
    rows, inputs, outputs = x.shape[0], x.shape[1], w.shape[1]
    out[:, :] = 0.0
    for start in range(0, rows, 8):
        stop = min(start + 8, rows)
        for k in range(inputs):
            for i in range(start, stop):
                xk = x[i, k]
                for j in range(outputs):
                    out[i, j] += xk * w[k, j]
    for i in range(rows):
        for j in range(outputs):
            out[i, j] += b[j]


@numba.njit(cache=True)
def conv2d(padded, w, b, out):
    """A 2-d convolution of (N, C, H + k - 1, W + k - 1) zero-padded images with (O, C, k, k) weights into
    ``out`` (N, O, H, W): each output sums its products over (channel, row, column) of the kernel in that
    order, then adds the bias, the order `dense` gives the same products laid out as patches."""
    n_images, channels, k = padded.shape[0], padded.shape[1], w.shape[2]
    height, width = out.shape[2], out.shape[3]
    out[:, :, :, :] = 0.0
    for n in range(n_images):
        for o in range(w.shape[0]):
            for c in range(channels):
                for dy in range(k):
                    for dx in range(k):
                        weight = w[o, c, dy, dx]
                        for y in range(height):
                            for x in range(width):
                                out[n, o, y, x] += padded[n, c, y + dy, x + dx] * weight
            for y in range(height):
                for x in range(width):
                    out[n, o, y, x] += b[o]


@numba.njit(cache=True)
def mlp(x, weights, biases, use_tanh, out):
    """A feed-forward network row by row: each layer `dense`'s sums (input order, then the bias), then ReLU
    or `tanh1` after every layer but the last; ``weights`` and ``biases`` are tuples of the layers'."""
    width = x.shape[1]
    for w in weights:
        width = max(width, w.shape[1])
    h = np.empty(width)
    g = np.empty(width)
    last = len(weights) - 1
    for i in range(x.shape[0]):
        n = x.shape[1]
        for k in range(n):
            h[k] = x[i, k]
        layer = 0
        for w in weights:
            m = w.shape[1]
            for j in range(m):
                g[j] = 0.0
            for k in range(n):
                hk = h[k]
                for j in range(m):
                    g[j] += hk * w[k, j]
            b = biases[layer]
            for j in range(m):
                v = g[j] + b[j]
                if layer < last:
                    if use_tanh:
                        v = tanh1(v)
                    elif v < 0.0:
                        v = 0.0
                h[j] = v
            n = m
            layer += 1
        for j in range(n):
            out[i, j] = h[j]


@numba.njit(cache=True)
def softmax(logits, out):
    for i in range(logits.shape[0]):
        top = logits[i, 0]
        for j in range(1, logits.shape[1]):
            if logits[i, j] > top:
                top = logits[i, j]
        total = 0.0
        for j in range(logits.shape[1]):
            out[i, j] = exp1(logits[i, j] - top)
            total += out[i, j]
        for j in range(logits.shape[1]):
            out[i, j] /= total


@numba.njit(cache=True)
def column_means(x, out):
    for j in range(x.shape[1]):
        out[j] = 0.0
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            out[j] += x[i, j]
    for j in range(x.shape[1]):
        out[j] /= x.shape[0]


@numba.njit(cache=True)
def pair_score(states, s, demand, t, columns, shares):
    """A pair score of (machine state ``s``, task ``t``): Tetris's sum over ``columns`` of free x demand, or with
    ``shares`` Packer's sum of free / capacity x demand / capacity, 0 for a resource the machine lacks (as
    `agents.heuristics.share` gives). A state's row holds its free resources, then (for shares) its capacity.
    `agents.kernels.state_round` and the engine's compiled pair rounds (`cloudsim.engine.compiled`) both score with
    it, so that both add the same products in the same order."""
    resources = demand.shape[1]
    score = 0.0
    for c in columns:
        if not shares:
            score += states[s, c] * demand[t, c]
        elif states[s, resources + c] > 0:
            capacity = states[s, resources + c]
            score += (states[s, c] / capacity) * (demand[t, c] / capacity)
        else:
            score += 0.0
    return score


@numba.njit(cache=True)
def step_profile(now, now_free, when, delta):
    """A machine's free resources as a step function of time (`cloudsim.engine.reservations.Timeline.free_profile`):
    ``(times, free)``, ``times`` the distinct instants of ``now`` and of the changes after it, ``free[k]``
    ``now_free`` plus every change ``delta[i]`` due by ``times[k]`` (``when[i] <= times[k]``), added in the
    changes' order. Changes at or before ``now`` are left out (``now_free`` holds them)."""
    later = 0
    for i in range(len(when)):
        if when[i] > now:
            later += 1
    stops = np.empty(later + 1)
    stops[0] = now
    j = 1
    for i in range(len(when)):
        if when[i] > now:
            stops[j] = when[i]
            j += 1
    times = np.unique(stops)
    free = np.empty((len(times), len(now_free)))
    for k in range(len(times)):
        free[k] = now_free
    for i in range(len(when)):
        if when[i] > now:
            first = np.searchsorted(times, when[i])
            for k in range(first, len(times)):
                for r in range(len(now_free)):
                    free[k, r] += delta[i, r]
    return times, free


@numba.njit(cache=True)
def earliest_fit(times, free, demand, duration, now, tick, slack):
    """The earliest start from which ``demand`` fits the step profile ``(times, free)`` for ``duration``
    (`cloudsim.engine.reservations.Timeline.earliest_start`), or inf. A start is a step's first instant where the
    demand fits (free only rises there); with a scheduler ``tick`` (> 0; 0 for none) the first tick from it,
    ``now + n x tick`` (``slack``: `cloudsim.engine.reservations.next_tick`'s), and a stay of exactly one tick
    holds until the tick after its end (`cloudsim.engine.reservations.Timeline.released`)."""
    steps, resources = free.shape
    ok = np.empty(steps, dtype=np.bool_)
    for k in range(steps):
        ok[k] = True
        for r in range(resources):
            if not free[k, r] >= demand[r]:
                ok[k] = False
                break
    for k in range(steps):
        if not ok[k]:
            continue
        start = times[k]
        if tick > 0:
            start = now + math.ceil((times[k] - now) / tick - slack) * tick
        end = start + duration
        if tick > 0 and end == start + tick:
            end = end + tick
        fits = True
        for j in range(steps):
            after = times[j + 1] if j + 1 < steps else math.inf
            if after > start and times[j] < end and not ok[j]:
                fits = False
                break
        if fits:
            return start
    return math.inf


# ------------------------------------------------------------------ numpy's generator, compiled
# numba unboxes a `np.random.Generator` handed to a compiled call at about 7 µs a call, which the random
# brokers' rounds paid at every event. Their compiled rounds draw instead from the generator's state as six
# uint64 (`generator_state`): the 128-bit PCG64 state and increment as (high, low) words, then numpy's
# buffered half of a 64-bit output (a flag and the value), which its 32-bit draws use first. `draw_below` is
# ``Generator.integers(n)``: numpy's PCG64 step and output (XSL-RR), then Lemire's bounded draw, from 32-bit
# outputs where n - 1 fits in 32 bits; `restore_generator` hands the state back, so that the broker's stream
# goes on where the round left it.
_LOW32 = np.uint64(0xFFFFFFFF)
_ALL64 = np.uint64(0xFFFFFFFFFFFFFFFF)
_PCG_MULTIPLIER = (np.uint64(0x2360ED051FC65DA4), np.uint64(0x4385DF649FCCF645))  # (high, low) words
_U0, _U1, _U32, _U58, _U63, _U64 = (np.uint64(value) for value in (0, 1, 32, 58, 63, 64))


def generator_state(rng: np.random.Generator) -> np.ndarray:
    """A PCG64 generator's state as `draw_below` reads it (ValueError for another bit generator)."""
    if type(rng.bit_generator) is not np.random.PCG64:
        raise ValueError(f"generator_state: a PCG64 generator (np.random.default_rng) only, got "
                         f"{type(rng.bit_generator).__name__}")
    saved = rng.bit_generator.state
    state, increment, word = saved["state"]["state"], saved["state"]["inc"], (1 << 64) - 1
    return np.array([state >> 64, state & word, increment >> 64, increment & word, saved["has_uint32"],
                     saved["uinteger"]], dtype=np.uint64)


def restore_generator(rng: np.random.Generator, words: np.ndarray) -> None:
    """Set a PCG64 generator to the state `draw_below` left in ``words``."""
    high, low, increment_high, increment_low, buffered, value = (int(word) for word in words)
    rng.bit_generator.state = {"bit_generator": "PCG64",
                               "state": {"state": high << 64 | low, "inc": increment_high << 64 | increment_low},
                               "has_uint32": buffered, "uinteger": value}


@numba.njit(cache=True)
def _wide_product(a, b):
    """The 128-bit product of two uint64, as (high, low) words."""
    a_low, a_high, b_low, b_high = a & _LOW32, a >> _U32, b & _LOW32, b >> _U32
    low_low, low_high, high_low = a_low * b_low, a_low * b_high, a_high * b_low
    middle = (low_low >> _U32) + (low_high & _LOW32) + (high_low & _LOW32)
    return (a_high * b_high + (low_high >> _U32) + (high_low >> _U32) + (middle >> _U32),
            (middle << _U32) | (low_low & _LOW32))


@numba.njit(cache=True)
def _next64(words):
    """PCG64's next output: the state times the multiplier plus the increment (mod 2**128), then XSL-RR."""
    high, low = _wide_product(words[1], _PCG_MULTIPLIER[1])
    high += words[1] * _PCG_MULTIPLIER[0] + words[0] * _PCG_MULTIPLIER[1]
    new_low = low + words[3]
    high += words[2] + (_U1 if new_low < low else _U0)
    words[0], words[1] = high, new_low
    mixed, turn = high ^ new_low, high >> _U58
    return (mixed >> turn) | (mixed << ((_U64 - turn) & _U63))


@numba.njit(cache=True)
def _next32(words):
    """numpy's 32-bit draw: the buffered high half of the last 64-bit output, else the low half of a new one."""
    if words[4] != _U0:
        words[4] = _U0
        return words[5]
    value = _next64(words)
    words[4], words[5] = _U1, value >> _U32
    return value & _LOW32


@numba.njit(cache=True)
def draw_below(words, n):
    """``Generator.integers(n)`` (n >= 1) from the state ``words`` (`generator_state`), which it moves on."""
    top = np.uint64(n - 1)
    if top == _U0:  # (numpy draws nothing)
        return 0
    if top == _LOW32:
        return np.int64(_next32(words))
    span = top + _U1
    if top < _LOW32:
        scaled = _next32(words) * span
        if scaled & _LOW32 < span:
            floor = (_LOW32 - top) % span
            while scaled & _LOW32 < floor:
                scaled = _next32(words) * span
        return np.int64(scaled >> _U32)
    high, low = _wide_product(_next64(words), span)
    if low < span:
        floor = (_ALL64 - top) % span
        while low < floor:
            high, low = _wide_product(_next64(words), span)
    return np.int64(high)
