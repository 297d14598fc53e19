"""A small GPT-style decoder in plain NumPy, written the way such code is found in the wild.

Functional style (after picoGPT): nested dicts of weights passed with `**`, `map` and a
lambda to split heads, a causal mask from `np.tri`, a list comprehension over heads joined
with `np.hstack`, and greedy decoding that appends to a Python list of token ids and runs
the whole sequence again each step. Nothing here knows about frametrace:
`ft.compile(gpt)` (or `ft.enable()`) is the only change.

    python examples/gpt_decoder.py        # decodes 30 tokens eagerly and compiled, checks they agree
"""
from __future__ import annotations

import time

import numpy as np


def gelu(x):
    return 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))


def softmax(x):
    e = np.exp(x - np.max(x, axis=-1, keepdims=True))
    return e / np.sum(e, axis=-1, keepdims=True)


def layer_norm(x, g, b, eps: float = 1e-5):
    mean = np.mean(x, axis=-1, keepdims=True)
    variance = np.var(x, axis=-1, keepdims=True)
    return g * (x - mean) / np.sqrt(variance + eps) + b


def linear(x, w, b):
    return x @ w + b


def ffn(x, c_fc, c_proj):
    return linear(gelu(linear(x, **c_fc)), **c_proj)


def attention(q, k, v, mask):
    return softmax(q @ k.T / np.sqrt(q.shape[-1]) + mask) @ v


def mha(x, c_attn, c_proj, n_head):
    x = linear(x, **c_attn)
    qkv_heads = list(map(lambda t: np.split(t, n_head, axis=-1), np.split(x, 3, axis=-1)))
    causal_mask = (1 - np.tri(x.shape[0], dtype=x.dtype)) * -1e10
    out_heads = [attention(q, k, v, causal_mask) for q, k, v in zip(*qkv_heads)]
    return linear(np.hstack(out_heads), **c_proj)


def transformer_block(x, mlp, attn, ln_1, ln_2, n_head):
    x = x + mha(layer_norm(x, **ln_1), **attn, n_head=n_head)
    return x + ffn(layer_norm(x, **ln_2), **mlp)


def gpt(inputs, wte, wpe, blocks, ln_f, n_head):
    x = wte[inputs] + wpe[range(len(inputs))]
    for block in blocks:
        x = transformer_block(x, **block, n_head=n_head)
    return layer_norm(x, **ln_f) @ wte.T


def generate(model, inputs, params, n_head, n_tokens):
    inputs = list(inputs)
    for _ in range(n_tokens):
        logits = model(inputs, **params, n_head=n_head)
        inputs.append(int(np.argmax(logits[-1])))
    return inputs[len(inputs) - n_tokens:]


def random_params(vocab=512, d=64, n_layer=2, n_ctx=128, seed=0):
    rng = np.random.default_rng(seed)

    def lin(i, o):
        return {"w": rng.standard_normal((i, o)) * 0.2, "b": rng.standard_normal(o) * 0.02}

    def norm():
        return {"g": 1.0 + rng.standard_normal(d) * 0.1, "b": rng.standard_normal(d) * 0.02}

    blocks = [{"mlp": {"c_fc": lin(d, 4 * d), "c_proj": lin(4 * d, d)},
               "attn": {"c_attn": lin(d, 3 * d), "c_proj": lin(d, d)},
               "ln_1": norm(), "ln_2": norm()} for _ in range(n_layer)]
    return {"wte": rng.standard_normal((vocab, d)) * 0.5, "wpe": rng.standard_normal((n_ctx, d)) * 0.1,
            "blocks": blocks, "ln_f": norm()}


CONFIG = {"vocab": 512, "d": 64, "n_layer": 2, "n_head": 4}
PROMPT = [17, 301, 5, 88, 250]


def main(n_tokens=30):
    import frametrace as ft

    params = random_params(CONFIG["vocab"], CONFIG["d"], CONFIG["n_layer"])
    t0 = time.perf_counter()
    want = generate(gpt, PROMPT, params, CONFIG["n_head"], n_tokens)
    eager_s = time.perf_counter() - t0
    ft.reset()
    compiled = ft.compile(gpt)
    t0 = time.perf_counter()
    got = generate(compiled, PROMPT, params, CONFIG["n_head"], n_tokens)
    compiled_s = time.perf_counter() - t0
    assert got == want, (got, want)
    s = ft.stats()
    print(f"GPT-style decoder (d={CONFIG['d']}, {CONFIG['n_layer']} layers, {CONFIG['n_head']} heads, "
          f"vocab {CONFIG['vocab']}): {n_tokens} tokens identical to NumPy; NumPy {eager_s * 1e3:.0f} ms, "
          f"frametrace {compiled_s * 1e3:.0f} ms incl. compiles; graphs {s.unique_graphs}, "
          f"breaks {s.graph_breaks}, recompiles {s.recompiles}")
    return got


if __name__ == "__main__":
    main()
