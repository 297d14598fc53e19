"""In-place updates (`x += y`, `M *= c`, updates of views, an optimiser's step) and masked writes
agree with NumPy eager in every error state NumPy has (ignore, warn, raise, call, print, log and
mixes): the arrays afterwards (also after a raise), the warnings, the exceptions, what a handler
or log receives and what is printed; for overlapping views and pairs of dtypes. And they get
there without a saved copy of the destination: no copy where no flag NumPy would report is
possible (fpflags.kinds), the kernel writing first and NumPy reporting afterwards where the
graph is one ufunc (NumPy's own order: backends/llvm/fp_probes.py), a flag check before the
writing kernel where a flag must be seen before the write (backends/llvm/flag_checks.py)."""
import warnings

import numpy as np
import pytest

import frametrace as ft
from frametrace.backends.llvm import fp_errors
from frametrace.codegen.llvm_kernels import fpflags
from tracing import A, Traced

rng = np.random.default_rng(23)


def iadd(x, y):
    x += y
    return x


def scale(m):
    m *= 0.995
    return m


def idiv(x, y):
    x /= y
    return x


def shifted(x, y):
    x[1:] -= y[:-1] * 2.0
    return x


def strided(x, y):
    x[::2] *= y[::2]
    return x


def overlapping(x):
    x[1:] += x[:-1]
    return x


def interleaved(x):
    x[::2] += x[1::2]
    return x


def fill_masked(z, mask):
    z[...] = 0
    z[1:-1][mask] = 1
    return z


class SGD:
    """An optimiser's step, as a training loop writes it."""

    def __init__(self, lr):
        self.lr = lr

    def step(self, w, g):
        w -= self.lr * g
        return w


_sgd = SGD(0.1)


def sgd_step(w, g):
    return _sgd.step(w, g)


class _Log:
    def __init__(self):
        self.lines = []

    def write(self, msg):
        self.lines.append(msg)


def _states():
    """(name, np.errstate kwargs) of every mode NumPy has, and mixes."""
    return [
        ("default", {}),
        ("ignore", {"all": "ignore"}),
        ("warn", {"all": "warn"}),
        ("raise", {"all": "raise"}),
        ("call", {"all": "call"}),
        ("print", {"all": "print"}),
        ("log", {"all": "log"}),
        ("over raises, invalid warns", {"over": "raise", "invalid": "warn", "divide": "ignore", "under": "call"}),
        ("under warns", {"under": "warn"}),
    ]


def _run(fn, args, state):
    """What NumPy-visible happened: the arrays after the call, the result, the exception, the
    warnings, what the error handler and log received."""
    args = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
    calls, log = [], _Log()
    handler = log if state.get("all") == "log" else (lambda kind, flag: calls.append((kind, flag)))
    exc = None
    with warnings.catch_warnings(record=True) as w, np.errstate(call=handler, **state):
        warnings.simplefilter("always")
        try:
            fn(*args)
        except Exception as e:                 # noqa: BLE001  (NumPy's exception, compared)
            exc = (type(e), str(e))
    return args, exc, [(x.category, str(x.message)) for x in w], calls, log.lines


def _same(got, want):
    (ga, ge, gw, gc, gl), (wa, we, ww, wc, wl) = got, want
    assert ge == we
    assert gw == ww
    assert gc == wc and gl == wl
    for g, w in zip(ga, wa):
        if isinstance(w, np.ndarray):
            assert g.dtype == w.dtype
            np.testing.assert_array_equal(g, w)


