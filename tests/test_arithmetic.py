"""cloudsim.engine.arithmetic: the decision arithmetic of learned brokers, the same bits wherever it runs.

Each function is held to a plain-Python computation of the same operations in the same order (which
IEEE 754 fixes to the bit), and `exp` and `tanh` to the correctly rounded values within their stated
accuracy.
"""

import math

import numpy as np
import pytest

from cloudsim.engine import arithmetic
def ulps(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.abs(np.asarray(a, dtype=np.float64).view(np.int64) - np.asarray(b, dtype=np.float64).view(np.int64))


def test_dense_sums_in_input_order_then_adds_the_bias():
    # In input order: (1e16 + 1) rounds to 1e16, then - 1e16 gives 0; another order would give 1.
    x = np.array([[1e16, 1.0, -1e16]])
    assert arithmetic.dense(x, np.ones((3, 1)), np.array([0.5]))[0, 0] == 0.5
    assert arithmetic.dense(x[:, ::-1], np.ones((3, 1)))[0, 0] == 0.0  # -1e16 + 1 -> -1e16, + 1e16 -> 0


def test_dot_sums_in_index_order_for_a_vector_and_each_row_of_a_matrix():
    assert arithmetic.dot([1e16, 1.0, -1e16], [1.0, 1.0, 1.0]) == 0.0  # in order: (1e16 + 1) rounds to 1e16
    assert arithmetic.dot([-1e16, 1e16, 1.0], [1.0, 1.0, 1.0]) == 1.0
    assert arithmetic.dot(np.array([[1e16, 1.0, -1e16], [1.0, 2.0, 3.0]]), [1.0, 1.0, 1.0]).tolist() == [0.0, 6.0]
    assert arithmetic.dot([], []) == 0.0
    with pytest.raises(ValueError, match="vectors of lengths 2 and 3"):
        arithmetic.dot([1.0, 2.0], [1.0, 2.0, 3.0])


def test_dense_is_the_plain_loop_bit_for_bit_and_a_row_does_not_depend_on_its_batch():
    rng = np.random.default_rng(0)
    x, w, b = rng.normal(size=(37, 13)), rng.normal(size=(13, 5)), rng.normal(size=5)
    out = arithmetic.dense(x, w, b)
    for i in range(len(x)):
        for j in range(5):
            total = 0.0
            for k in range(13):
                total += float(x[i, k]) * float(w[k, j])
            assert out[i, j] == total + float(b[j])
    assert np.array_equal(arithmetic.dense(x[5:6], w, b), out[5:6])
    assert np.array_equal(arithmetic.dense(x[5], w, b), out[5])
    with pytest.raises(ValueError, match="inputs of width 13 do not fit weights of shape"):
        arithmetic.dense(x, w.T, b)


def test_exp_and_tanh_are_within_their_accuracy_on_a_million_points():
    rng = np.random.default_rng(1)
    x = np.concatenate([rng.uniform(-745, 709, 300_000), rng.normal(0, 3, 400_000), rng.uniform(-1, 1, 300_000)])
    assert ulps(arithmetic.exp(x), [math.exp(v) for v in x]).max() <= 2
    t = np.concatenate([rng.normal(0, 2, 500_000), rng.uniform(-0.7, 0.7, 300_000), rng.uniform(-25, 25, 200_000)])
    assert ulps(arithmetic.tanh(t), [math.tanh(v) for v in t]).max() <= 3


def test_exp_is_its_series_and_scaling_bit_for_bit():
    """exp(x) = 2**k x (1 + r + r^2 q(r)), q by Horner's rule over 1/13! .. 1/2!, scaled by ldexp: the definition
    in plain Python floats, against the compiled one (which multiplies by a power of two where that is exact),
    subnormal and huge results included."""
    from cloudsim.engine import kernels
    def reference(x):
        k = math.floor(x * kernels._INV_LN2 + 0.5)
        r = (x - k * kernels._LN2_HI) - k * kernels._LN2_LO
        q = 1.0 / math.factorial(13)
        for n in range(12, 1, -1):
            q = q * r + 1.0 / math.factorial(n)
        return math.ldexp(1.0 + (r + r * r * q), int(k))

    rng = np.random.default_rng(4)
    x = np.concatenate([rng.uniform(-745, 709.7, 20_000), rng.uniform(-745, -700, 5_000),
                        rng.uniform(700, 709.7, 5_000), rng.normal(0, 3, 20_000),
                        [-708.39641853226, -708.4, -707.7, 709.78]])
    expected = np.array([reference(v) for v in x])
    assert np.array_equal(arithmetic.exp(x).view(np.int64), expected.view(np.int64))
    assert (expected[x < -708.4] < np.finfo(float).tiny).all()  # (subnormal results were among them)


def test_exp_and_tanh_at_their_edges():
    assert arithmetic.exp([0.0, -np.inf, np.inf, 710.0, -746.0]).tolist() == [1.0, 0.0, np.inf, np.inf, 0.0]
    assert ulps(arithmetic.exp([1.0, -1.0, 0.5]), [math.e, 1 / math.e, math.sqrt(math.e)]).max() <= 2
    assert np.isnan(arithmetic.exp([np.nan])[0]) and np.isnan(arithmetic.tanh([np.nan])[0])
    edges = arithmetic.tanh([0.0, -0.0, 1e-300, np.inf, -np.inf, 30.0, -30.0])
    assert edges.tolist() == [0.0, 0.0, 1e-300, 1.0, -1.0, 1.0, -1.0]
    assert math.copysign(1.0, edges[1]) == -1.0  # tanh(-0) is -0
    assert arithmetic.tanh(np.zeros((2, 3))).shape == (2, 3)


def test_softmax_and_column_means_sum_in_order():
    rng = np.random.default_rng(2)
    logits = rng.normal(size=(4, 11))
    probs = arithmetic.softmax(logits)
    for row, out in zip(logits, probs):
        e = arithmetic.exp(row - row.max())
        total = 0.0
        for value in e:
            total += float(value)
        assert out.tolist() == (e / total).tolist()
    x = rng.normal(size=(50, 3))
    means = arithmetic.column_means(x)
    for j in range(3):
        total = 0.0
        for i in range(50):
            total += float(x[i, j])
        assert means[j] == total / 50


def test_mlp_chains_dense_layers_with_the_activation_between():
    rng = np.random.default_rng(3)
    layers = [(rng.normal(size=(4, 6)), rng.normal(size=6)), (rng.normal(size=(6, 2)), rng.normal(size=2))]
    x = rng.normal(size=(5, 4))
    relu = arithmetic.dense(np.maximum(arithmetic.dense(x, *layers[0]), 0), *layers[1])
    assert np.array_equal(arithmetic.mlp(layers, x), relu)
    tanh = arithmetic.dense(arithmetic.tanh(arithmetic.dense(x, *layers[0])), *layers[1])
    assert np.array_equal(arithmetic.mlp(layers, x, activation="tanh"), tanh)
    with pytest.raises(ValueError, match="activation 'sigmoid' is not relu or tanh"):
        arithmetic.mlp(layers, x, activation="sigmoid")
