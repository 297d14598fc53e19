"""A decoder written as objects with __call__, a list of blocks and a KV cache written in place
on attributes: one graph per decode shape, no break, tokens identical to NumPy. (np.split,
np.triu and list indices are left out: they belong to the NumPy API work.)"""
import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS, assert_same

rng = np.random.default_rng(7)
def W(*shape):
    return rng.standard_normal(shape) * 0.1




class Norm:
    def __init__(self, d):
        self.g = 1.0 + W(d)
        self.eps = 1e-6

    def __call__(self, x):
        return x / np.sqrt((x * x).mean(-1, keepdims=True) + self.eps) * self.g


class Attn:
    def __init__(self, d, heads, max_len):
        self.heads, self.hd = heads, d // heads
        self.wq, self.wk, self.wv, self.wo = W(d, d), W(d, d), W(d, d), W(d, d)
        self.k_cache = np.zeros((max_len, heads, self.hd))
        self.v_cache = np.zeros((max_len, heads, self.hd))

    def __call__(self, x, pos):
        n = x.shape[0]
        q, k, v = x @ self.wq, x @ self.wk, x @ self.wv
        self.k_cache[pos:pos + n] = k.reshape(n, self.heads, self.hd)
        self.v_cache[pos:pos + n] = v.reshape(n, self.heads, self.hd)
        keys = self.k_cache[:pos + n].transpose(1, 2, 0)
        vals = self.v_cache[:pos + n].transpose(1, 0, 2)
        qh = q.reshape(n, self.heads, self.hd).transpose(1, 0, 2)
        s = qh @ keys / np.sqrt(self.hd)
        p = np.exp(s - s.max(-1, keepdims=True))
        p = p / p.sum(-1, keepdims=True)
        return (p @ vals).transpose(1, 0, 2).reshape(n, -1) @ self.wo


class Block:
    def __init__(self, d, h, m):
        self.n1, self.attn = Norm(d), Attn(d, h, m)
        self.up, self.down = W(d, 4 * d), W(4 * d, d)

    def __call__(self, x, pos):
        x = x + self.attn(self.n1(x), pos)
        h = x @ self.up
        return x + (h / (1.0 + np.exp(-h))) @ self.down


class Decoder:
    def __init__(self, vocab=97, d=32, heads=4, layers=2, max_len=64):
        self.emb = W(vocab, d)
        self.blocks = [Block(d, heads, max_len) for _ in range(layers)]
        self.norm = Norm(d)

    def __call__(self, ids, pos):
        h = self.emb[ids]
        for block in self.blocks:
            h = block(h, pos)
        return self.norm(h)[-1:] @ self.emb.T


def decode(model, prompt, steps):
    ids, pos, out, logits = list(prompt), 0, [], None
    for _ in range(steps):
        new = ids[pos:]
        logits = model(np.array(new), pos)
        pos += len(new)
        ids.append(int(np.argmax(logits[-1])))
        out.append(ids[-1])
    return out, logits


def fresh():
    global rng
    rng = np.random.default_rng(7)
    return Decoder()


@pytest.mark.parametrize("backend", BACKENDS)
def test_object_decoder_with_a_kv_cache_compiles_whole(backend):
    want_ids, want_logits = decode(fresh(), [3, 1, 4, 1, 5], 12)
    got_ids, got_logits = decode(ft.compile(fresh(), backend=backend), [3, 1, 4, 1, 5], 12)
    assert got_ids == want_ids
    assert_same(got_logits, want_logits)
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0, s
    assert 1 <= s.unique_graphs <= 2 and s.cache_hits >= 10, s
