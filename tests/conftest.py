"""Fixtures of every unit test, and what keeps test processes apart when pytest-xdist runs them.

`make test` runs this suite on one pytest-xdist worker per CPU (.ci/pytest_parallel). Each worker is
its own process with its own frametrace state (caches, hooks, counters); what they could still
share is kept apart here:

  * on-disk state: every test gets `<its tmp_path>/cache` as `config.cache_dir` (kernels, PGO
    profiles) and PGO off; before and between tests (module-scoped fixtures, collection) the
    worker's own `<worker basetemp>/cache`, also exported as FRAMETRACE_CACHE_DIR so that a
    subprocess that inherits the environment never writes into ~/.cache/frametrace;
  * a module whose tests share a module- or class-scoped fixture (a Dask cluster, a built wheel, a
    compiled model) runs on one worker (`xdist_group`, `--dist loadgroup`): the fixture is built
    once, never by two workers at the same time;
  * tests marked `serial` (several processes with tight timeouts, such as MPI collectives) run
    after the parallel part, alone.

`FRAMETRACE_TEST_SEED=K` runs every test under another random stream (tests/seed_offset.py).
"""
import os

import pytest
import seed_offset

import frametrace as ft

SEED = seed_offset.offset()
if SEED is not None:                      # before any test module makes its module-level rng
    seed_offset.install(SEED)


@pytest.hookimpl(tryfirst=True)           # before Hypothesis's plugin reads its seed option
def pytest_configure(config):
    if SEED is not None and getattr(config.option, "hypothesis_seed", "") is None:
        config.option.hypothesis_seed = str(SEED)
    config.addinivalue_line("markers", "serial: run alone, after the parallel part of the suite (.ci/pytest_parallel)")
    config.addinivalue_line("markers", "xdist_group(name): tests of one group run on one pytest-xdist worker")


@pytest.fixture(autouse=True, scope="session")
def worker_cache_dir(tmp_path_factory):
    """This process's cache dir, for whatever runs outside a test's own (module fixtures, subprocesses)."""
    cache = str(tmp_path_factory.getbasetemp() / "cache")
    saved = os.environ.get("FRAMETRACE_CACHE_DIR")
    os.environ["FRAMETRACE_CACHE_DIR"] = cache
    with ft.config.patch(cache_dir=cache, pgo=False):
        yield cache
    if saved is None:
        os.environ.pop("FRAMETRACE_CACHE_DIR", None)
    else:
        os.environ["FRAMETRACE_CACHE_DIR"] = saved


def pytest_report_header(config):
    return f"{seed_offset.ENV}={SEED}: seeds of tests/ mixed with it" if SEED is not None else None


@pytest.fixture(autouse=True)
def clean_state(request, tmp_path, worker_cache_dir):
    if SEED is not None:
        seed_offset.seed_global_state(SEED, request.node.nodeid)
    ft.reset()
    # a backend bug or a malformed graph fails the test instead of falling back to NumPy
    with ft.config.patch(cache_dir=str(tmp_path / "cache"), pgo=False, strict_backend=True, verify_ir=True):
        yield
    ft.set_stance("default")
    ft.reset()


_SHARED_SCOPES = ("class", "module", "package")


def pytest_ignore_collect(collection_path, config):
    """The serial pass of .ci/pytest_parallel imports only the test files that hold serial tests."""
    listing = os.environ.get("FT_SERIAL_FILES")
    if not (listing and os.environ.get("FT_SERIAL_PASS")) or not collection_path.name.endswith(".py"):
        return None
    with open(listing) as fh:
        wanted = set(fh.read().split())
    return True if str(collection_path) not in wanted else None


@pytest.hookimpl(tryfirst=True)          # before xdist reads the groups (its hook would otherwise run first)
def pytest_collection_modifyitems(config, items):
    """Tests that share a fixture wider than a test but narrower than the session share a worker.

    With FT_SERIAL_FILES set (by .ci/pytest_parallel), the parallel pass also writes there the files
    that hold `serial` tests, so that the serial pass collects only those."""
    listing = os.environ.get("FT_SERIAL_FILES")
    if listing and not os.environ.get("FT_SERIAL_PASS"):
        files = sorted({str(item.path) for item in items if item.get_closest_marker("serial")})
        tmp = f"{listing}.{os.getpid()}"
        with open(tmp, "w") as fh:
            fh.write("".join(f + "\n" for f in files))
        os.replace(tmp, listing)          # every worker collects the same tests: the last write wins
    for item in items:
        info = getattr(item, "_fixtureinfo", None)
        defs = getattr(info, "name2fixturedefs", {}) or {}
        if any(d.scope in _SHARED_SCOPES for fds in defs.values() for d in fds) \
                and item.get_closest_marker("xdist_group") is None:
            item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))
