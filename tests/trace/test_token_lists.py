"""A growing Python list of token ids used as array data is an int64 array input whose length
follows the dynamic policy (at most one recompile as it grows); used any other way it is a list
guarded on its length and items as before. `range` over a size used as an index stays symbolic."""
import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS, assert_same


def dense(x, w, b):
    return x @ w + b


def layer_norm(x, g, b, eps=1e-5):
    m = x.mean(-1, keepdims=True)
    v = x.var(-1, keepdims=True)
    return g * (x - m) / np.sqrt(v + eps) + b


def block(x, ln, mlp):
    return x + dense(np.tanh(dense(layer_norm(x, **ln), **mlp["fc"])), **mlp["proj"])


def lm(tokens, wte, wpe, blocks, n_scale):
    x = wte[tokens] + wpe[range(len(tokens))]
    for blk in blocks:
        x = block(x, **blk)
    return (x @ wte.T) * n_scale


def params(vocab=23, d=8, n_layer=2, ctx=40):
    r = np.random.default_rng(1)

    def lin(i, o):
        return {"w": r.standard_normal((i, o)) * 0.1, "b": r.standard_normal(o) * 0.1}

    blocks = [{"ln": {"g": 1 + r.standard_normal(d) * 0.1, "b": r.standard_normal(d) * 0.1},
               "mlp": {"fc": lin(d, 2 * d), "proj": lin(2 * d, d)}} for _ in range(n_layer)]
    return {"wte": r.standard_normal((vocab, d)), "wpe": r.standard_normal((ctx, d)), "blocks": blocks}


def greedy(fn, p, tokens, steps):
    tokens = list(tokens)
    logits = None
    for _ in range(steps):
        logits = fn(tokens, **p, n_scale=2.0)
        tokens.append(int(np.argmax(logits[-1])))
    return tokens, logits


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_growing_token_list_recompiles_at_most_once(backend):
    p = params()
    want, want_logits = greedy(lm, p, [5, 7, 9], 10)
    got, got_logits = greedy(ft.compile(lm, backend=backend), p, [5, 7, 9], 10)
    assert got == want
    assert_same(got_logits, want_logits)
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0, s
    assert s.unique_graphs <= 2 and s.cache_hits >= 8, s


def as_array_and_len(ids, table):
    a = np.array(ids)
    return table[a].sum(0) * len(ids), a


def test_np_array_of_a_list_and_its_length():
    table = np.random.default_rng(2).standard_normal((30, 3))
    f = ft.compile(as_array_and_len)
    ids = [4, 1]
    for n in range(6):
        got, want = f(ids, table), as_array_and_len(ids, table)
        assert_same(got[0], want[0])
        assert_same(got[1], want[1])
        ids = ids + [n * 3]
    assert ft.stats().unique_graphs <= 2


def items_of_a_list(ids, x):
    return x * ids[0] + ids[-1], len(ids)


def test_a_list_read_item_by_item_is_still_guarded_on_its_values():
    f = ft.compile(items_of_a_list)
    x = np.ones(2)
    for ids in ([1, 2], [3, 2], [3, 2, 5]):
        got, want = f(ids, x), items_of_a_list(ids, x)
        assert_same(got[0], want[0])
        assert got[1] == want[1]
    assert ft.stats().unique_graphs == 3


def test_big_ints_and_non_int_lists_are_not_arrays():
    f = ft.compile(lambda ids, x: x * len(ids) + ids[-1])
    x = np.arange(3.0)
    for ids in ([1, 2], [2 ** 70, 1], [True, 2], [1, 2, 3]):
        assert_same(f(ids, x), x * len(ids) + ids[-1])


def test_the_recompile_reason_of_a_list_read_item_by_item_says_pass_an_array(caplog):
    import logging
    f = ft.compile(items_of_a_list)
    with caplog.at_level(logging.INFO, logger="frametrace.recompiles"):
        f([1, 2], np.ones(2))
        f([1, 2, 3], np.ones(2))
    assert "len(L['ids']) == 2" in caplog.text and "pass an array" in caplog.text
