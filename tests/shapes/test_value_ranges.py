"""Interval arithmetic is sound: the value of an expression at any point of its symbols'
ranges lies in the computed bound; relationals decided from ranges are right."""
import sympy
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from frametrace.shapes import FloorDiv, PythonMod, ValueRanges, int_oo
from frametrace.shapes.value_ranges import bound_expr, decide

a, b = sympy.symbols("a b", integer=True)
small = st.integers(-20, 20)

leaves = st.one_of(st.just(a), st.just(b), small.map(sympy.Integer))


def _extend(children):
    nz = st.integers(-5, 5).filter(bool).map(sympy.Integer)
    return st.one_of(
        st.tuples(children, children).map(lambda t: t[0] + t[1]),
        st.tuples(children, children).map(lambda t: t[0] - t[1]),
        st.tuples(children, children).map(lambda t: t[0] * t[1]),
        st.tuples(children, nz).map(lambda t: FloorDiv(t[0], t[1])),
        st.tuples(children, nz).map(lambda t: PythonMod(t[0], t[1])),
        st.tuples(children, children).map(lambda t: sympy.Max(t[0], t[1])),
        st.tuples(children, children).map(lambda t: sympy.Min(t[0], t[1])),
        children.map(sympy.Abs),
        children.map(lambda c: c ** 2),
    )


exprs = st.recursive(leaves, _extend, max_leaves=6)


@st.composite
def interval(draw):
    lo = draw(small)
    hi = draw(st.integers(lo, lo + 30))
    return ValueRanges(lo, hi)


@settings(max_examples=300, deadline=None)
@given(exprs, interval(), interval(), st.data())
def test_bound_contains_every_value(expr, ra, rb, data):
    ranges = {a: ra, b: rb}
    vr = bound_expr(expr, ranges.__getitem__)
    for _ in range(5):
        x = data.draw(st.integers(ra.lower, ra.upper))
        y = data.draw(st.integers(rb.lower, rb.upper))
        v = expr.xreplace({a: sympy.Integer(x), b: sympy.Integer(y)}).doit()   # (doit: a Max built
        assert v.is_Integer and v in vr, (expr, x, y, v, vr)                    #  unevaluated, too)


@settings(max_examples=300, deadline=None)
@given(exprs, exprs, st.sampled_from([sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge]),
       interval(), interval(), st.data())
def test_decide_is_never_wrong(lhs, rhs, rel, ra, rb, data):
    expr = rel(lhs, rhs)
    assume(expr not in (sympy.true, sympy.false))
    verdict = decide(expr, {a: ra, b: rb}.__getitem__)
    if verdict is None:
        return
    for _ in range(5):
        x = data.draw(st.integers(ra.lower, ra.upper))
        y = data.draw(st.integers(rb.lower, rb.upper))
        assert bool(expr.xreplace({a: sympy.Integer(x), b: sympy.Integer(y)})) == verdict


def test_unbounded_ranges_and_printing():
    s = sympy.Symbol("s", integer=True, positive=True)
    vr = ValueRanges(2, int_oo)
    assert str(vr) == "[2, int_oo]" and vr.vr_str() == "VR[2, int_oo]"
    assert str(ValueRanges(-int_oo, int_oo)) == "[-int_oo, int_oo]"
    ranges = {s: vr}.__getitem__
    assert decide(sympy.Ge(s, 2), ranges) is True
    assert decide(sympy.Eq(s, 1), ranges) is False
    assert decide(sympy.Eq(s, 0), ranges) is False
    assert decide(sympy.Gt(s + 1, s), ranges) is True
    assert decide(sympy.Le(s, 30), ranges) is None
    assert decide(sympy.Ge(FloorDiv(s, 2), 1), ranges) is True
    assert bound_expr(PythonMod(s, 4), ranges) == ValueRanges(0, 3)
    assert bound_expr(s * s - 1, ranges) == ValueRanges(3, int_oo)
    assert (ValueRanges(2, 30) & ValueRanges(5, int_oo)) == ValueRanges(5, 30)
    assert ValueRanges(2, 30).issubset(ValueRanges(2, int_oo))
