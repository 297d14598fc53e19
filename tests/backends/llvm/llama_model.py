"""A small Llama-style decoder as users port llama2.c to NumPy (tests of the product kernels): float
weights in a dict per layer, a float64 KV cache from np.zeros and a float64 rotary table, so with
float32 weights every product meets float64 activations (NEP 50). RMSNorm, rotary embedding on
(even, odd) pairs, attention over the cache written in place, SwiGLU. Knows nothing of frametrace."""
from __future__ import annotations

import numpy as np


def silu(x):
    return x / (1.0 + np.exp(-x))


class Llama:
    def __init__(self, weights: dict, n_heads: int, max_len: int = 32, eps: float = 1e-5):
        self.embed = weights["tok_embeddings"]
        self.layers = weights["layers"]
        self.final_norm = weights["norm"]
        self.lm_head = weights["output"]
        self.n_heads = n_heads
        self.head_dim = self.embed.shape[1] // n_heads
        self.eps = eps
        self.cache_k = [np.zeros((max_len, n_heads, self.head_dim)) for _ in self.layers]
        self.cache_v = [np.zeros((max_len, n_heads, self.head_dim)) for _ in self.layers]
        freqs = 1.0 / 10000.0 ** (np.arange(0, self.head_dim, 2) / self.head_dim)
        angles = np.outer(np.arange(max_len), freqs)
        self.cos, self.sin = np.cos(angles), np.sin(angles)

    def rmsnorm(self, x, weight):
        return x * (1.0 / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps)) * weight

    def rope(self, x, pos):
        n = x.shape[0]
        cos = self.cos[pos:pos + n][:, None, :]
        sin = self.sin[pos:pos + n][:, None, :]
        pairs = x.reshape(x.shape[:-1] + (-1, 2))
        x0, x1 = pairs[..., 0], pairs[..., 1]
        out = np.stack([x0 * cos - x1 * sin, x0 * sin + x1 * cos], axis=-1)
        return out.reshape(x.shape)

    def attention(self, x, layer, i, pos):
        n, h, hd = x.shape[0], self.n_heads, self.head_dim
        q = self.rope((x @ layer["wq"]).reshape(n, h, hd), pos)
        k = self.rope((x @ layer["wk"]).reshape(n, h, hd), pos)
        v = (x @ layer["wv"]).reshape(n, h, hd)
        self.cache_k[i][pos:pos + n] = k
        self.cache_v[i][pos:pos + n] = v
        keys = self.cache_k[i][:pos + n]
        values = self.cache_v[i][:pos + n]
        scores = np.einsum("qhd,khd->hqk", q, keys) / np.sqrt(hd)
        scores = scores + np.triu(np.full((n, pos + n), -np.inf), k=pos + 1)
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        out = np.einsum("hqk,khd->qhd", scores, values).reshape(n, h * hd)
        return out @ layer["wo"]

    def feed_forward(self, x, layer):
        return (silu(x @ layer["w1"]) * (x @ layer["w3"])) @ layer["w2"]

    def __call__(self, tokens, pos):
        x = self.embed[tokens]
        for i, layer in enumerate(self.layers):
            x = x + self.attention(self.rmsnorm(x, layer["attention_norm"]), layer, i, pos)
            x = x + self.feed_forward(self.rmsnorm(x, layer["ffn_norm"]), layer)
        return self.rmsnorm(x, self.final_norm)[-1] @ self.lm_head


def build(dtype, vocab=64, dim=48, n_layers=2, n_heads=4, hidden=80, seed=0) -> Llama:
    rng = np.random.default_rng(seed)

    def mat(i, o):
        return (rng.standard_normal((i, o)) / np.sqrt(i)).astype(dtype)

    def norm():
        return (1.0 + rng.standard_normal(dim) * 0.1).astype(dtype)

    layers = [{"wq": mat(dim, dim), "wk": mat(dim, dim), "wv": mat(dim, dim), "wo": mat(dim, dim),
               "w1": mat(dim, hidden), "w2": mat(hidden, dim), "w3": mat(dim, hidden),
               "attention_norm": norm(), "ffn_norm": norm()} for _ in range(n_layers)]
    weights = {"tok_embeddings": rng.standard_normal((vocab, dim)).astype(dtype), "layers": layers,
               "norm": norm(), "output": mat(dim, vocab)}
    return Llama(weights, n_heads)


def generate(model, prompt, n_tokens):
    """Greedy decode: a prefill call on the prompt, then one call per token; tokens and logits."""
    tokens, pos, logits = list(prompt), 0, []
    for _ in range(n_tokens):
        out = model(np.array(tokens[pos:]), pos)
        logits.append(out)
        pos = len(tokens)
        tokens.append(int(np.argmax(out)))
    return tokens[len(prompt):], logits
