"""Whole programs: the example decoders (examples/gpt_decoder.py, llama_decoder.py) end to end.

For each model, in one process and interleaved: NumPy eager, `ft.compile` on the model entry,
and `ft.enable()` around the unchanged program. Steady-state per-token decode time (median of
the per-step times of a 30-token greedy decode, after a warm-up decode), graphs, graph breaks
and recompiles of the compiled runs, and the cold first token (fresh process, empty caches:
imports not included, compiles included). Numba cannot compile these programs (classes,
dicts of weights, Python lists): its column is "n/a" by design, not for lack of installation.

"new sizes" is the median step of the first decode after compiling (steps 2..: every
sequence length new to the compiled graph), where the later rounds repeat lengths already
seen. "matvec floor" (Llama) is NumPy doing nothing but one step's matrix-vector products
(every weight read once): no implementation reading float64 weights can go below it.
One thread everywhere: OpenBLAS/OpenMP threads are set to 1 before NumPy loads (unless the
environment says otherwise), kernels to `--threads`.

    python benchmarks/bench_whole_programs.py [--quick] [--threads 1]
"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")              # "1 thread" holds for NumPy's BLAS too

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import frametrace as ft  # noqa: E402
from common import fresh_cache_dir, run_script  # noqa: E402
import gpt_decoder  # noqa: E402
import llama_decoder  # noqa: E402


def gpt_steps(model, n_tokens):
    """Per-step seconds of a greedy GPT decode (the whole sequence is run each step)."""
    params = gpt_decoder.random_params(**{k: gpt_decoder.CONFIG[k] for k in ("vocab", "d", "n_layer")})
    tokens, times = list(gpt_decoder.PROMPT), []
    for _ in range(n_tokens):
        t0 = time.perf_counter()
        logits = model(tokens, **params, n_head=gpt_decoder.CONFIG["n_head"])
        tokens.append(int(np.argmax(logits[-1])))
        times.append(time.perf_counter() - t0)
    return tokens, times


def llama_steps(model, n_tokens):
    """Per-step seconds of a greedy Llama decode with the KV cache (prefill is step 0)."""
    tokens, pos, times = list(llama_decoder.PROMPT), 0, []
    for _ in range(n_tokens):
        t0 = time.perf_counter()
        logits = model(np.array(tokens[pos:]), pos)
        pos = len(tokens)
        tokens.append(int(np.argmax(logits)))
        times.append(time.perf_counter() - t0)
    return tokens, times


MODELS = {
    "gpt": (lambda: gpt_decoder.gpt, gpt_steps),
    "llama": (lambda: llama_decoder.build(), llama_steps),
}


def measure(name, n_tokens, rounds):
    make, steps = MODELS[name]
    eager_model = make()
    want, _ = steps(eager_model, n_tokens)
    ft.reset()
    compiled_model = ft.compile(make())
    got, first = steps(compiled_model, n_tokens)        # warm-up decode: compiles happen here
    same_compile = got == want
    s = ft.stats()
    compile_stats = (s.unique_graphs, s.graph_breaks, s.recompiles)
    hooked_model = make()
    with ft.enabled():
        got_hook, _ = steps(hooked_model, n_tokens)     # warm-up under the global hook
    same_hook = got_hook == want
    variants = {"numpy": [], "ft.compile": [], "ft.enable": []}
    for _ in range(rounds):                            # interleaved: machine noise hits all alike
        variants["numpy"] += steps(eager_model, n_tokens)[1][1:]
        variants["ft.compile"] += steps(compiled_model, n_tokens)[1][1:]
        with ft.enabled():
            variants["ft.enable"] += steps(hooked_model, n_tokens)[1][1:]
    medians = {k: statistics.median(v) for k, v in variants.items()}
    medians["new sizes"] = statistics.median(first[2:])     # steps 0 and 1 compile
    if name == "llama":
        medians["matvec floor"] = matvec_floor(eager_model, rounds * n_tokens)
    return medians, compile_stats, same_compile, same_hook


def matvec_floor(model, n):
    """Median seconds of one Llama decode step's matrix-vector products alone (NumPy)."""
    mats = [m for layer in model.layers for m in (layer.attention.wq, layer.attention.wk,
            layer.attention.wv, layer.attention.wo, layer.feed_forward.w1,
            layer.feed_forward.w3, layer.feed_forward.w2)] + [model.output]
    rows = {m.shape[0]: np.ones((1, m.shape[0])) for m in mats}
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        for m in mats:
            rows[m.shape[0]] @ m
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


COLD = """
import json, sys, time
sys.path.insert(0, {examples!r})
import numpy as np
import frametrace as ft
import {module}
model = {make}
t0 = time.perf_counter()
{first_call}
print(json.dumps({{"seconds": time.perf_counter() - t0}}))
"""


def cold_first_token(name):
    examples = os.path.join(ROOT, "examples")
    if name == "gpt":
        src = COLD.format(examples=examples, module="gpt_decoder", make="ft.compile(gpt_decoder.gpt)",
                          first_call="p = gpt_decoder.random_params(512, 64, 2); "
                                     "model(list(gpt_decoder.PROMPT), **p, n_head=4)")
    else:
        src = COLD.format(examples=examples, module="llama_decoder", make="ft.compile(llama_decoder.build())",
                          first_call="model(np.array(llama_decoder.PROMPT), 0)")
    return run_script(src, env={"FRAMETRACE_CACHE_DIR": fresh_cache_dir(), "FRAMETRACE_PGO": "0"})["seconds"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer tokens and rounds")
    ap.add_argument("--threads", type=int, default=1, help="frametrace kernel threads (default 1)")
    args = ap.parse_args()
    n_tokens, rounds = (10, 1) if args.quick else (30, 3)
    print(f"{'model':<8} {'NumPy ms/tok':>12} {'ft.compile':>11} {'x':>6} {'ft.enable':>10} {'x':>6} "
          f"{'new sizes':>10} {'x':>6} {'floor':>6} "
          f"{'graphs':>6} {'breaks':>6} {'recomp':>6} {'same':>5} {'cold 1st tok s':>14} {'Numba':>6}")
    with ft.config.patch(pgo=False, num_threads=args.threads):
        for name in MODELS:
            medians, (graphs, breaks, recompiles), same_c, same_h = measure(name, n_tokens, rounds)
            cold = cold_first_token(name)
            base = medians["numpy"]
            print(f"{name:<8} {base * 1e3:>12.2f} {medians['ft.compile'] * 1e3:>11.2f} "
                  f"{base / medians['ft.compile']:>5.2f}x {medians['ft.enable'] * 1e3:>10.2f} "
                  f"{base / medians['ft.enable']:>5.2f}x {medians['new sizes'] * 1e3:>10.2f} "
                  f"{base / medians['new sizes']:>5.2f}x "
                  f"{medians.get('matvec floor', float('nan')) * 1e3:>6.2f} {graphs:>6} {breaks:>6} {recompiles:>6} "
                  f"{'yes' if same_c and same_h else 'NO':>5} {cold:>14.2f} {'n/a':>6}", flush=True)


if __name__ == "__main__":
    main()
