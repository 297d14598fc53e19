"""pycode: valid Python with exact integer semantics; evaluating it with the symbols bound to
values gives what substituting the values in the sympy expression gives."""
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from frametrace.shapes import FloorDiv, PythonMod, ShapeEnv, pycode

a, b = sympy.symbols("a b", integer=True, positive=True)
NAMES = {a: "L['x'].shape[0]", b: "L['n']"}


def test_examples():
    assert pycode(sympy.Ne(a, 10), NAMES) == "L['x'].shape[0] != 10"
    assert pycode(sympy.Eq(a, b), NAMES) == "L['x'].shape[0] == L['n']"
    assert pycode(FloorDiv(a + 1, 2), NAMES) == "(L['x'].shape[0] + 1) // 2"
    assert pycode(PythonMod(a, 3), NAMES) == "L['x'].shape[0] % 3"
    assert pycode(sympy.And(a > 3, sympy.Eq(b, 2)), NAMES) == \
        "(L['n'] == 2) and (L['x'].shape[0] > 3)"
    assert pycode(sympy.Max(a, b) + 1, NAMES) == "max(L['x'].shape[0], L['n']) + 1"
    assert pycode(5 - a, NAMES) == "5 - L['x'].shape[0]"
    assert pycode(a / 2, NAMES) == "L['x'].shape[0] / 2"
    assert pycode(sympy.true, NAMES) == "True"
    assert pycode(a, {"a": "n"}) == "n"             # names may be keyed by symbol name


def _tree(children):
    return st.one_of(
        st.tuples(children, children).map(lambda t: t[0] + t[1]),
        st.tuples(children, children).map(lambda t: t[0] - t[1]),
        st.tuples(children, children).map(lambda t: t[0] * t[1]),
        st.tuples(children, st.integers(-4, 4).filter(bool)).map(lambda t: FloorDiv(t[0], t[1])),
        st.tuples(children, st.integers(-4, 4).filter(bool)).map(lambda t: PythonMod(t[0], t[1])),
        st.tuples(children, children).map(lambda t: sympy.Min(t[0], t[1])),
        children.map(lambda c: -c),
        children.map(lambda c: c ** 3),
    )


exprs = st.recursive(st.one_of(st.just(a), st.just(b), st.integers(-9, 9).map(sympy.Integer)),
                     _tree, max_leaves=6)
RELS = [sympy.Eq, sympy.Ne, sympy.Lt, sympy.Le, sympy.Gt, sympy.Ge]


@settings(max_examples=250, deadline=None)
@given(exprs, exprs, st.sampled_from(RELS), st.integers(1, 60), st.integers(1, 60))
def test_round_trip(lhs, rhs, rel, x, n):
    class Arr:
        shape = (x,)
    ns = {"L": {"x": Arr(), "n": n}}
    vals = {a: sympy.Integer(x), b: sympy.Integer(n)}
    assert eval(pycode(lhs, NAMES), ns) == lhs.xreplace(vals)
    cond = rel(lhs, rhs)
    assert eval(pycode(cond, NAMES), ns) == bool(cond.xreplace(vals))
    both = sympy.Or(sympy.Not(rel(lhs, 3)), sympy.And(rel(rhs, 0), sympy.Ne(lhs, rhs)))
    assert eval(pycode(both, NAMES), ns) == bool(both.xreplace(vals))


@settings(max_examples=100, deadline=None)
@given(st.integers(2, 100), st.integers(2, 100), st.integers(-5, 5), st.integers(-30, 30))
def test_guard_code_agrees_with_hints(h0, h1, k, c):
    """Produced guards, evaluated on the hints, are all True; the decisions they encode equal
    substituting the hints."""
    env = ShapeEnv(duck_shape=False)
    s, t = env.create_symbol(h0, "L['x'].shape[0]"), env.create_symbol(h1, "L['n']")
    for cond, want in (((s * k + c) // 3 > t, (h0 * k + c) // 3 > h1),
                       ((s - t) % 4 == 1, (h0 - h1) % 4 == 1),
                       (s * t <= 2000 + c, h0 * h1 <= 2000 + c)):
        assert bool(cond) == want

    class Arr:
        shape = (h0,)
    ns = {"L": {"x": Arr(), "n": h1}}
    for g in env.produce_guards():
        assert eval(g.code, ns) is True, g.code
