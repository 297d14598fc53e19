"""A KV-cache decode step (transposes, a cache slice that grows by one per token) costs no
sympy work per call once compiled: guards, symbol binding, layouts (per size class) and the
wrapper run on plain ints, while every token stays NumPy's."""
import sys

import numpy as np

import frametrace as ft


class Attention:
    def __init__(self, rng, d=16, heads=2, max_len=64):
        self.heads, self.hd = heads, d // heads
        self.wq, self.wk, self.wv = (rng.standard_normal((d, d)) * 0.3 for _ in range(3))
        self.k_cache = np.zeros((max_len, heads, self.hd))
        self.v_cache = np.zeros((max_len, heads, self.hd))

    def __call__(self, x, pos):
        n = x.shape[0]
        q = (x @ self.wq).reshape(n, self.heads, self.hd)
        self.k_cache[pos:pos + n] = (x @ self.wk).reshape(n, self.heads, self.hd)
        self.v_cache[pos:pos + n] = (x @ self.wv).reshape(n, self.heads, self.hd)
        keys = self.k_cache[:pos + n].transpose(1, 2, 0)
        scores = q.transpose(1, 0, 2) @ keys / np.sqrt(self.hd)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = (weights @ self.v_cache[:pos + n].transpose(1, 0, 2)).transpose(1, 0, 2)
        return out.reshape(n, -1)[-1]


def decode(model, emb, steps):
    tokens, pos = [1, 5, 3], 0
    for _ in range(steps):
        h = model(emb[np.array(tokens[pos:])], pos)
        pos = len(tokens)
        tokens.append(int(np.argmax(emb @ h)))
    return tokens


def test_decode_steps_call_no_sympy():
    emb = np.random.default_rng(0).standard_normal((32, 16))
    want = decode(Attention(np.random.default_rng(1)), emb, 14)
    ft.reset()
    model = ft.compile(Attention(np.random.default_rng(1)), backend="llvm")
    tokens, pos = [1, 5, 3], 0
    entered = []

    def profile(frame, event, arg):               # any Python function of sympy entered
        if event == "call" and "sympy" in frame.f_code.co_filename:
            entered.append(frame.f_code.co_name)
    for step in range(14):
        if step == 4:                                 # compiled by now (prefill, then dynamic)
            graphs = ft.stats().unique_graphs
        if step >= 4:
            sys.setprofile(profile)
        try:
            h = model(emb[np.array(tokens[pos:])], pos)
        finally:
            sys.setprofile(None)
        pos = len(tokens)
        tokens.append(int(np.argmax(emb @ h)))
    assert tokens == want
    assert entered == [], sorted(set(entered))[:10]
    assert ft.stats().unique_graphs == graphs <= 3
