"""Deterministic decision arithmetic: the same bits on every x86-64 CPU and every supported library version.

A learned broker chooses by comparing scores, and two scores a last bit apart choose differently. The
usual kernels give no such promise: a BLAS matrix product sums in blocks and lanes that depend on the
processor (and on the batch size), numpy's ``tanh`` and ``exp`` have SIMD variants for AVX-512 that
differ from the plain ones in the last bit, and torch's CPU kernels depend on the processor too. So
everything a broker computes to choose goes through this module instead:

* `dense`: ``x @ w + b`` with every output summed in one fixed order (input 0, 1, ..., then the bias),
  each product and sum rounded once (no fused multiply-add: numba compiles without ``fastmath``, and
  LLVM does not contract separate multiplies and adds without it);
* `exp` and `tanh`: one implementation each, written here with additions, multiplications and
  divisions only (whose results IEEE 754 fixes), so no libm or SIMD variant enters;
* `softmax`: rows of `exp` summed in order; `column_means` and `dot` likewise.

The loops are compiled with numba (`cloudsim.engine.kernels`, ``cache=True``: compiled once per installation and
processor, then loaded from ``__pycache__``; numba is imported on first use). The engine's time averages
use `dot` too, so that a summary is the same bits everywhere as well. Their accuracy: within one unit in the
last place of the correctly rounded values on every point
checked against 200-bit arithmetic, and within 2 (`exp`) and 3 (`tanh`) of Python's `math` functions,
themselves within one, on a million points (tests/test_arithmetic.py).
Training keeps torch's fast kernels; a trained network's decisions go through here, so they are the
same wherever the checkpoint is loaded. It is part of the engine so that the engine's metrics and the
brokers (`agents/`) share one implementation.
"""

from __future__ import annotations

import numpy as np

__all__ = ["Network", "column_means", "conv2d", "dense", "dot", "exp", "mlp", "softmax", "tanh"]


def _kernels():
    """`cloudsim.engine.kernels`, imported on first use: numba costs a fraction of a second to import."""
    from cloudsim.engine import kernels
    return kernels


def dot(a, b) -> float | np.ndarray:
    """The sum of ``a[..., i] * b[i]`` in index order: one number for a vector ``a``, one per row for a
    matrix. ``np.add.accumulate`` adds in order by its definition, so no compiled kernel is needed (and
    the engine's metrics, which use it, import no numba)."""
    x, y = _float64(a), _float64(b).reshape(-1)
    if x.shape[-1:] != y.shape:
        raise ValueError(f"dot: vectors of lengths {x.shape[-1]} and {len(y)}")
    if not len(y):
        return 0.0 if x.ndim == 1 else np.zeros(x.shape[:-1])
    sums = np.add.accumulate(x * y, axis=-1)[..., -1]
    return float(sums) if x.ndim == 1 else sums


def _float64(values) -> np.ndarray:
    return np.ascontiguousarray(values, dtype=np.float64)


def _elementwise(values, kernel) -> np.ndarray:
    array = _float64(values)
    out = np.empty_like(array)
    kernel(array.reshape(-1), out.reshape(-1))
    return out


def exp(values) -> np.ndarray:
    """e to the power of each value (float64, the shape of ``values``)."""
    return _elementwise(values, _kernels().map_exp)


def tanh(values) -> np.ndarray:
    """The hyperbolic tangent of each value (float64, the shape of ``values``)."""
    return _elementwise(values, _kernels().map_tanh)


def dense(x, w, b=None) -> np.ndarray:
    """``x @ w + b`` for ``x`` of shape (n, k) or (k,), ``w`` (k, m) and ``b`` (m,), summed in a fixed order.

    Returns float64 of shape (n, m) (or (m,) for a single row).
    """
    rows = _float64(x)
    single = rows.ndim == 1
    rows = rows.reshape(1, -1) if single else rows.reshape(-1, rows.shape[-1])
    weights = _float64(w)
    if weights.ndim != 2 or weights.shape[0] != rows.shape[1]:
        raise ValueError(f"dense: inputs of width {rows.shape[1]} do not fit weights of shape {weights.shape}")
    bias = np.zeros(weights.shape[1]) if b is None else _float64(b).reshape(-1)
    out = np.empty((rows.shape[0], weights.shape[1]))
    kernels = _kernels()
    kernels.dense(rows, weights, bias, out)
    return out[0] if single else out.reshape(*np.shape(x)[:-1], weights.shape[1])


