"""A Llama-style decoder as people port llama2.c to NumPy: one model class, a dict of weights.

Weights are kept in a flat dict per layer (`self.layers[i]["wq"]`), float32 as checkpoints
store them; the KV cache is `np.zeros(...)` (float64: NumPy's default) and the rotary table
is computed in float64, so from the first rotary product on the activations are float64 and
every matrix product meets a float32 weight (NEP 50: float64 @ float32 -> float64, which
NumPy computes by casting the whole weight matrix on every call). RMSNorm, rotary position
embeddings on (even, odd) pairs, attention over the cache written in place, SwiGLU.
Nothing here knows about frametrace.

    python benchmarks/llama_mixed.py [--tokens 20] [--rounds 3] [--dtypes float32,float64]

For each weight dtype, in one process, one thread (BLAS and kernels): NumPy eager,
`ft.compile` on the model object and the unchanged program under `ft.enable()`, per-token
medians of the decode steps after the prefill, interleaved rounds after a warm-up decode
(which compiles); the tokens of every variant must equal NumPy's.
"""
from __future__ import annotations

import os
import statistics
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")              # one thread for NumPy's BLAS too

import numpy as np  # noqa: E402

CONFIG = {"vocab": 512, "dim": 288, "n_layers": 6, "n_heads": 6, "hidden": 768, "max_len": 128}
PROMPT = [1, 45, 300, 7, 99, 12]


def silu(x):
    return x / (1.0 + np.exp(-x))


class Llama:
    def __init__(self, weights: dict, n_heads: int, max_len: int = 128, eps: float = 1e-5):
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
        mask = np.triu(np.full((n, pos + n), -np.inf), k=pos + 1)
        scores = scores + mask
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


def random_weights(dtype=np.float32, vocab=512, dim=288, n_layers=6, hidden=768, seed=0):
    rng = np.random.default_rng(seed)

    def mat(i, o):
        return (rng.standard_normal((i, o)) / np.sqrt(i)).astype(dtype)

    def norm():
        return (1.0 + rng.standard_normal(dim) * 0.1).astype(dtype)

    layers = [{"wq": mat(dim, dim), "wk": mat(dim, dim), "wv": mat(dim, dim), "wo": mat(dim, dim),
               "w1": mat(dim, hidden), "w2": mat(hidden, dim), "w3": mat(dim, hidden),
               "attention_norm": norm(), "ffn_norm": norm()} for _ in range(n_layers)]
    return {"tok_embeddings": rng.standard_normal((vocab, dim)).astype(dtype), "layers": layers,
            "norm": norm(), "output": mat(dim, vocab)}


def build(dtype=np.float32, seed=0):
    c = CONFIG
    return Llama(random_weights(dtype, c["vocab"], c["dim"], c["n_layers"], c["hidden"], seed),
                 c["n_heads"], c["max_len"])


def generate(model, prompt, n_tokens):
    """Greedy decode: a prefill call on the prompt, then one call per token."""
    tokens, pos = list(prompt), 0
    for _ in range(n_tokens):
        logits = model(np.array(tokens[pos:]), pos)
        pos = len(tokens)
        tokens.append(int(np.argmax(logits)))
    return tokens[len(prompt):]


def generate_timed(model, prompt, n_tokens):
    """generate() that also returns each step's seconds."""
    tokens, pos, times = list(prompt), 0, []
    for _ in range(n_tokens):
        t0 = time.perf_counter()
        logits = model(np.array(tokens[pos:]), pos)
        pos = len(tokens)
        tokens.append(int(np.argmax(logits)))
        times.append(time.perf_counter() - t0)
    return tokens[len(prompt):], times


def measure(dtype, n_tokens, rounds):
    import frametrace as ft

    eager = build(dtype)
    want, _ = generate_timed(eager, PROMPT, n_tokens)
    ft.reset()
    compiled = ft.compile(build(dtype))
    same = generate_timed(compiled, PROMPT, n_tokens)[0] == want
    s = ft.stats()
    graphs, breaks = s.unique_graphs, s.graph_breaks
    hooked = build(dtype)
    with ft.enabled():
        same &= generate_timed(hooked, PROMPT, n_tokens)[0] == want
    times = {"numpy": [], "ft.compile": [], "ft.enable": []}
    for _ in range(rounds):
        times["numpy"] += generate_timed(eager, PROMPT, n_tokens)[1][1:]
        times["ft.compile"] += generate_timed(compiled, PROMPT, n_tokens)[1][1:]
        with ft.enabled():
            times["ft.enable"] += generate_timed(hooked, PROMPT, n_tokens)[1][1:]
    return {k: statistics.median(v) for k, v in times.items()}, graphs, breaks, same


def main():
    import argparse

    import frametrace as ft

    ap = argparse.ArgumentParser()
    ap.add_argument("--tokens", type=int, default=20)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--dtypes", default="float32,float64")
    args = ap.parse_args()
    print(f"{'weights':<8} {'NumPy ms/tok':>12} {'ft.compile':>10} {'x':>6} {'ft.enable':>10} {'x':>6} "
          f"{'graphs':>6} {'breaks':>6} {'same':>5}")
    with ft.config.patch(pgo=False, num_threads=1):
        for name in args.dtypes.split(","):
            m, graphs, breaks, same = measure(np.dtype(name), args.tokens, args.rounds)
            base = m["numpy"]
            print(f"{name:<8} {base * 1e3:>12.3f} {m['ft.compile'] * 1e3:>10.3f} "
                  f"{base / m['ft.compile']:>5.2f}x {m['ft.enable'] * 1e3:>10.3f} "
                  f"{base / m['ft.enable']:>5.2f}x {graphs:>6} {breaks:>6} {'yes' if same else 'NO':>5}",
                  flush=True)


if __name__ == "__main__":
    main()
