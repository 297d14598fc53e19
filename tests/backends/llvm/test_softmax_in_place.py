"""A softmax written over its own input row (attention scores from `q @ k.T`, a dead temporary
the kernel overwrites in place) computes exp once per element: the pass that sums the
exponentials stores each over the score it just read, the last pass divides them
(lower/peephole.py output_as_scratch). Before, with the output row also the input row, the
last pass recomputed every exponential. Results against NumPy on sizes 0, 1 and odd, with
the rows the rewrite must not touch (a last pass that still reads the score itself)."""
from __future__ import annotations

import numpy as np
import pytest

from tracing import A, Traced

rng = np.random.default_rng(11)


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def attention_weights(q, k, mask):
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask)


def weighted_by_score(q, k):
    """The last pass reads the score again beside its exponential: no scratch there."""
    s = q @ k.T
    e = np.exp(s - np.max(s, axis=-1, keepdims=True))
    return s * e / np.sum(e, axis=-1, keepdims=True)


def _inputs(n, d=16):
    qkv = rng.standard_normal((n, 3 * d))
    return qkv[:, :d], qkv[:, d:2 * d], (1 - np.tri(n)) * -1e10


def test_in_place_softmax_computes_exp_once():
    t = Traced(attention_weights, A(("n", 16)), A(("n", 16)), A(("n", "n")))
    (kernel,) = [k for k in t.run.loop_ir.split("\n\n") if "exp(" in k]
    last = kernel.strip().splitlines()[-1]       # the dividing pass: reads the stored exponentials
    assert "true_divide(" in last and "exp(" not in last, kernel
    for n in (0, 1, 2, 5, 21):
        q, k, mask = _inputs(n)
        t.check(q, k, mask)


@pytest.mark.parametrize("n", [1, 3, 17])
def test_softmax_reading_its_input_again_is_left_alone(n):
    t = Traced(weighted_by_score, A(("n", 16)), A(("n", 16)))
    q, k, _ = _inputs(n)
    t.check(q, k)
    t.check(q[::-1], k[:, ::-1])                 # negative strides


def test_strided_and_fortran_inputs():
    t = Traced(attention_weights, A(("n", 16)), A(("n", 16)), A(("n", "n")))
    q, k, mask = _inputs(9)
    t.check(np.asfortranarray(q), k[::-1], np.asfortranarray(mask))
