"""Shape-env guards are records: a sympy expression plus Symbol -> Source. The Python check
(shapes/printer.guard_source over Source code), the native check (native_guards.Translator.sym,
the expression tree straight to LLVM IR) and the user text are generated from the record; on
random size values the two checks agree with evaluating the expression itself in sympy."""
import numpy as np
import pytest
import sympy
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import frametrace as ft
from csrc_free_runtime.native import AVAILABLE, NATIVE_MISS
from frametrace.backends.llvm.native_entry import build_native_entry
from frametrace.errors import Unsupported
from frametrace.guards.builder import GuardBuilder
from frametrace.guards.kinds import GuardKind
from frametrace.guards.python_check import guard_code
from frametrace.shapes import ShapeEnv
from frametrace.shapes.functions import FloorDiv, PythonMod
from frametrace.shapes.records import ShapeGuardCode
from frametrace.sources import LocalSource, ShapeSource
from frametrace.trace.entry import build_entry

X, N = LocalSource("x"), LocalSource("n")
S0 = sympy.Symbol("s0", integer=True, nonnegative=True)
S1 = sympy.Symbol("s1", integer=True, nonnegative=True)
K = sympy.Symbol("k", integer=True)                        # an int argument: may be negative
SOURCES = {S0: ShapeSource(X, 0), S1: ShapeSource(X, 1), K: N}
MISS = object()


def _combine(children):
    binary = st.tuples(children, children)
    return st.one_of(
        binary.map(lambda ab: ab[0] + ab[1]),
        binary.map(lambda ab: ab[0] - ab[1]),
        binary.map(lambda ab: ab[0] * ab[1]),
        binary.map(lambda ab: _safe(FloorDiv, *ab)),
        binary.map(lambda ab: _safe(PythonMod, *ab)),
        binary.map(lambda ab: sympy.Min(*ab)),
        binary.map(lambda ab: sympy.Max(*ab)),
        children.map(lambda a: -a),
        children.map(lambda a: sympy.Abs(a)),
        st.tuples(children, DIVISORS).map(lambda ad: sympy.floor(ad[0] / ad[1])),
        st.tuples(children, DIVISORS).map(lambda ad: sympy.ceiling(ad[0] / ad[1])),
    )


DIVISORS = st.sampled_from([-3, -2, 2, 3, 5]).map(sympy.Integer)


def _safe(fn, a, b):
    """fn(a, b), or `a` when sympy proves b is zero (construction would raise)."""
    try:
        return fn(a, b)
    except ZeroDivisionError:
        return a


ATOMS = st.one_of(st.sampled_from([S0, S1, K]), st.integers(-7, 7).map(sympy.Integer))
INTS = st.recursive(ATOMS, _combine, max_leaves=6)
RELS = [sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge]
COMPARISONS = st.builds(lambda rel, a, b: rel(a, b), st.sampled_from(RELS), INTS, INTS)
BOOLS = st.recursive(COMPARISONS, lambda c: st.one_of(
    st.tuples(c, c).map(lambda ab: sympy.And(*ab)),
    st.tuples(c, c).map(lambda ab: sympy.Or(*ab)),
    c.map(sympy.Not)), max_leaves=3)


def _record(expr, kind="guard"):
    names = {s: SOURCES[s].name for s in expr.free_symbols}
    return ShapeGuardCode(str(expr), expr, None, kind, names)


def _builder(expr):
    b = GuardBuilder()
    b.type(X, np.ones((1, 1)))
    b.ndim(X, 2)
    b.type(N, 1)
    sg = _record(expr)
    b.shape_env(sg, {src.name: src for src in SOURCES.values()})
    return b


def _sympy_truth(expr, s0, s1, k):
    """The expression itself at these values (None: some division by zero in it)."""
    try:
        got = expr.xreplace({S0: sympy.Integer(s0), S1: sympy.Integer(s1), K: sympy.Integer(k)})
    except ZeroDivisionError:
        return None
    got = sympy.simplify(got) if got not in (sympy.true, sympy.false) else got
    assert got in (sympy.true, sympy.false), got
    return got is sympy.true


def _checks(b):
    ns = dict(b.namespace, ___MISS=MISS, ___G={})
    _, check, _ = build_entry(("x", "n"), b.guards, [], None, [], "True", ns)
    entry = build_native_entry(("x", "n"), b.guards, [], None, [], "True", ns, None, None, "t") \
        if AVAILABLE else None
    return check, entry


@settings(max_examples=150, deadline=None)
@given(expr=BOOLS, values=st.lists(st.tuples(st.integers(0, 12), st.integers(0, 12), st.integers(-12, 12)),
                                   min_size=1, max_size=6))
