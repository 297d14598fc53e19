"""frametrace inside dask.distributed workers: a real LocalCluster of 2 worker processes (one per
module), every result compared with NumPy's. Needs the `frametrace[dask]` extra."""
import os

import numpy as np
import pytest

distributed = pytest.importorskip(
    "distributed", reason="*** SKIPPED LOUDLY: the Dask tests need `pip install frametrace[dask]` "
                          "(make install brings it) ***")
da = pytest.importorskip("dask.array")
import dask  # noqa: E402

import frametrace as ft  # noqa: E402

import dask_programs as progs  # noqa: E402


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    cache = tmp_path_factory.mktemp("shared_cache")
    env = {"FRAMETRACE_CACHE_DIR": str(cache), "FRAMETRACE_STRICT_BACKEND": "1", "FRAMETRACE_VERIFY_IR": "1",
           "FRAMETRACE_PGO": "1"}
    with pytest.MonkeyPatch.context() as mp:
        for k, v in env.items():
            mp.setenv(k, v)                  # spawned workers inherit the environment
        with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                      dashboard_address=None, silence_logs=40) as cluster, \
                distributed.Client(cluster) as c:
            c.cache_dir = str(cache)
            yield c


@pytest.fixture(autouse=True)
def fresh_workers(client):
    client.run(ft.reset)
    client.run(ft.disable)
    yield


def _uneven(seed, rows, cols):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((sum(rows), sum(cols)))
    return x, da.from_array(x, chunks=(rows, cols))


def _blockwise(fn, x, rows, cols):
    out = np.empty_like(x)
    r0 = 0
    for r in rows:
        c0 = 0
        for c in cols:
            out[r0:r0 + r, c0:c0 + c] = fn(x[r0:r0 + r, c0:c0 + c])
            c0 += c
        r0 += r
    return out


def test_map_blocks_uneven_chunks_two_graphs_per_worker(client):
    # row blocks of uneven heights
    rows, cols = (60, 75, 90, 45, 120, 33, 64, 81), (50,)
    x, dx = _uneven(0, rows, cols)
    f = ft.compile(progs.jacobi)                 # not the module's name: pickled by value, rebuilt there
    got = dx.map_blocks(f, dtype=x.dtype).compute()
    np.testing.assert_allclose(got, _blockwise(progs.jacobi, x, rows, cols), rtol=1e-13, atol=0)
    states = client.run(progs.worker_state)
    assert len(states) == 2
    for s in states.values():
        assert s["graphs"] <= 2, states          # static for the first block shape, then dynamic
        assert s["cache_dir"] == client.cache_dir
    assert sum(s["graphs"] for s in states.values()) >= 1, states   # (the scheduler may use one worker)
    # the workers shared the on-disk PGO profile and kernel cache: forgetting what they compiled
    # in memory, new block shapes compile one dynamic graph each, at once
    client.run(ft.reset)
    rows2, cols2 = (81, 64, 99, 70), (50,)
    x2, dx2 = _uneven(1, rows2, cols2)
    got2 = dx2.map_blocks(f, dtype=x.dtype).compute()
    np.testing.assert_allclose(got2, _blockwise(progs.jacobi, x2, rows2, cols2), rtol=1e-13, atol=0)
    for s in client.run(progs.worker_state).values():
        assert s["recompiles"] == 0 and s["graphs"] <= 1
    assert any(files for _, _, files in os.walk(client.cache_dir))


def test_map_blocks_uneven_in_both_dimensions_two_graphs_per_worker(client):
    # blocks differ in height and width: once a block's shape differs from the first one, every
    # dimension of it turns dynamic in the worker, so no third graph when the other one changes
    rows, cols = (40, 52, 40, 33, 61), (30, 45, 30, 27)
    x, dx = _uneven(2, rows, cols)
    f = ft.compile(progs.jacobi)
    got = dx.map_blocks(f, dtype=x.dtype).compute()
    np.testing.assert_allclose(got, _blockwise(progs.jacobi, x, rows, cols), rtol=1e-13, atol=0)
    states = client.run(progs.worker_state)
    for s in states.values():
        assert s["graphs"] <= 2, states


def test_delayed_tasks_and_a_module_level_compiled_function(client):
    rng = np.random.default_rng(2)
    blocks = [rng.standard_normal(n) for n in (100, 130, 170, 210, 90)]
    tasks = [dask.delayed(progs.standardise)(b, float(i)) for i, b in enumerate(blocks)]
    got = dask.compute(*tasks)
    for i, (g, b) in enumerate(zip(got, blocks)):
        np.testing.assert_allclose(g, (b - b.mean()) / (b.std() + 1.0) + i, rtol=1e-12)
    assert sum(s["frames"] for s in client.run(progs.worker_state).values()) >= 1
    # a compiled function of the client, pickled with cloudpickle (closure-free, by reference to
    # jacobi_steps), called with keyword-free extra arguments
    f = ft.compile(progs.jacobi_steps, dynamic=True)
    u = rng.standard_normal((40, 30))
    assert np.array_equal(client.submit(f, u, 3).result(), progs.jacobi_steps(u, 3))


def test_global_hook_in_workers(client):
    client.run(ft.enable)
    rows, cols = (40, 40, 55, 61), (30, 44)
    x, dx = _uneven(3, rows, cols)
    got = dx.map_blocks(progs.plain_block, dtype=x.dtype).compute()
    np.testing.assert_allclose(got, _blockwise(progs.plain_block, x, rows, cols), rtol=1e-13)
    states = client.run(progs.worker_state)
    assert sum(s["frames"] for s in states.values()) >= 1, states
