"""Values that change every call (issue 21): compile counts, cold time and warm time against NumPy.

* RNN training step (changing_values_programs.rnn_step, "min-char-rnn" style: ids as Python
  lists, dicts keyed by the time step, BPTT), 16 steps per window, 20 windows of a text:
  graphs, recompiles, eager fallbacks, cold total of the 20 windows in a fresh process with an
  empty kernel cache (imports excluded, compiles included; wall and CPU time, since the machine
  is shared), warm median per window vs NumPy.
* A `while` simulation on a float time with an output counter (changing_values_programs.simulate),
  driven for 8 output intervals from t = 0 (an int) on: recompiles, graphs, graph breaks, warm
  median of the 8 intervals vs NumPy, and of one later interval alone (t a float by then).
* The per-call cost of the global hook on frames without NumPy: bench_hook.py.

    python benchmarks/bench_changing_values.py [--quick]
"""
from __future__ import annotations

import argparse
import os
import sys

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402

import frametrace as ft  # noqa: E402
from changing_values_programs import rnn_params, rnn_step, simulate  # noqa: E402
from common import fresh_cache_dir, run_script, timed  # noqa: E402

STEPS, WINDOWS = 16, 20


def windows(text, n=WINDOWS):
    return [(text[p:p + STEPS], text[p + 1:p + STEPS + 1]) for p in range(0, n * STEPS, STEPS)]


def train(fn, params, pairs):
    h = np.zeros((params[1].shape[0], 1))
    out = None
    for inputs, targets in pairs:
        out = fn(inputs, targets, h, *params)
        h = out[-1]
    return out


def drive(fn, u0, n=8, dt=0.001):
    u, t, n_out = u0.copy(), 0, 0
    for k in range(n):
        u, t, n_out = fn(u, t, (k + 1) * 0.01, dt, n_out)
    return u, t, n_out


COLD = """
import json, sys, time
sys.path.insert(0, {bench!r})
import numpy as np
import frametrace as ft
from changing_values_programs import rnn_params, rnn_step
from bench_changing_values import train, windows
params = rnn_params()
text = np.random.default_rng(1).integers(0, 40, 400).tolist()
pairs = windows(text)
f = ft.compile(rnn_step)
t0, c0 = time.perf_counter(), time.process_time()
train(f, params, pairs)
print(json.dumps({{"cold": time.perf_counter() - t0, "cpu": time.process_time() - c0,
                  "graphs": ft.stats().unique_graphs}}))
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    rounds = 5 if args.quick else 21
    bench = os.path.dirname(os.path.abspath(__file__))

    with ft.config.patch(pgo=False):
        params = rnn_params()
        text = np.random.default_rng(1).integers(0, 40, 400).tolist()
        pairs = windows(text)
        f = ft.compile(rnn_step)
        got, want = train(f, params, pairs), train(rnn_step, params, pairs)
        for a, b in zip(got, want):
            np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-12)
        s = ft.stats()
        one = pairs[5] + (np.zeros((params[1].shape[0], 1)),) + params
        t_np, t_ft = timed([rnn_step, f], one, rounds=rounds)
        cold = run_script(COLD.format(bench=bench), env={"FRAMETRACE_CACHE_DIR": fresh_cache_dir(),
                                                         "FRAMETRACE_PGO": "0"}, timeout=900)
        print(f"RNN step ({STEPS} steps, {WINDOWS} windows): graphs {s.unique_graphs}, recompiles {s.recompiles}, "
              f"eager fallbacks {s.eager_fallbacks}; cold {cold['cold']:.1f} s ({cold['cpu']:.1f} s CPU); "
              f"warm NumPy {t_np * 1e3:.3f} ms, frametrace {t_ft * 1e3:.3f} ms ({t_np / t_ft:.2f}x)")

        ft.reset()
        u0 = np.sin(np.linspace(0, np.pi, 256))
        g = ft.compile(simulate)
        got, want = drive(g, u0), drive(simulate, u0)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-12)
        assert got[1:] == want[1:], (got[1:], want[1:])
        s = ft.stats()
        t_np, t_ft = timed([lambda: drive(simulate, u0), lambda: drive(g, u0)], rounds=rounds)
        later = (u0, 0.03, 0.04, 0.001, 3)                 # an interval after the first: t a float
        l_np, l_ft = timed([simulate, g], later, rounds=rounds)
        print(f"while simulation (8 intervals): recompiles {s.recompiles}, graphs {s.unique_graphs}, "
              f"graph breaks {s.graph_breaks}; warm NumPy {t_np * 1e3:.2f} ms, frametrace {t_ft * 1e3:.2f} ms "
              f"({t_np / t_ft:.2f}x); one later interval: NumPy {l_np * 1e3:.3f} ms, frametrace "
              f"{l_ft * 1e3:.3f} ms ({l_np / l_ft:.2f}x)")
    print("per-call cost of the hook on frames without NumPy: python benchmarks/bench_hook.py")


if __name__ == "__main__":
    main()