def test_python_native_and_sympy_agree(expr, values):
    assume(expr not in (sympy.true, sympy.false))
    b = _builder(expr)
    check, entry = _checks(b)
    assert entry is not None or not AVAILABLE, expr        # every integer guard compiles natively
    for s0, s1, k in values:
        want = _sympy_truth(expr, s0, s1, k)
        x = np.ones((s0, s1))
        if want is None:      # Python's and/or may skip the zero division; native always misses (safe)
            assert entry is None or entry.fn(x, k) is NATIVE_MISS
            continue
        assert check(x, k) is want, (expr, s0, s1, k, guard_code(b.guards[-1]))
        if entry is not None:
            assert (entry.fn(x, k) is not NATIVE_MISS) is want, (expr, s0, s1, k)


def test_native_misses_where_python_would_go_past_64_bits():
    if not AVAILABLE:
        pytest.skip("native entries need CPython's C API through ctypes")
    expr = sympy.Gt(K * K * K, 0)
    check, entry = _checks(_builder(expr))
    big = 2_000_000                                          # k**3 == 8e18 fits in int64
    assert check(np.ones((1, 1)), big) and entry.fn(np.ones((1, 1)), big) is not NATIVE_MISS
    huge = 2 ** 22                                           # k**3 == 2**66: Python is exact, native misses
    assert check(np.ones((1, 1)), huge) and entry.fn(np.ones((1, 1)), huge) is NATIVE_MISS


def test_text_and_code_come_from_expression_and_sources():
    b = GuardBuilder()
    env = ShapeEnv()
    a = env.create_symbol(10, "L['x'].shape[0]")
    env.create_symbol(10, "L['y'].shape[0]")                 # duck sized with x
    c = env.create_symbol(7, "L['z'].shape[0]")
    assert (a + 2 * c) // 3 < 30                              # records a guard
    sources = {f"L[{n!r}].shape[0]": ShapeSource(LocalSource(n), 0) for n in "xyz"}
    for sg in env.produce_guards():
        g = b.shape_env(sg, sources)
        assert g.kind is GuardKind.SHAPE_ENV and g.name == sg.code
        assert set(g.sources.values()) <= set(sources.values())
    names = [g.name for g in b.guards]
    codes = [g.code for g in b.guards]
    assert "L['x'].shape[0] == L['y'].shape[0]" in names
    assert "x.shape[0] == y.shape[0]" in codes
    assert "2 <= L['x'].shape[0]" in names and "2 <= x.shape[0]" in codes
    assert "((L['x'].shape[0] + (2 * L['z'].shape[0])) // 3) < 30" in names
    assert "((x.shape[0] + (2 * z.shape[0])) // 3) < 30" in codes


def test_specialised_size_reads_each_source():
    env = ShapeEnv()
    a = env.create_symbol(10, "L['x'].shape[0]")
    env.create_symbol(10, "L['y'].shape[0]")
    assert a == 10                                            # specialises s0 for both sources
    texts = [sg.code for sg in env.produce_guards()]
    assert "L['x'].shape[0] == 10" in texts and "L['y'].shape[0] == 10" in texts