def conv2d(x, weight, bias) -> np.ndarray:
    """A 2-d convolution of images ``x`` (N, C, H, W) with ``weight`` (O, C, k, k), odd k, and ``bias`` (O,),
    zero padding k // 2 (torch's ``Conv2d(padding=k // 2)``): (N, O, H, W), each output summed over
    (channel, kernel row, kernel column) in that order, then the bias added."""
    images, weights, b = _float64(x), _float64(weight), _float64(bias).reshape(-1)
    if images.ndim != 4 or weights.ndim != 4 or weights.shape[1] != images.shape[1] or weights.shape[2] % 2 == 0:
        raise ValueError(f"conv2d: images {images.shape} and weights {weights.shape} do not fit (N, C, H, W) and "
                         f"(O, C, k, k) with odd k")
    pad = weights.shape[2] // 2
    padded = np.ascontiguousarray(np.pad(images, ((0, 0), (0, 0), (pad, pad), (pad, pad))))
    out = np.empty((images.shape[0], weights.shape[0], images.shape[2], images.shape[3]))
    _kernels().conv2d(padded, weights, b, out)
    return out


class Network:
    """A trained feed-forward network for `mlp`'s compiled forward, its layers (w as inputs x outputs, b)
    checked and converted once: a broker that asks it at every decision pays only the forward.

    ``network(x)``: ``x`` (..., inputs) -> (..., outputs), ``activation`` ("relu" or "tanh") after every
    layer but the last, the same sums and functions as `dense` and `tanh`, row by row in one compiled call.
    """

    def __init__(self, layers, activation: str = "relu") -> None:
        if activation not in ("relu", "tanh"):
            raise ValueError(f"mlp: activation {activation!r} is not relu or tanh")
        self.weights = tuple(_float64(w) for w, _ in layers)
        self.biases = tuple(_float64(b).reshape(-1) for _, b in layers)
        if not self.weights:
            raise ValueError("mlp: a network needs one layer or more")
        width = self.inputs = self.weights[0].shape[0] if self.weights[0].ndim == 2 else -1
        for w, b in zip(self.weights, self.biases):
            if w.ndim != 2 or w.shape[0] != width or b.shape[0] != w.shape[1]:
                raise ValueError(f"mlp: a layer of weights {w.shape} and bias {b.shape} does not take inputs of "
                                 f"width {width}")
            width = w.shape[1]
        self.outputs = width
        self.tanh = activation == "tanh"

    def __call__(self, x) -> np.ndarray:
        rows = _float64(x)
        shape = rows.shape
        rows = rows.reshape(-1, shape[-1]) if rows.ndim != 1 else rows.reshape(1, -1)
        if rows.shape[1] != self.inputs:
            raise ValueError(f"mlp: inputs of width {rows.shape[1]} do not fit a network of {self.inputs} inputs")
        out = np.empty((rows.shape[0], self.outputs))
        _kernels().mlp(rows, self.weights, self.biases, self.tanh, out)
        return out.reshape(*shape[:-1], self.outputs)


def mlp(layers, x, activation: str = "relu") -> np.ndarray:
    """A feed-forward network's output, ``Network(layers, activation)(x)``: `dense` per (w, b) layer (w as
    inputs x outputs), ``activation`` ("relu" or "tanh") after every layer but the last."""
    return Network(layers, activation)(x)


def column_means(x) -> np.ndarray:
    """The mean of each column of ``x`` (n, m), summed in row order (float64, shape (m,))."""
    rows = _float64(x)
    if rows.ndim != 2 or rows.shape[0] == 0:
        raise ValueError(f"column_means: expected a non-empty matrix, got shape {rows.shape}")
    out = np.empty(rows.shape[1])
    kernels = _kernels()
    kernels.column_means(rows, out)
    return out


def softmax(logits) -> np.ndarray:
    """Each row's softmax, ``exp(l - max) / sum``, summed in column order (float64, shape (n, m))."""
    rows = _float64(logits)
    if rows.ndim != 2:
        raise ValueError(f"softmax: expected rows of logits (2 dimensions), got shape {rows.shape}")
    out = np.empty_like(rows)
    kernels = _kernels()
    kernels.softmax(rows, out)
    return out