def _data(kind, n, dtype="f8"):
    """Operands of a binary in-place update: clean, or making NumPy report each kind."""
    x = rng.standard_normal(n).astype(dtype)
    y = rng.standard_normal(n).astype(dtype)
    big = np.finfo(np.dtype(dtype)).max if np.dtype(dtype).kind == "f" else 0
    if kind == "over":
        x[n // 2], y[n // 2] = big, big
    elif kind == "invalid":
        x[n - 1], y[n - 1] = np.inf, -np.inf
    elif kind == "divide":
        y[0] = 0.0
    elif kind == "under":
        x[:] = np.finfo(np.dtype(dtype)).smallest_subnormal * 3
        y[:] = 3.0
    elif kind == "all":
        x[0], y[0] = big, big
        x[1], y[1] = np.inf, -np.inf
        y[2] = 0.0
    return x, y


@pytest.mark.parametrize("n", [37, 3000])          # the native entry saves small regions on its stack
@pytest.mark.parametrize("fn", [iadd, idiv, shifted, strided, sgd_step])
def test_binary_updates_in_every_error_state(fn, n, capfd):
    f = ft.compile(fn, backend="llvm")
    for kind in ("clean", "over", "invalid", "divide", "under", "all"):
        x, y = _data(kind, n)
        for name, state in _states():
            want = _run(fn, (x, y), state)
            want_out = capfd.readouterr().out
            got = _run(f, (x, y), state)
            assert capfd.readouterr().out == want_out, (kind, name)
            _same(got, want)
    assert ft.stats().graph_breaks == 0


@pytest.mark.parametrize("fn", [overlapping, interleaved])
def test_updates_of_overlapping_views(fn):
    f = ft.compile(fn, backend="llvm")
    for n in (2, 9, 2049):
        x = rng.standard_normal(n)
        x[n // 2 - 1: n // 2 + 2] = np.finfo(np.float64).max        # x[1:] + x[:-1] overflows
        for _, state in _states():
            _same(_run(f, (x,), state), _run(fn, (x,), state))


@pytest.mark.parametrize("dx,dy", [("f8", "f4"), ("f4", "f8"), ("f4", "f4"), ("f8", "i8"), ("i8", "i8"),
                                   ("i4", "i8"), ("i8", "f8"), ("u1", "i2"), ("f2", "f4")])
def test_dtype_pairs(dx, dy):
    f = ft.compile(iadd, backend="llvm")
    fd = ft.compile(idiv, backend="llvm")

    def operand(dt, kind, which):
        if np.dtype(dt).kind == "f":
            return _data(kind, 50, dt)[which]
        info = np.iinfo(dt)
        v = rng.integers(max(info.min, -100), min(info.max, 100), 50).astype(dt)
        if kind == "over":
            v[7] = info.max
        if kind == "divide" and which == 1:
            v[3] = 0
        return v
    for kind in ("clean", "over", "divide"):
        x, y = operand(dx, kind, 0), operand(dy, kind, 1)
        for _, state in _states()[:4]:
            _same(_run(f, (x, y), state), _run(iadd, (x, y), state))
            _same(_run(fd, (x, y), state), _run(idiv, (x, y), state))


def test_scaling_by_a_constant_saves_nothing_by_default():
    """x * 0.995 can only underflow (ignored by default): no copy, no check, in any state that
    ignores underflow; with underflow reported NumPy still gets its say."""
    t = Traced(scale, A(("n", "m")))
    kinds = fpflags.kinds(t.run.kernels[0])
    assert kinds == fpflags.BIT["under"]
    assert not fp_errors.GraphFlags(kinds).snapshot_wanted()
    with np.errstate(under="warn"):
        assert fp_errors.GraphFlags(kinds).snapshot_wanted()
    f = ft.compile(scale, backend="llvm")
    m = rng.random((30, 60))
    tiny = np.full((3, 4), np.finfo(np.float64).smallest_subnormal * 3)
    for _, state in _states():
        _same(_run(f, (m,), state), _run(scale, (m,), state))
        _same(_run(f, (tiny,), state), _run(scale, (tiny,), state))


def fma(x, y, z):
    x += y * z
    return x


def test_a_flag_check_replaces_the_saved_copy():
    """`x += y * z`: NumPy reports the multiply's flags before it writes x (under "raise" x
    stays as it was), so the kernel runs a check first (the same work, its stores into x
    dropped), and the wrapper copies nothing."""
    t = Traced(fma, A(("n",)), A(("n",)), A(("n",)))
    assert [k.name for k in t.run.kernels] == ["k0", "k0_check"]
    assert "keep := keep_bits(keep, add(b0[i0], multiply(b1[i0], b2[i0]):float64):float64):int64" in t.run.loop_ir
    assert "_fb.check_wanted()" in t.run.source
    assert "_fb.snapshot(" not in t.run.source                   # nothing to copy
    f = ft.compile(fma, backend="llvm")
    for n in (10, 5000):
        x, y = _data("over", n)
        z = np.full(n, 2.0)
        t.check(x, y, z)
        for _, state in _states():
            _same(_run(f, (x, y, z), state), _run(fma, (x, y, z), state))


def test_raise_leaves_the_destination_as_numpy_does():
    """NumPy writes `x += y` and then raises: so does the redo (np.add(x, y, out=x))."""
    for fn in (iadd, shifted, sgd_step):
        f = ft.compile(fn, backend="llvm")
        x, y = _data("over", 5000)
        _same(_run(f, (x, y), {"all": "raise"}), _run(fn, (x, y), {"all": "raise"}))
        x, y = _data("invalid", 7)
        _same(_run(f, (x, y), {"over": "raise", "invalid": "raise"}),
              _run(fn, (x, y), {"over": "raise", "invalid": "raise"}))


@pytest.mark.parametrize("n", [5, 64, 300])
def test_masked_writes_into_views(n):
    f = ft.compile(fill_masked, backend="llvm")
    z = rng.integers(0, 5, (n, n))
    mask = rng.random((n - 2, n)) < 0.3
    _same(_run(f, (z, mask), {}), _run(fill_masked, (z, mask), {}))


def life(z):
    n = (z[0:-2, 0:-2] + z[0:-2, 1:-1] + z[0:-2, 2:] + z[1:-1, 0:-2] + z[1:-1, 2:]
         + z[2:, 0:-2] + z[2:, 1:-1] + z[2:, 2:])
    birth = (n == 3) & (z[1:-1, 1:-1] == 0)
    survive = ((n == 2) | (n == 3)) & (z[1:-1, 1:-1] == 1)
    z[...] = 0
    z[1:-1, 1:-1][birth | survive] = 1
    return z


@pytest.mark.parametrize("dynamic", [False, True])
def test_life_stores_the_masks_not_the_partial_sums(compiled_graphs, dynamic):
    """Values read after `z[...] = 0` are stored before it; only what is read after the write
    (the two masks), not every partial sum of the neighbour count."""
    f = ft.compile(life, backend="llvm", dynamic=dynamic)
    for n in (34, 34, 51):
        z = (rng.random((n, n)) < 0.4).astype(np.int64)
        _same(_run(f, (z,), {}), _run(life, (z,), {}))
    stored = [n for s in compiled_graphs[0].steps for n in getattr(s, "allocs", [])]
    assert [n.dtype.name for n in stored] == ["bool", "bool"], stored


def test_numpy_never_reports_for_the_ops_the_flag_analysis_calls_quiet():
    a = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-310, 1e308, 1.0] * 3)
    with np.errstate(all="raise"):
        for name in fpflags._NEVER_REPORTED - {"clip_scalar", "argbetter_max", "argbetter_min"}:
            if name == "clip":
                np.clip(a, a[::-1], 1.0)
            else:
                for b in (a, a[::-1], np.nan, 0.0):
                    getattr(np, name)(a, b)


