"""`z.real` / `z.imag` of complex elements and scalars in native loop bodies (complex_ops.py
rules "real" / "imag"): the parts' bits, as NumPy's views read them, for complex128 and
complex64, NaN / inf / -0.0 included; the escape-time test `z.real**2 + z.imag**2 > 4` of an
element loop is one native kernel."""
import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import loops
from test_complex_loops import cplx, fresh, same_bits

CTYPES = [np.complex128, np.complex64]


pytestmark = pytest.mark.usefixtures("fresh_loops")


def parts(z, re, im):
    for k in range(z.shape[0]):
        re[k] = z[k].real
        im[k] = z[k].imag * 2.0 - z[k].real
    return re, im


def escape_steps(c, steps, out):
    """Escape time of each point, the test on the parts (no abs), the count carried."""
    for k in range(c.shape[0]):
        z = c[k] * 0.0
        n = 0
        for _ in range(steps):
            z = z * z + c[k]
            n += int(z.real * z.real + z.imag * z.imag <= 4.0)
        out[k] = n
    return out


def run(fn, args):
    want_args, got_args = fresh(args), fresh(args)
    with np.errstate(all="ignore"):
        want = fn(*want_args)
        got = ft.compile(fn)(*got_args)
    for g, w in zip(got, want) if isinstance(want, tuple) else [(got, want)]:
        same_bits(g, w)


@pytest.mark.parametrize("dtype", CTYPES)
@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("n", [0, 1, 7, 64])
def test_parts_of_elements_are_numpys_bits(dtype, seed, n):
    rng = np.random.default_rng(seed)
    z = cplx(rng, (n,), dtype, specials=seed > 0)
    real = np.float32 if dtype == np.complex64 else np.float64
    run(parts, [z, np.empty(n, real), np.empty(n, real)])
    if n >= 2:
        assert loops.runs["native"] >= 1 and not loops.runs["generic"], loops.runs


@pytest.mark.parametrize("seed", [0, 3])
def test_an_escape_time_element_loop_is_native(seed):
    rng = np.random.default_rng(seed)
    with np.errstate(all="ignore"):
        c = cplx(rng, (50,), np.complex128, specials=seed > 0) * 0.3
    run(escape_steps, [c, 12, np.empty(50, np.int64)])
    assert loops.runs["native"] >= 1 and not loops.runs["generic"], loops.runs
