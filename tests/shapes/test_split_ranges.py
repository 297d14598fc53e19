"""Comparisons over the pieces of a loop split at an index condition (shapes/loop_index.py with
trace/loop_split.py): a piece runs over range(lo, Min(n, p)) or range(Max(lo, p), n), its ends
a Min/Max of affine bounds; decisions take them apart, and the piece's non-emptiness narrows
the enclosing index (`E <= NW - 2` inside range(E + 1, NW))."""
import sympy
from hypothesis import given, settings, strategies as st

from frametrace.shapes import ShapeEnv
from frametrace.shapes.loop_index import _distribute

_RELS = ["Eq", "Ne", "Le", "Lt", "Ge", "Gt"]


@settings(max_examples=80, deadline=None)
@given(st.integers(-3, 3), st.integers(-5, 5), st.integers(-5, 5), st.integers(-5, 5),
       st.integers(-6, 6), st.integers(-6, 6), st.booleans())
def test_distribute_keeps_the_value(k, c1, c2, r, x, y, use_min):
    a, b = sympy.symbols("a b", integer=True)
    inner = (sympy.Min if use_min else sympy.Max)(a + c1, 2 * b + c2)
    e = sympy.expand(k * inner + r + a)
    d = _distribute(e)
    assert e.xreplace({a: x, b: y}) == d.xreplace({a: x, b: y})


@settings(max_examples=80, deadline=None)
@given(st.integers(1, 9), st.integers(1, 9), st.integers(-2, 2), st.sampled_from(_RELS),
       st.integers(-3, 3), st.booleans())
def test_decisions_in_a_piece_hold_at_every_index(ne, nw, shift, rel, c, first):
    """E in range(ne); w in the first piece range(0, Min(nw, E + 1 + shift)) or the second
    range(Max(0, E + 1 + shift), nw): a decided comparison of `E - w` holds at every (E, w)
    where the piece runs; None is always allowed."""
    env = ShapeEnv()
    E = env.enter_loop_index(0, ne - 1)
    p = E + 1 + shift
    lo, hi = (0, sympy.Min(nw, p) - 1) if first else (sympy.Max(0, p), nw - 1)
    w = env.enter_loop_index(lo, hi, piece=True)
    expr = getattr(sympy, rel)(E - w, c, evaluate=False)
    got = env.decide_over_loop_indices(expr, static=True)
    env.exit_loop_index(w)
    env.exit_loop_index(E)
    if got is None:
        return
    for e in range(ne):
        a, b = (0, min(nw, e + 1 + shift)) if first else (max(0, e + 1 + shift), nw)
        for v in range(a, b):
            assert bool(expr.xreplace({E: e, w: v})) == got, (expr, got, e, v)


def test_the_condition_a_loop_was_split_at_is_decided_in_each_piece():
    env = ShapeEnv()
    NE, NW = sympy.symbols("NE NW", integer=True, positive=True)
    E = env.enter_loop_index(0, NE - 1)
    w = env.enter_loop_index(0, sympy.Min(NW, E + 1) - 1, piece=True)
    assert env.decide_over_loop_indices(sympy.Ge(E - w, 0), static=True) is True
    env.exit_loop_index(w)
    w = env.enter_loop_index(E + 1, NW - 1, piece=True)
    assert env.decide_over_loop_indices(sympy.Ge(E - w, 0), static=True) is False
    assert env.decide_over_loop_indices(sympy.Lt(E - w, 0), static=True) is True
    env.exit_loop_index(w)
    env.exit_loop_index(E)
