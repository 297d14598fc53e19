"""A Llama-style decoder in plain NumPy: layer objects with `__call__`, a KV cache written in place.

RMSNorm, rotary position embeddings, grouped attention over a key/value cache kept on each
attention object (`self.k_cache[pos:pos + n] = k`), a SwiGLU feed-forward, weights built from
nested dicts passed with `**`, and greedy decoding: one prefill call on the prompt, then one
call per new token with the position advancing. Nothing here knows about frametrace:
`ft.compile(model)` is the only change.

    python examples/llama_decoder.py      # decodes 30 tokens eagerly and compiled, checks they agree
"""
from __future__ import annotations

import time

import numpy as np


class RMSNorm:
    def __init__(self, weight, eps=1e-5):
        self.weight, self.eps = weight, eps

    def __call__(self, x):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * self.weight


class Rotary:
    def __init__(self, head_dim, base=10000.0):
        self.inv_freq = 1.0 / base ** (np.arange(0, head_dim, 2) / head_dim)

    def __call__(self, x, pos):
        # x: (n, heads, head_dim); rotate pairs (even, odd) by angle position * inv_freq
        n = x.shape[0]
        angles = np.arange(pos, pos + n)[:, None] * self.inv_freq[None, :]
        cos, sin = np.cos(angles)[:, None, :], np.sin(angles)[:, None, :]
        even, odd = x[..., 0::2], x[..., 1::2]
        return np.concatenate([even * cos - odd * sin, even * sin + odd * cos], axis=-1)


class Attention:
    def __init__(self, wq, wk, wv, wo, n_heads, max_len):
        self.wq, self.wk, self.wv, self.wo = wq, wk, wv, wo
        self.n_heads = n_heads
        self.head_dim = wq.shape[1] // n_heads
        self.rotary = Rotary(self.head_dim)
        self.k_cache = np.zeros((max_len, n_heads, self.head_dim))
        self.v_cache = np.zeros((max_len, n_heads, self.head_dim))

    def __call__(self, x, pos):
        n = x.shape[0]
        q = self.rotary((x @ self.wq).reshape(n, self.n_heads, self.head_dim), pos)
        k = self.rotary((x @ self.wk).reshape(n, self.n_heads, self.head_dim), pos)
        self.k_cache[pos:pos + n] = k
        self.v_cache[pos:pos + n] = (x @ self.wv).reshape(n, self.n_heads, self.head_dim)
        keys = self.k_cache[:pos + n].transpose(1, 2, 0)
        values = self.v_cache[:pos + n].transpose(1, 0, 2)
        scores = q.transpose(1, 0, 2) @ keys / np.sqrt(self.head_dim)
        scores = scores + np.triu(np.full((n, pos + n), -np.inf), k=pos + 1)
        weights = np.exp(scores - scores.max(axis=-1, keepdims=True))
        weights = weights / weights.sum(axis=-1, keepdims=True)
        out = (weights @ values).transpose(1, 0, 2).reshape(n, -1)
        return out @ self.wo


class FeedForward:
    def __init__(self, w1, w2, w3):
        self.w1, self.w2, self.w3 = w1, w2, w3

    def __call__(self, x):
        gate = x @ self.w1
        return (gate / (1.0 + np.exp(-gate)) * (x @ self.w3)) @ self.w2


class Block:
    def __init__(self, attention, feed_forward, attention_norm, ffn_norm, n_heads, max_len):
        self.attention = Attention(**attention, n_heads=n_heads, max_len=max_len)
        self.feed_forward = FeedForward(**feed_forward)
        self.attention_norm, self.ffn_norm = RMSNorm(attention_norm), RMSNorm(ffn_norm)

    def __call__(self, x, pos):
        h = x + self.attention(self.attention_norm(x), pos)
        return h + self.feed_forward(self.ffn_norm(h))


class Llama:
    def __init__(self, weights, n_heads, max_len=256):
        self.tok_embeddings = weights["tok_embeddings"]
        self.layers = [Block(**w, n_heads=n_heads, max_len=max_len) for w in weights["layers"]]
        self.norm = RMSNorm(weights["norm"])
        self.output = weights["output"]

    def __call__(self, tokens, pos):
        h = self.tok_embeddings[tokens]
        for layer in self.layers:
            h = layer(h, pos)
        return self.norm(h)[-1] @ self.output


def random_weights(vocab=512, d=288, n_layers=6, hidden=768, seed=0):
    rng = np.random.default_rng(seed)

    def mat(i, o):
        return rng.standard_normal((i, o)) / np.sqrt(i)

    layers = [{"attention": {"wq": mat(d, d), "wk": mat(d, d), "wv": mat(d, d), "wo": mat(d, d)},
               "feed_forward": {"w1": mat(d, hidden), "w2": mat(hidden, d), "w3": mat(d, hidden)},
               "attention_norm": 1.0 + rng.standard_normal(d) * 0.1,
               "ffn_norm": 1.0 + rng.standard_normal(d) * 0.1} for _ in range(n_layers)]
    return {"tok_embeddings": rng.standard_normal((vocab, d)), "layers": layers,
            "norm": 1.0 + rng.standard_normal(d) * 0.1, "output": mat(d, vocab)}


def generate(model, prompt, n_tokens):
    tokens, pos, out = list(prompt), 0, []
    for _ in range(n_tokens):
        logits = model(np.array(tokens[pos:]), pos)
        pos = len(tokens)
        tokens.append(int(np.argmax(logits)))
        out.append(tokens[-1])
    return out


CONFIG = {"vocab": 512, "d": 288, "n_layers": 6, "n_heads": 6}
PROMPT = [1, 45, 300, 7, 99, 12]


def build(seed=0):
    weights = random_weights(CONFIG["vocab"], CONFIG["d"], CONFIG["n_layers"], seed=seed)
    return Llama(weights, CONFIG["n_heads"])


def main(n_tokens=30):
    import frametrace as ft

    t0 = time.perf_counter()
    want = generate(build(), PROMPT, n_tokens)
    eager_s = time.perf_counter() - t0
    ft.reset()
    model = ft.compile(build())
    t0 = time.perf_counter()
    got = generate(model, PROMPT, n_tokens)
    compiled_s = time.perf_counter() - t0
    assert got == want, (got, want)
    s = ft.stats()
    print(f"Llama-style decoder (d={CONFIG['d']}, {CONFIG['n_layers']} layers, {CONFIG['n_heads']} heads, "
          f"vocab {CONFIG['vocab']}): {n_tokens} tokens identical to NumPy; NumPy {eager_s * 1e3:.0f} ms, "
          f"frametrace {compiled_s * 1e3:.0f} ms incl. compiles; graphs {s.unique_graphs}, "
          f"breaks {s.graph_breaks}, recompiles {s.recompiles}")
    return got


if __name__ == "__main__":
    main()
