"""Loop nests and long loop bodies stay loop nodes (trace/loops.py, loop_plan.py, shapes/loop_index.py).

* A loop body longer than 255 code units: its FOR_ITER carries an EXTENDED_ARG prefix and the
  back edge jumps to that prefix (a 3-D stencil time loop, a fluid solver step). Such loops were
  unrolled whatever their trip count.
* A triangular nest three deep (`for k in range(j, i + 1)` inside `for j in range(i + 1)`)
  accumulating into a Python float `s = 0.0`: the float becomes a NumPy float in the first
  iteration; the outermost loop peels that iteration and the inner loops are nodes at once,
  their ranges known non-empty only through each other (j <= i - 1 inside range(j + 1, i + 1)).
Compared with plain Python/NumPy on random inputs, sizes 0 and 1, several dtypes, both backends.
"""
import dis

import numpy as np
import pytest
import sympy
from hypothesis import given, settings, strategies as st

import frametrace as ft
from frametrace.shapes import ShapeEnv
from helpers import BACKENDS, assert_same


def loops_and_lines(fn, *args, **kw):
    ft.reset()
    out = ft.explain(ft.compile(fn, **kw), *args)
    loops = sum(1 for g in out.graphs for n in g.nodes if n.op == "loop")
    return out.graph_count, loops, sum(len(str(g).splitlines()) for g in out.graphs)


def copied(args):
    return [a.copy() if isinstance(a, np.ndarray) else a for a in args]


# ---------------------------------------------------------------- a body past 255 code units

class Heat3D:
    """A 3-D heat equation stepped in place, written as NPBench's polybench kernel is."""

    def __init__(self, coef):
        self.coef = coef

    def sweep(self, dst, src):
        c = self.coef
        dst[1:-1, 1:-1, 1:-1] = (c * (src[2:, 1:-1, 1:-1] - 2.0 * src[1:-1, 1:-1, 1:-1] + src[:-2, 1:-1, 1:-1])
                                 + c * (src[1:-1, 2:, 1:-1] - 2.0 * src[1:-1, 1:-1, 1:-1] + src[1:-1, :-2, 1:-1])
                                 + c * (src[1:-1, 1:-1, 2:] - 2.0 * src[1:-1, 1:-1, 1:-1] + src[1:-1, 1:-1, :-2])
                                 + src[1:-1, 1:-1, 1:-1])


def heat(steps, A, B):
    c = 0.125
    for _ in range(1, steps):        # the two sweeps written out: the body is past 255 code units
        B[1:-1, 1:-1, 1:-1] = (c * (A[2:, 1:-1, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[:-2, 1:-1, 1:-1])
                               + c * (A[1:-1, 2:, 1:-1] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, :-2, 1:-1])
                               + c * (A[1:-1, 1:-1, 2:] - 2.0 * A[1:-1, 1:-1, 1:-1] + A[1:-1, 1:-1, :-2])
                               + A[1:-1, 1:-1, 1:-1])
        A[1:-1, 1:-1, 1:-1] = (c * (B[2:, 1:-1, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[:-2, 1:-1, 1:-1])
                               + c * (B[1:-1, 2:, 1:-1] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, :-2, 1:-1])
                               + c * (B[1:-1, 1:-1, 2:] - 2.0 * B[1:-1, 1:-1, 1:-1] + B[1:-1, 1:-1, :-2])
                               + B[1:-1, 1:-1, 1:-1])
    return A, B


def heat_with_state(steps, A, B, solver, log):
    total = 0.0
    for t in range(steps):           # a long body with a helper, a carried float and a dict entry
        solver.sweep(B, A)
        solver.sweep(A, B)
        total = total + float(A[1, 1, 1]) * 0.5 + float(B[1, 1, 1]) * 0.25 - 1e-3 * t
        log["last"] = A[1:-1, 1, 1].sum() + B[1, 1:-1, 1].sum() + A[1, 1, 1:-1].sum()
    return total


