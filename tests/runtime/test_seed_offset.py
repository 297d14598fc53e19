"""FRAMETRACE_TEST_SEED (tests/seed_offset.py): seeds passed from tests/ are mixed with K, others
are not, and without it nothing is patched."""
import os
import subprocess
import sys

import numpy as np

import seed_offset

TESTS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# run in a fresh process: `install` patches numpy and random for the process's lifetime
PROBE = f"""
import random, sys
import numpy as np
sys.path.insert(0, {TESTS!r})
import seed_offset
seed_offset.install(7)
test_code = compile('''
draws = (np.random.default_rng(3).random(), np.random.RandomState(3).rand(), random.Random(3).random())
np.random.seed(3)
draws += (np.random.rand(),)
''', {os.path.join(TESTS, "fake_test.py")!r}, "exec")
ns = {{"np": np, "random": random}}
exec(test_code, ns)
library = (np.random.default_rng(3).random(), np.random.RandomState(3).rand(), random.Random(3).random())
np.random.seed([3, 7])
mixed = (np.random.default_rng([3, 7]).random(), np.random.RandomState([3, 7]).rand(),
         random.Random(3 + (7 << 64)).random(), np.random.rand())
plain = (np.random.default_rng(3).random(), np.random.RandomState(3).rand(), random.Random(3).random())
print(repr((ns["draws"], mixed, library, plain, isinstance(np.random.mtrand._rand, np.random.RandomState))))
"""


def test_seeds_from_tests_are_mixed_and_library_seeds_are_not():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, check=True).stdout
    draws, mixed, library, plain, still_a_class = eval(out)      # mixed, plain: drawn from no test file
    assert draws == mixed and library == plain and still_a_class
    assert len(set(draws[:3]) & set(plain)) == 0


def test_unset_patches_nothing():
    if seed_offset.offset() is None:
        assert np.random.default_rng is np.random._generator.default_rng and not hasattr(np.random, "_ft_seed_offset")
    assert seed_offset._mixed_numpy(None, 5) is None and seed_offset._mixed_numpy(4, 5) == [4, 5]
    assert seed_offset._mixed_numpy([1, 2], 5) == [1, 2, 5]