def scaled_rows(cov, data, n):
    """The flag-raising work (a division) comes before the writes (plain copies into cov): the
    flags are tested once, before the first write, and nothing is copied or checked."""
    r = data.T @ data / (n - 1.0)
    cov[0, :] = r[0]
    cov[1:, 0] = r[1:, 0]
    return cov


def test_flags_raised_before_the_first_write_need_no_copy(compiled_graphs):
    f = ft.compile(scaled_rows, backend="llvm")
    data = rng.standard_normal((7, 5))
    for n in (7.0, 1.0, 7.0):                  # n - 1 == 0: divide by zero
        for _, state in _states():
            cov = np.zeros((5, 5))
            _same(_run(f, (cov, data, n), state), _run(scaled_rows, (cov, data, n), state))
    assert "if _fpw.value and _fb.flagged(): return _fb.run(" in compiled_graphs[0].source
    assert "_fb.snapshot(" not in compiled_graphs[0].source


def test_masked_write_with_related_sizes_is_one_kernel(compiled_graphs):
    """mask.shape == z[1:-1, 1:-1].shape is learnt while tracing (a size replacement): the input's
    shape is rewritten with it (passes/sizes.py), so the masked write is a kernel, not NumPy's
    where, for every size of one dynamic graph."""
    f = ft.compile(fill_masked2, backend="llvm", dynamic=True)
    for n in (5, 17, 40):
        z = rng.integers(0, 5, (n, n))
        mask = rng.random((n - 2, n - 2)) < 0.4
        _same(_run(f, (z, mask), {}), _run(fill_masked2, (z, mask), {}))
    assert len(compiled_graphs) == 1 and "_op_where" not in compiled_graphs[0].source
    assert "where(" in compiled_graphs[0].loop_ir


