"""Functions the Dask tests send to workers (a module, so workers import it by reference)."""
import numpy as np

import frametrace as ft


def jacobi(u):
    """One 5-point Jacobi sweep over a block's interior; the block's edge is kept."""
    out = u.copy()
    out[1:-1, 1:-1] = 0.25 * (u[:-2, 1:-1] + u[2:, 1:-1] + u[1:-1, :-2] + u[1:-1, 2:])
    return out


def jacobi_steps(u, steps):
    for _ in range(steps):
        u = jacobi(u)
    return u


@ft.compile
def standardise(x, shift):
    """Decorated at module level: pickled by reference, the worker's import compiles it again."""
    return (x - x.mean()) / (x.std() + 1.0) + shift


def plain_block(u):
    """Not decorated: compiled in workers only under the global hook (ft.enable())."""
    return np.tanh(u) * 2.0 + u.shape[0]


def worker_state():
    s = ft.stats()
    return {"graphs": s.unique_graphs, "frames": s.frames_compiled, "recompiles": s.recompiles,
            "cache_dir": ft.config.cache_dir}
