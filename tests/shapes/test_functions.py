"""FloorDiv / PythonMod: exact Python semantics for every integer, including negatives, and
the rewrite rules keep it (checked by substituting random integers)."""
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from frametrace.shapes import FloorDiv, PythonMod, pycode

ints = st.integers(-10**6, 10**6)
nonzero = ints.filter(lambda v: v != 0)
a, b = sympy.symbols("a b", integer=True)
p = sympy.Symbol("p", integer=True, positive=True)


@settings(max_examples=300, deadline=None)
@given(ints, nonzero)
def test_constant_folding_is_python(x, y):
    assert FloorDiv(sympy.Integer(x), sympy.Integer(y)) == x // y
    assert PythonMod(sympy.Integer(x), sympy.Integer(y)) == x % y


# expressions whose rewrites must agree with Python after substitution
EXPRS = [
    FloorDiv(2 * a + 3, 2), FloorDiv(4 * a, 6), FloorDiv(6 * a - 9, -3), FloorDiv(FloorDiv(a, 2), 3),
    FloorDiv(a * b, b), FloorDiv(3 * a + 5 * b + 7, 5), PythonMod(4 * a + 3, 2),
    PythonMod(5 * a - 7, 3), PythonMod(PythonMod(a, 4), 4), PythonMod(a - 10, -3),
    PythonMod(a * b, b), FloorDiv(a - 10, 3) * 3 + PythonMod(a - 10, 3), FloorDiv(-a, 7),
]


def _python(expr, env):
    return eval(pycode(expr, {a: "a", b: "b"}), {}, env)


@settings(max_examples=300, deadline=None)
@given(ints, nonzero)
def test_rewrites_match_python(x, y):
    for e in EXPRS:
        subst = e.xreplace({a: sympy.Integer(x), b: sympy.Integer(y)})
        assert subst == _python(e, {"a": x, "b": y}), e


@settings(max_examples=200, deadline=None)
@given(ints, nonzero, ints)
def test_unrewritten_forms_evaluate_like_python(x, y, c):
    e1, e2 = FloorDiv(a + c, b), PythonMod(a + c, b)
    env = {"a": x, "b": y}
    assert e1.xreplace({a: x, b: y}) == (x + c) // y == _python(e1, env)
    assert e2.xreplace({a: x, b: y}) == (x + c) % y == _python(e2, env)


def test_simplifications_and_printing():
    assert FloorDiv(p, 1) == p
    assert FloorDiv(2 * p + 3, 2) == p + 1
    assert FloorDiv(4 * p, 2) == 2 * p
    assert FloorDiv(FloorDiv(p, 2), 3) == FloorDiv(p, 6)
    assert PythonMod(4 * p + 3, 2) == 1
    assert PythonMod(p * b, b) == 0
    assert str(FloorDiv(p, 2)) == "(p//2)"
    assert str(PythonMod(p, 2)) == "Mod(p, 2)"
    assert PythonMod(p, 2).is_nonnegative
    assert FloorDiv(p, 2).is_integer