def fill_masked2(z, mask):
    z[...] = 0
    z[1:-1, 1:-1][mask] = 1
    return z


def fill_views(z):
    z[::2, 1:] = 0
    z.T[-1] = 0
    z[:, 0] = 0.0
    z[1:3] = 0
    return z


@pytest.mark.parametrize("order", ["C", "F"])
def test_zero_fills_of_views(order):
    """`z[...] = 0` into views (native entry: memset per dense row or of the whole region)."""
    f = ft.compile(fill_views, backend="llvm")
    for shape in ((4, 5), (7, 3), (64, 64)):
        z = np.asarray(rng.standard_normal(shape), order=order)
        _same(_run(f, (z,), {}), _run(fill_views, (z,), {}))
        zi = np.asarray(rng.integers(1, 9, shape), order=order)
        _same(_run(f, (zi,), {}), _run(fill_views, (zi,), {}))


def _natives(fn):
    from csrc_free_runtime import all_caches
    return [e.native for c in all_caches() if c.fn is fn for e in c.entries if e.native is not None]


def scale_by(m, c):
    m *= c
    return m


def iadd_mixed(x, y):
    x += y
    return x


@pytest.mark.parametrize("dynamic", [False, True])
def test_a_lone_inplace_ufunc_is_numpys_call_where_its_check_would_read_twice(dynamic):
    """`m *= c` alone with c a Python float argument and m float32 (c is rounded into float32:
    the kernel may not write first), its check wanted (the default state reports overflow):
    from native_fp.lone_ufunc_min elements the native entry calls np.multiply(m, c, m) itself
    (one pass, NumPy's reports by construction) instead of check + kernel (two); below, check +
    kernel. Every error state, every size, with and without a flag."""
    from frametrace.backends.llvm import native_fp
    for fn, make in ((scale_by, lambda kind, n: (_data(kind, n, "f4")[0], 1e38 if kind == "over" else 0.5)),):
        f = ft.compile(fn, backend="llvm", dynamic=dynamic)
        for n in (5, 2000, 3600, 12000):
            for kind in ("clean", "over", "invalid", "under"):
                args = make(kind, n)
                for _, state in _states():
                    _same(_run(f, args, state), _run(fn, args, state))
        natives = _natives(fn)
        assert natives and all(nt.hits > 0 for nt in natives)
        assert any("lonnp" in nt.ir for nt in natives)
    assert native_fp.lone_ufunc_min((np.add, [], None, 16)) == native_fp.LONE_UFUNC_BYTES // 16