def _branchy(x, y):
    if x.shape[0] // 3 > y.shape[0] % 4:
        return x * 2
    return y - 1


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_compiled_shape_guards_with_floordiv_and_mod_serve_and_miss(backend):
    f = ft.compile(_branchy, dynamic=True, backend=backend)
    rng = np.random.default_rng(1)
    ft.reset()
    outcomes = set()
    for _ in range(25):
        x, y = rng.random(rng.integers(2, 20)), rng.random(rng.integers(21, 40))   # never duck sized
        outcomes.add(x.shape[0] // 3 > y.shape[0] % 4)
        np.testing.assert_array_equal(f(x, y), _branchy(x, y))
    entries = f._frametrace_cache.entries
    assert ft.stats().frames_compiled == len(entries) == len(outcomes)      # one entry per branch side
    texts = [g.name for e in entries for g in e.info.guards if g.kind is GuardKind.SHAPE_ENV]
    assert any(t.startswith("(L['x'].shape[0] // 3)") and "(L['y'].shape[0] % 4)" in t for t in texts), texts
    assert all(g.sources for e in entries for g in e.info.guards if g.kind is GuardKind.SHAPE_ENV)
    if backend == "llvm" and AVAILABLE:
        assert all(e.native is not None for e in entries)                    # floordiv/mod guards compile
        assert sum(e.native.hits for e in entries) > 0


def _special(x, y):
    if x.shape[0] == 4096:
        return x * y + x
    return x - y * 2


@pytest.mark.parametrize("backend", ["llvm", "numpy"])
def test_specialised_duck_sized_sources_are_each_guarded(backend):
    f = ft.compile(_special, dynamic=True, backend=backend)
    ft.reset()
    sized = (np.arange(4096.0), np.arange(4096.0) * 2)
    np.testing.assert_array_equal(f(*sized), _special(*sized))
    (entry,) = f._frametrace_cache.entries
    texts = [g.name for g in entry.info.guards if g.kind is GuardKind.SHAPE_ENV]
    assert "L['x'].shape[0] == 4096" in texts and "L['y'].shape[0] == 4096" in texts, texts
    y_guard = next(g for g in entry.info.guards if g.name == "L['y'].shape[0] == 4096")
    assert set(y_guard.sources.values()) == {ShapeSource(LocalSource("y"), 0)}
    assert entry.check(np.ones(4096), np.ones(4096)) and not entry.check(np.ones(4096), np.ones(4097))
    if AVAILABLE:         # the entry's guards alone, compiled natively (the graph may run as NumPy)
        info = entry.info
        native = build_native_entry(info.argnames, info.guards, [], None, [], "True",
                                    dict(info.namespace), None, None, "t")
        assert native.fn(np.ones(4096), np.ones(4096)) is not NATIVE_MISS
        assert native.fn(np.ones(4096), np.ones(4097)) is NATIVE_MISS
        assert native.fn(np.ones(4097), np.ones(4097)) is NATIVE_MISS
    for n, m in ((4096, 4096), (4097, 4097), (4098, 4098)):
        x, y = np.arange(float(n)), np.ones(m)
        np.testing.assert_array_equal(f(x, y), _special(x, y))
    assert ft.stats().frames_compiled == 2


def test_a_fact_over_a_source_no_input_provides_is_unsupported():
    env = ShapeEnv()
    a = env.create_symbol(10, "L['x'].shape[0]")
    assert (a // 4) > 1                                        # a guard over L['x'].shape[0]
    with pytest.raises(Unsupported, match="no input"):
        for sg in env.produce_guards():
            GuardBuilder().shape_env(sg, {})


SIZE_NAMES = ("L['x'].shape[0]", "L['x'].shape[1]", "L['y'].shape[0]")
SIZE_SOURCES = {ShapeSource(X, 0).name: ShapeSource(X, 0), ShapeSource(X, 1).name: ShapeSource(X, 1),
                ShapeSource(LocalSource("y"), 0).name: ShapeSource(LocalSource("y"), 0)}
FACTS = st.lists(st.tuples(st.sampled_from(["lt", "eq", "ne", "floordiv", "mod", "min"]),
                           st.integers(0, 2), st.integers(0, 2), st.integers(1, 6)), max_size=4)


def _facts_env(hints, facts):
    """A ShapeEnv that traced `facts` (comparisons of sizes) at sizes `hints`."""
    env = ShapeEnv()
    vals = [env.create_symbol(h, n) for h, n in zip(hints, SIZE_NAMES)]
    for op, i, j, k in facts:
        a, b = vals[i], vals[j]
        if op == "lt":
            bool(a + k < b)
        elif op == "eq":
            bool(a == b + k)
        elif op == "ne":
            bool(a != k)
        elif op == "floordiv":
            bool(a // k >= b - k)
        elif op == "mod":
            bool(a % k == b % k)
        else:
            bool(min(a, b + k) > k)
    return env


@settings(max_examples=60, deadline=None)
@given(hints=st.tuples(*[st.integers(0, 9)] * 3), facts=FACTS,
       probes=st.lists(st.tuples(*[st.integers(0, 9)] * 3), min_size=1, max_size=5))
def test_produced_guards_python_native_and_sympy_agree(hints, facts, probes):
    env = _facts_env(hints, facts)
    b = GuardBuilder()
    b.type(X, np.ones((1, 1)))
    b.ndim(X, 2)
    b.type(LocalSource("y"), np.ones(1))
    b.ndim(LocalSource("y"), 1)
    records = [b.shape_env(sg, SIZE_SOURCES) for sg in env.produce_guards()]
    for g in records:
        assert g.name == g.payload.code                        # the text users read is unchanged
    ns = dict(b.namespace, ___MISS=MISS, ___G={})
    _, check, _ = build_entry(("x", "y"), b.guards, [], None, [], "True", ns)
    native = build_native_entry(("x", "y"), b.guards, [], None, [], "True", ns, None, None, "t") \
        if AVAILABLE else None
    for sizes in [hints] + probes:
        x, y = np.ones(sizes[:2]), np.ones(sizes[2])
        by_name = dict(zip(SIZE_NAMES, sizes))
        want = all(g.payload.expr.xreplace({s: sympy.Integer(by_name[src.name]) for s, src in g.sources.items()})
                   is sympy.true for g in records)
        assert want or sizes != hints, "an entry's guards hold for the sizes it was traced at"
        assert check(x, y) is want, (sizes, [g.name for g in records])
        if native is not None:
            assert (native.fn(x, y) is not NATIVE_MISS) is want, (sizes, [g.name for g in records])
    if native is not None or not AVAILABLE:
        return
    pytest.fail("integer shape guards must compile natively")
