"""Programs whose inputs change value every call, written the way they are found in the wild
(bench_changing_values.py runs them).

`rnn_step`: the loss and gradients of a character-level vanilla RNN over one window, as in the
well-known "min-char-rnn" script: ids given as Python lists, every per-step value kept in dicts
keyed by the time step, backpropagation through time in a reversed loop.

`simulate`: one output interval of a heat-equation simulation driven by a `while` on a float
time; the caller passes the time (an int 0 at first, then NumPy floats) and an output counter.
"""
from __future__ import annotations

import numpy as np


def rnn_step(inputs, targets, hprev, Wxh, Whh, Why, bh, by):
    xs, hs, ys, ps = {}, {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0
    for t in range(len(inputs)):
        xs[t] = np.zeros((Wxh.shape[1], 1))
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(np.dot(Wxh, xs[t]) + np.dot(Whh, hs[t - 1]) + bh)
        ys[t] = np.dot(Why, hs[t]) + by
        ps[t] = np.exp(ys[t]) / np.sum(np.exp(ys[t]))
        loss += -np.log(ps[t][targets[t], 0])
    dWxh, dWhh, dWhy = np.zeros_like(Wxh), np.zeros_like(Whh), np.zeros_like(Why)
    dbh, dby = np.zeros_like(bh), np.zeros_like(by)
    dhnext = np.zeros_like(hs[0])
    for t in reversed(range(len(inputs))):
        dy = np.copy(ps[t])
        dy[targets[t]] -= 1
        dWhy += np.dot(dy, hs[t].T)
        dby += dy
        dh = np.dot(Why.T, dy) + dhnext
        dhraw = (1 - hs[t] * hs[t]) * dh
        dbh += dhraw
        dWxh += np.dot(dhraw, xs[t].T)
        dWhh += np.dot(dhraw, hs[t - 1].T)
        dhnext = np.dot(Whh.T, dhraw)
    for dparam in [dWxh, dWhh, dWhy, dbh, dby]:
        np.clip(dparam, -5, 5, out=dparam)
    return loss, dWxh, dWhh, dWhy, dbh, dby, hs[len(inputs) - 1]


def rnn_params(vocab=40, hidden=64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((hidden, vocab)) * 0.01, rng.standard_normal((hidden, hidden)) * 0.01,
            rng.standard_normal((vocab, hidden)) * 0.01, np.zeros((hidden, 1)), np.zeros((vocab, 1)))


def laplacian(u, dx):
    out = np.zeros_like(u)
    out[1:-1] = (u[2:] - 2 * u[1:-1] + u[:-2]) / (dx * dx)
    return out


def simulate(u, t, t_out, dt, n_out, kappa=0.1, dx=0.05):
    """Advance `u` from time `t` to the next output time `t_out`; count the output."""
    while t < t_out:
        u = u + dt * kappa * laplacian(u, dx)
        t = t + dt
    n_out += 1
    return u, t, n_out