def test_a_lone_inplace_ufunc_on_overlapping_and_strided_operands():
    """NumPy's call handles what NumPy handles: the same array twice, overlapping views passed
    as two arguments, Fortran-ordered and reversed operands, above and below the threshold."""
    f = ft.compile(iadd, backend="llvm", dynamic=True)
    for n in (40, 9000):
        a, _ = _data("over", n + 1)
        cases = [(a[:-1], a[:-1]), (a[:-1], a[1:]), (a[1:], a[:-1]), (a[::-1], a)]
        m = np.asfortranarray(rng.standard_normal((n // 20 + 2, 20)))
        m[1, 3] = np.finfo(np.float64).max
        cases += [(m, m * 0.5), (m, m[::-1])]
        for x, y in cases:
            for _, state in _states():
                base = x.base if x.base is not None else x

                def run(fn, x=x, y=y, base=base, state=state):
                    keep = base.copy()
                    out = _run(lambda: fn(x, y), (), state)
                    after = base.copy()
                    base[...] = keep
                    return out, after
                (got, got_after), (want, want_after) = run(f), run(iadd)
                _same(got, want)
                np.testing.assert_array_equal(got_after, want_after)


def test_the_error_state_answer_follows_seterr_between_calls():
    """The native entry keeps its answer per error state (GraphFlags.snapshot_wanted): np.seterr
    between calls, nested errstate blocks and a restored state each get their own answer."""
    f = ft.compile(iadd, backend="llvm")
    old = np.geterr()
    try:
        for n in (100, 5000):
            for modes in ({"over": "raise"}, {"over": "ignore"}, {"over": "warn"}, {"all": "ignore"},
                          {"over": "raise"}):
                np.seterr(**modes)
                x, y = _data("over", n)
                _same(_run(f, (x, y), {}), _run(iadd, (x, y), {}))
                with np.errstate(over="ignore"):
                    _same(_run(f, (x, y), {}), _run(iadd, (x, y), {}))
                _same(_run(f, (x, y), {}), _run(iadd, (x, y), {}))
    finally:
        np.seterr(**old)


def isub(x, y):
    x -= y
    return x


def imul(x, y):
    x *= y
    return x


def ufunc_out(x, y):
    np.divide(x, y, out=x)
    return x


def scaled_view(x):
    x[1:-1] *= 1e-300
    return x


def _views(x):
    """x itself and views of it a destination may be: strided, reversed, Fortran-ordered."""
    yield x
    yield x[::-2]
    m = np.asfortranarray(x[: len(x) // 3 * 3].reshape(3, -1)) if len(x) >= 3 else x
    yield m
    yield m.T[::-1]


def _ops_data(kind, n, dt, fn):
    x, y = _data("clean" if n == 0 else "over" if n < 3 and kind == "all" else kind, n, dt)
    if kind == "specials" and n >= 4:        # NaN, inf, -0.0: quiet for + - * /, except what NumPy flags
        x[:4], y[:4] = [np.nan, np.inf, -0.0, 0.0], [1.0, np.inf, -0.0, -0.0]
    if fn in (imul, ufunc_out) and kind == "under":
        x[:], y[:] = np.finfo(np.dtype(dt)).tiny, 0.25 if fn is imul else 4.0
    if fn is isub and kind == "over":
        y = -y
    return x, y


@pytest.mark.parametrize("dt", ["f8", "f4"])
@pytest.mark.parametrize("fn", [iadd, isub, imul, idiv, ufunc_out])
def test_one_ufunc_writes_then_reports_as_numpy_does(fn, dt, compiled_graphs, capfd):
    """A graph that is one in-place ufunc (NumPy writes its whole output, then reports): the
    kernel writes and NumPy reports afterwards what it flagged, in every error state: under
    "raise" the destination is written and FloatingPointError raised, as NumPy leaves it; no
    flag check, no saved copy, no NumPy redo. Sizes 0, 1, odd and large; contiguous, strided,
    reversed and Fortran destinations; NaN, inf, -0.0; each kind NumPy reports."""
    f = ft.compile(fn, backend="llvm", dynamic=True)
    for n in (0, 1, 37, 4097):
        for kind in ("clean", "over", "invalid", "divide", "under", "all", "specials"):
            x0, y0 = _ops_data(kind, n, dt, fn)
            for x, y in zip(_views(x0), _views(y0)):
                for name, state in _states():
                    want = _run(fn, (x, y), state)
                    want_out = capfd.readouterr().out
                    got = _run(f, (x, y), state)
                    assert capfd.readouterr().out == want_out, (kind, name)
                    _same(got, want)
    for run in compiled_graphs:
        assert [k.name for k in run.kernels] == ["k0"]           # no check kernel
        assert "_fb.snapshot(" not in run.source and "_fb.check_wanted()" not in run.source
        assert "_aw_" in run.source
    natives = _natives(fn)
    assert natives and all(nt.hits > 0 and "awset" in nt.ir and "lonnp" not in nt.ir for nt in natives)


@pytest.mark.parametrize("fn", [iadd, imul, idiv])
def test_the_handler_sees_the_destination_written(fn):
    """NumPy calls the error handler (and warns) after its one ufunc call wrote x: a handler
    that looks at x sees the new values, from the compiled call too."""
    f = ft.compile(fn, backend="llvm")
    for n in (3, 5000):
        x0, y0 = _data("all", n)
        x0[-1], y0[-1] = np.finfo(np.float64).tiny, 1e-300
        for _ in range(2):                    # the Python path, then the native entry
            for g in (fn, f):
                x, y = x0.copy(), y0.copy()
                seen = []

                def handler(kind, bits, x=x, seen=seen):
                    seen.append((kind, bits, x.copy()))
                with np.errstate(all="call", call=handler):
                    g(x, y)
                if g is fn:
                    want = seen
                else:
                    assert [(k, b) for k, b, _ in seen] == [(k, b) for k, b, _ in want]
                    for (_, _, a), (_, _, b) in zip(seen, want):
                        np.testing.assert_array_equal(a, b)


def test_a_warnings_filter_error_raises_after_the_write():
    """warnings.simplefilter("error"): NumPy's RuntimeWarning is raised after x += y wrote x,
    and a later call (the native entry) again."""
    f = ft.compile(iadd, backend="llvm")
    for n in (5, 5000):
        x0, y0 = _data("over", n)
        for _ in range(2):
            results = []
            for g in (iadd, f):
                x, y = x0.copy(), y0
                with warnings.catch_warnings():
                    warnings.simplefilter("error")
                    with pytest.raises(RuntimeWarning, match="overflow encountered in add"):
                        g(x, y)
                results.append(x)
            np.testing.assert_array_equal(*results)
            assert not np.array_equal(results[0], x0)             # written before the raise


def _adjacent_max(n):
    x = rng.standard_normal(n)
    x[n // 2: n // 2 + 2] = np.finfo(np.float64).max
    return x


def test_overlapping_views_keep_the_check_constants_write_then_report(compiled_graphs):
    """x[1:] += x[:-1]: NumPy computes into a temporary output and reports before copying it
    into x (under "raise" x stays as it was), so the kernel may not write first: the check
    stays. x[1:-1] *= 1e-300 (underflow only): written, then reported, in every state. A
    constant float32 cannot hold exactly keeps the check (flag_checks._report_after_write)."""
    for fn, make, after in ((overlapping, lambda: _adjacent_max(41), False),
                            (overlapping, lambda: _adjacent_max(5001), False),
                            (scaled_view, lambda: np.full(9, np.finfo(np.float64).tiny), True)):
        f = ft.compile(fn, backend="llvm")
        for _ in range(2):
            for _, state in _states():
                x = make()
                _same(_run(f, (x,), state), _run(fn, (x,), state))
        assert ("_aw_" in compiled_graphs[-1].source) == after
        assert ("_fb.check_wanted()" in compiled_graphs[-1].source) == (not after)
    f = ft.compile(scale, backend="llvm")
    m = np.full((3, 4), np.finfo(np.float32).tiny, dtype=np.float32)        # 0.995 is no float32
    for _, state in _states():
        _same(_run(f, (m,), state), _run(scale, (m,), state))
    assert "_aw_" not in compiled_graphs[-1].source


def ifloordiv(x, y):
    x //= y
    return x


@pytest.mark.parametrize("dt", ["i8", "i4", "u2"])
def test_integer_updates_in_every_error_state(dt):
    """Integers raise no FP flag: `x += y` wraps silently as in NumPy; `x //= y` by zero warns
    "divide by zero" (and gives 0), INT_MIN // -1 "overflow", in every state."""
    fa, fd = ft.compile(iadd, backend="llvm"), ft.compile(ifloordiv, backend="llvm")
    info = np.iinfo(dt)
    for n in (1, 9, 3000):
        x = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        y = rng.integers(1, min(info.max, 50), n, dtype=dt)
        y[n // 2] = 0
        if info.min < 0 and n > 1:
            x[0], y[0] = info.min, -1
        for _, state in _states():
            _same(_run(fa, (x, y), state), _run(iadd, (x, y), state))
            _same(_run(fd, (x, y), state), _run(ifloordiv, (x, y), state))


@pytest.mark.parametrize("dx,dy", [("f8", "f4"), ("f8", "i4"), ("f4", "u1"), ("f8", "?")])
def test_an_operand_widened_exactly_still_writes_then_reports(dx, dy, compiled_graphs):
    """x float64 += y float32 / int32 (x float32 += y uint8), x /= y: NumPy casts y in its
    buffers and writes x directly, then reports; so does the kernel (no check), in every state."""
    f, fd = ft.compile(iadd, backend="llvm"), ft.compile(idiv, backend="llvm")
    for kind in ("clean", "over", "invalid", "divide"):
        x = _data(kind, 300, dx)[0]
        y = (_data(kind, 300, dy)[1] if np.dtype(dy).kind == "f" else
             rng.integers(0, 2 if dy == "?" else 100, 300).astype(dy))
        if kind == "over":                    # x / y overflows
            x[5] = np.finfo(np.dtype(dx)).max
            y[5] = np.finfo(np.dtype(dy)).tiny if np.dtype(dy).kind == "f" else 1
        for _, state in _states():
            _same(_run(f, (x, y), state), _run(iadd, (x, y), state))
            _same(_run(fd, (x, y), state), _run(idiv, (x, y), state))
    assert len(compiled_graphs) == 2 and all("_aw_" in r.source and len(r.kernels) == 1 for r in compiled_graphs)


def imod(x, y):
    x %= y
    return x


def ifmod(x, y):
    np.fmod(x, y, out=x)
    return x


def _int_views(x):
    yield x
    yield x[::-3]
    if len(x) >= 4:
        yield np.asfortranarray(x[: len(x) // 2 * 2].reshape(2, -1))


@pytest.mark.parametrize("dt", ["i8", "i4", "i1", "u2", "u8"])
@pytest.mark.parametrize("fn", [ifloordiv, imod, ifmod])
def test_integer_divisions_write_then_report(fn, dt, compiled_graphs, capfd):
    """`x //= y`, `x %= y`, np.fmod(x, y, out=x) on integers: NumPy computes every element
    (x // 0 == 0), then reports "divide by zero" (and MIN // -1 "overflow"); so does the kernel,
    with no check kernel and no saved copy, in every error state, on views, sizes 0/1/odd/large,
    divisors mixed with a narrower integer dtype."""
    f = ft.compile(fn, backend="llvm", dynamic=True)
    info = np.iinfo(dt)
    for n in (0, 1, 9, 5001):
        for kind in ("clean", "divide", "min", "both"):
            x = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
            y = rng.integers(1, min(info.max, 60), n, dtype=dt)
            if info.min < 0:
                y[::4] *= -1
            if n and kind in ("divide", "both"):
                y[n // 2] = 0
            if n > 1 and kind in ("min", "both") and info.min < 0:
                x[-1], y[-1] = info.min, -1
            for xv, yv in zip(_int_views(x), _int_views(y)):
                for name, state in _states():
                    want = _run(fn, (xv, yv), state)
                    want_out = capfd.readouterr().out
                    got = _run(f, (xv, yv), state)
                    assert capfd.readouterr().out == want_out, (kind, name)
                    _same(got, want)
    y8 = rng.integers(-5, 6, 40).astype(np.int8) if info.min < 0 else rng.integers(0, 6, 40).astype(np.uint8)
    x = rng.integers(info.min, info.max, 40, dtype=dt, endpoint=True)
    for _, state in _states():                     # a narrower divisor, widened exactly
        _same(_run(f, (x, y8), state), _run(fn, (x, y8), state))
    assert compiled_graphs
    for run in compiled_graphs:
        assert len(run.kernels) == 1 and "_aw_" in run.source, run.source
        assert "_fb.snapshot(" not in run.source and "_fb.check_wanted()" not in run.source
    natives = _natives(fn)
    assert natives and all(nt.hits > 0 and "awset" in nt.ir for nt in natives)


@pytest.mark.parametrize("fn", [iadd_mixed, isub, imul, idiv, ufunc_out])
def test_float64_results_narrowed_into_float32_write_then_report(fn, compiled_graphs, capfd):
    """x float32 (+= -= *= /=) y float64: NumPy computes in float64, casts into x in its buffers
    and reports the cast's overflow / underflow as the ufunc's, after the whole of x is written
    (also past its buffer size); so does the kernel (no check, no NumPy call), in every error
    state, on views, with NaN, inf, -0.0 and values that overflow or underflow only as float32."""
    f = ft.compile(fn, backend="llvm", dynamic=True)
    for n in (0, 1, 37, 2 * np.getbufsize() + 5):
        for kind in ("clean", "over", "invalid", "divide", "under", "all", "specials", "narrow"):
            x0, y0 = _ops_data(kind if kind != "narrow" else "clean", n, "f4", fn)
            y0 = y0.astype(np.float64)
            if kind == "narrow" and n:
                y0[0] = 1e39 if fn in (iadd_mixed, isub) else 1e-60      # fits float64, not float32
                y0[-1] = -1e39 if fn is not isub else 1e39
            for x, y in zip(_views(x0), _views(y0)):
                for name, state in _states():
                    want = _run(fn, (x, y), state)
                    want_out = capfd.readouterr().out
                    got = _run(f, (x, y), state)
                    assert capfd.readouterr().out == want_out, (kind, name)
                    _same(got, want)
    for run in compiled_graphs:
        assert [k.name for k in run.kernels] == ["k0"] and "_aw_" in run.source
        assert "_fb.snapshot(" not in run.source and "_fb.check_wanted()" not in run.source
    natives = _natives(fn)
    assert natives and all(nt.hits > 0 and "awset" in nt.ir and "lonnp" not in nt.ir for nt in natives)


def test_probes_answer_only_what_numpy_reports_after_writing():
    """The probes exist for the integer divisions and the float64 -> float32 narrowing, and for
    nothing whose report NumPy makes differently (float16, complex, a widening destination)."""
    from frametrace.backends.llvm import fp_probes
    from frametrace.codegen.llvm_kernels import fpflags
    every = fpflags.REPORTED
    assert fp_probes.Probes.build(np.floor_divide, "i8", fpflags.DIVIDE | fpflags.OVERFLOW) is not None
    assert fp_probes.Probes.build(np.remainder, "u4", fpflags.DIVIDE | fpflags.OVERFLOW) is not None
    assert fp_probes.Probes.build(np.add, "f8", every & ~fpflags.DIVIDE, "f4") is not None
    assert fp_probes.Probes.build(np.divide, "f8", every, "f4") is not None
    assert fp_probes.Probes.build(np.add, "f2", fpflags.OVERFLOW) is None
    assert fp_probes.Probes.build(np.add, "c16", fpflags.OVERFLOW) is None
    assert fp_probes.Probes.build(np.add, "f4", fpflags.OVERFLOW, "f8") is None
    assert fp_probes.Probes.build(np.add, "i8", fpflags.OVERFLOW) is None
    p = fp_probes.Probes.build(np.floor_divide, "i4", fpflags.DIVIDE | fpflags.OVERFLOW)
    for flags, message in ((fpflags.DIVIDE, "divide by zero encountered in floor_divide"),
                           (fpflags.OVERFLOW, "overflow encountered in floor_divide")):
        with np.errstate(all="raise"), pytest.raises(FloatingPointError, match=message):
            p.report(flags)
