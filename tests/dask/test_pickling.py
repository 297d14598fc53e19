"""ft.compile'd functions pickle: by reference when their module holds them, else (cloudpickle) as
the user's function plus options, rebuilt once per process and compiled there."""
import pickle
import subprocess
import sys

import numpy as np
import pytest

import frametrace as ft

import dask_programs as progs

cloudpickle = pytest.importorskip("cloudpickle", reason="cloudpickle comes with the frametrace[dask] extra")


def test_module_level_compiled_function_pickles_by_reference():
    assert pickle.loads(pickle.dumps(progs.standardise)) is progs.standardise


def test_by_value_rebuilds_one_cache_per_function_and_options():
    f = ft.compile(progs.jacobi, backend="numpy")
    u = np.arange(30.0).reshape(5, 6)
    blob = cloudpickle.dumps(f)
    g, h = pickle.loads(blob), pickle.loads(blob)
    assert g._frametrace_cache is h._frametrace_cache           # tasks unpickled apart share it
    assert g._frametrace_cache is not f._frametrace_cache        # and it is not the sender's
    assert g._frametrace_cache.options == f._frametrace_cache.options
    assert np.array_equal(g(u), progs.jacobi(u)) and np.array_equal(h(u * 2), progs.jacobi(u * 2))
    assert ft.stats().frames_compiled == 1                       # h was served by g's entry
    other = pickle.loads(cloudpickle.dumps(ft.compile(progs.jacobi, dynamic=True, backend="numpy")))
    assert other._frametrace_cache is not g._frametrace_cache    # other options, another cache


def test_closures_do_not_share_a_rebuilt_cache():
    def make(k):
        def scaled(x):
            return x * k
        return ft.compile(scaled, backend="numpy")
    a, b = pickle.loads(cloudpickle.dumps(make(2.0))), pickle.loads(cloudpickle.dumps(make(3.0)))
    x = np.ones(4)
    assert np.array_equal(a(x), x * 2.0) and np.array_equal(b(x), x * 3.0)
    assert a._frametrace_cache is not b._frametrace_cache


def test_in_another_process(tmp_path):
    f = ft.compile(progs.jacobi_steps, backend="numpy")
    code = ("import pickle, sys, numpy as np, frametrace as ft\n"
            "f = pickle.loads(sys.stdin.buffer.read())\n"
            "u = np.arange(48.0).reshape(6, 8)\n"
            "print(f(u, 2).sum(), f(u[:5], 2).sum(), ft.stats().frames_compiled)\n")
    r = subprocess.run([sys.executable, "-c", code], input=cloudpickle.dumps(f), capture_output=True,
                       env={"FRAMETRACE_CACHE_DIR": str(tmp_path), "PYTHONPATH": ":".join(sys.path)}, timeout=600)
    assert r.returncode == 0, r.stderr.decode()
    u = np.arange(48.0).reshape(6, 8)
    a, b, compiled = r.stdout.decode().split()
    assert float(a) == progs.jacobi_steps(u, 2).sum() and float(b) == progs.jacobi_steps(u[:5], 2).sum()
    assert int(compiled) == 2