def test_the_long_body_has_an_extended_arg_prefix():
    """What the tests below rely on: the FOR_ITER of `heat` takes an EXTENDED_ARG."""
    ins = list(dis.get_instructions(heat))
    k = next(i for i, x in enumerate(ins) if x.opname == "FOR_ITER")
    assert ins[k - 1].opname == "EXTENDED_ARG"


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_long_loop_body_is_one_loop_node_at_every_trip_count(backend):
    rng = np.random.default_rng(0)
    sizes = set()
    for steps in (4, 9, 30):         # (one trip of 54 nodes is within the unroll budget)
        A = rng.random((6, 7, 5))
        B = A.copy()
        graphs, loops, lines = loops_and_lines(heat, steps, A.copy(), B.copy(), backend=backend, dynamic=False)
        assert (graphs, loops) == (1, 1)
        sizes.add(lines)
        got = ft.compile(heat, backend=backend, dynamic=False)(steps, A.copy(), B.copy())
        want = heat(steps, A.copy(), B.copy())
        for g, w in zip(got, want):
            assert_same(g, w)
    assert len(sizes) == 1, sizes


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(3, 3, 3), (2, 4, 3), (5, 1, 4), (0, 3, 3)])
def test_a_long_loop_body_with_a_helper_carried_float_and_dict_entry(backend, shape):
    rng = np.random.default_rng(sum(shape))
    A = rng.random(shape)
    args = lambda: (7, A.copy(), A.copy() * 0.5, Heat3D(0.1), {"last": 0.0})  # noqa: E731
    f = ft.compile(heat_with_state, backend=backend)
    if min(shape) < 2:                # A[1, 1, 1] is out of bounds
        with pytest.raises(IndexError):
            heat_with_state(*args())
        with pytest.raises(IndexError):
            f(*args())
        return
    a, b = args(), args()
    assert_same(f(*a), heat_with_state(*b))
    for x, y in zip(a[1:3], b[1:3]):
        assert_same(x, y)
    assert_same(a[4]["last"], b[4]["last"])
    _, loops, _ = loops_and_lines(heat_with_state, *args(), backend=backend)
    assert loops == 1


def test_an_argument_prefixed_jump_lands_on_its_instruction():
    """The translator maps an EXTENDED_ARG's offset to the instruction it prefixes."""
    from frametrace.trace.translator import _offset_to_index
    ins = list(dis.get_instructions(heat))
    table = _offset_to_index(ins)
    k = next(i for i, x in enumerate(ins) if x.opname == "FOR_ITER")
    assert table[ins[k - 1].offset] == k and table[ins[k].offset] == k
    back = [x for x in ins if x.opname.startswith("JUMP_BACKWARD")]
    assert back and table[back[-1].argval] == k


# ---------------------------------------------------------------- triangular nests three deep

def triple(A):
    n = A.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i + 1):
            for k in range(j, i + 1):
                s += A[i, j] * A[j, k]
    return s


def triple_strict(A, out):
    n = A.shape[0]
    s = 0.0
    for i in range(n):
        for j in range(i):
            for k in range(j + 1, i):
                s = s + A[i, k] * A[k, j]
            out[i, j] = s
    return s


def test_a_triangular_nest_three_deep_is_one_loop_node():
    """(triple_strict is not: its first update of `s` runs at i = 2, past the two iterations a
    loop peels, so the nest is unrolled; `s = np.float64(0)` there makes it one node.)"""
    A = np.random.default_rng(1).random((9, 9))
    graphs, loops, lines = loops_and_lines(triple, A)
    assert (graphs, loops) == (1, 1)
    assert lines < 80, lines


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 7), st.sampled_from(["float64", "float32", "int64"]), st.sampled_from(BACKENDS),
       st.booleans())
def test_triangular_nests_three_deep_match_python(n, dtype, backend, strict):
    rng = np.random.default_rng(n)
    A = (rng.standard_normal((n, n)) * 10).astype(dtype)
    fn = triple_strict if strict else triple
    args = (A,) if not strict else (A, np.zeros((n, n), dtype))
    a, b = copied(args), copied(args)
    got = ft.compile(fn, backend=backend, dynamic=False)(*a)
    want = fn(*b)
    assert type(got) is type(want)
    assert_same(got, want)
    if strict:
        assert_same(a[1], b[1])


# ---------------------------------------------------------------- index bounds narrowed outwards

def test_an_inner_range_narrows_every_enclosing_index():
    """Inside `for k in range(j + 1, i + 1)` (in `for j in range(i + 1)` in `for i in range(n)`)
    k's range is not empty, so j <= i - 1 and then i >= 1: both decided without a guard."""
    env = ShapeEnv()
    n = sympy.Symbol("n", integer=True, positive=True)
    i = env.enter_loop_index(0, n - 1)
    j = env.enter_loop_index(0, i)
    assert env.decide_over_loop_indices(sympy.Lt(i - 1, 0), static=True) is None
    k = env.enter_loop_index(j + 1, i)
    assert env.decide_over_loop_indices(sympy.Lt(i - 1, 0), static=True) is False
    assert env.decide_over_loop_indices(sympy.Le(j, i - 1), static=True) is True
    assert env.decide_over_loop_indices(sympy.Ge(k, n), static=True) is False
    env.exit_loop_index(k)
    assert env.decide_over_loop_indices(sympy.Lt(i - 1, 0), static=True) is None    # restored
    env.exit_loop_index(j)
    env.exit_loop_index(i)
