"""`FRAMETRACE_TEST_SEED=K`: run the suite under another random stream without editing any test.

A test that compares bits on random data must hold for every draw, not the one its seed gives
(CI's xdist order already changes which values a module-level `rng` hands each test). With K set,
every seed a file under tests/ passes is mixed with K:

  * `np.random.default_rng(s)` / `np.random.seed(s)` / `np.random.RandomState(s)` with an int
    `s` (or a sequence of ints) draw from the seed `[s, K]` (a sequence: `[*s, K]`);
  * `random.Random(s)` / `random.seed(s)` with an int `s` draw from `s + K * 2**64`;
  * NumPy's global legacy state (unseeded `np.random.rand`) is seeded per test from K and the
    test's id (tests/conftest.py);
  * Hypothesis runs under `--hypothesis-seed=K` unless one is given (tests marked `derandomize`
    keep their own).

Unset (the default), nothing is patched. Seeds that frametrace itself, Hypothesis or any library
passes (the probes of complex_ops, numpy_loops) are left alone: only calls made from code under
tests/ are mixed. A failure reproduces with the same K and test id; in a script, use the mixed
seed above."""
import os
import random
import sys
import zlib

import numpy as np

ENV = "FRAMETRACE_TEST_SEED"
_TESTS = os.path.dirname(os.path.abspath(__file__)) + os.sep
_RANDOM_SEED = random.Random.seed           # the unmixed seeding of Python's streams
_SKIPPED = {random.__file__, os.path.abspath(__file__)}   # Random.__init__ -> seed; this file


def offset():
    """K as an int, or None when the variable is unset or empty."""
    text = os.environ.get(ENV, "").strip()
    if not text:
        return None
    if not text.isdigit():
        raise SystemExit(f"{ENV}={text!r}: expected a non-negative integer")
    return int(text)


def _from_tests(depth):
    """Whether the call `depth` frames above the caller comes from a file under tests/."""
    frame = sys._getframe(depth + 1)
    while frame is not None and frame.f_code.co_filename in _SKIPPED:
        frame = frame.f_back
    return frame is not None and frame.f_code.co_filename.startswith(_TESTS)


def _mixed_numpy(seed, k):
    if isinstance(seed, (bool, np.bool_)):
        return seed
    if isinstance(seed, (int, np.integer)) and seed >= 0:
        return [int(seed), k]
    if isinstance(seed, (list, tuple, np.ndarray)) and all(isinstance(s, (int, np.integer)) for s in np.ravel(seed)):
        return [*(int(s) for s in np.ravel(seed)), k]
    return seed                              # None (already random), a SeedSequence, a Generator


def install(k):
    """Mix K into the seeds test code passes (once per process)."""
    if getattr(np.random, "_ft_seed_offset", None) is not None:
        return
    default_rng, np_seed, random_state = np.random.default_rng, np.random.seed, np.random.RandomState

    def mixed_default_rng(seed=None):
        return default_rng(_mixed_numpy(seed, k) if _from_tests(1) else seed)

    def mixed_np_seed(seed=None):
        return np_seed(_mixed_numpy(seed, k) if _from_tests(1) else seed)

    class SameClass(type):                   # a RandomState that a library made is still one
        def __instancecheck__(cls, obj):
            return isinstance(obj, random_state)

        def __subclasscheck__(cls, sub):
            return issubclass(sub, random_state)

    class MixedRandomState(random_state, metaclass=SameClass):
        def __init__(self, seed=None):
            super().__init__(_mixed_numpy(seed, k) if _from_tests(1) else seed)

        def seed(self, seed=None):
            return super().seed(_mixed_numpy(seed, k) if _from_tests(1) else seed)

    def mixed_random_seed(self, a=None, version=2):
        if isinstance(a, int) and not isinstance(a, bool) and _from_tests(1):
            a = a + (k << 64)
        return _RANDOM_SEED(self, a, version)

    MixedRandomState.__name__ = MixedRandomState.__qualname__ = "RandomState"
    np.random.default_rng, np.random.seed, np.random.RandomState = mixed_default_rng, mixed_np_seed, MixedRandomState
    random.Random.seed = mixed_random_seed
    random.seed = random._inst.seed          # the module's function is a method bound at import
    np.random._ft_seed_offset = k


def seed_global_state(k, nodeid):
    """NumPy's and Python's global streams, per test: a test that draws unseeded reproduces."""
    h = zlib.crc32(nodeid.encode())
    np.random.mtrand._rand.seed([h, k])
    _RANDOM_SEED(random._inst, h + (k << 64))
