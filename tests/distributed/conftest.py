"""Fixtures for multi-process tests: a real redis-server on loopback, mpiexec, the remote cache.

A test is skipped only when `redis-server` or `mpiexec` cannot be found (`make test` installs
both); a missing Python package (redis, mpi4py) is a failure.
"""
from __future__ import annotations

import contextlib

import pytest
from distributed_helpers import CACHE_KEY, RedisServer, find_tool, patch_settings

from frametrace import remote_cache


@pytest.fixture
def redis_server(tmp_path):
    binary = find_tool("redis-server")
    if binary is None:
        pytest.skip("redis-server not found (apt-get install -y redis-server)")
    server = RedisServer(binary, tmp_path)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def mpiexec():
    path = find_tool("mpiexec")
    if path is None:
        pytest.skip("mpiexec not found (pip install 'frametrace[mpi]' installs MPICH's)")
    return path


@pytest.fixture
def use_remote(monkeypatch):
    """use_remote(url, key=CACHE_KEY, **settings): point this process's remote cache at `url`."""
    stack = contextlib.ExitStack()

    def use(url, key=CACHE_KEY, **settings):
        remote_cache.reset()
        if key is None:
            monkeypatch.delenv("FRAMETRACE_CACHE_KEY", raising=False)
        else:
            monkeypatch.setenv("FRAMETRACE_CACHE_KEY", key)
        stack.enter_context(patch_settings(monkeypatch, remote_cache=url, **settings))

    with stack:
        yield use
    remote_cache.reset()
