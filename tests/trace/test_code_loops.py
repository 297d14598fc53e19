"""Loops and live locals found in bytecode (resume/code_loops.py, resume/liveness.py), on whatever
CPython runs the tests: the `while` layouts differ between 3.11, 3.12 and 3.13 (a copied test, a
`continue` to the first copy, `break` as a copy of the code after the loop)."""
import numpy as np

from frametrace import pyversion
from frametrace.resume.code_loops import enclosing, loops_of
from frametrace.resume.liveness import live_before


def with_continue(x, tol):
    err = 1.0
    while err > tol:
        x = x * 0.5
        if x[0] > 3:
            continue
        if x[1] < 0:
            break
        err = abs(x).max()
    return x


def loops_and_comprehension(xs, n):
    ys = [v * 2 for v in xs]
    for i in range(n):
        if i > 3:
            return i
    while n > 0 or xs:
        n -= 1
    return ys


def nested(x):
    while True:
        x = x - 1
        if x.sum() < 0:
            break
    k = 0
    while x.sum() > 0.0 and k < 10:
        for j in range(3):
            x = x - j
        k += 1
    return x


def lines_of(fn, loop):
    ins = pyversion.instructions(fn.__code__)
    return ins[loop.start].positions.lineno, ins[loop.header].positions.lineno


def first_line(fn):
    return fn.__code__.co_firstlineno


def test_a_while_with_continue_is_one_loop_from_its_test():
    loops = [lp for lp in loops_of(with_continue.__code__) if lp.kind == "while"]
    assert len(loops) == 1
    (loop,) = loops
    start_line, header_line = lines_of(with_continue, loop)
    assert start_line == first_line(with_continue) + 2          # `while err > tol:`
    assert header_line == first_line(with_continue) + 3         # the body's first line
    ins = pyversion.instructions(with_continue.__code__)
    # the continue's jump back to the test is inside the loop, the code after it is the exit
    assert any(ins[i].opname in pyversion.UNCONDITIONAL_JUMPS and ins[i].positions.lineno ==
               first_line(with_continue) + 5 for i in loop.body)
    assert ins[loop.exit].positions.lineno == first_line(with_continue) + 9


def test_kinds_starts_and_exits():
    code = loops_and_comprehension.__code__
    ins = pyversion.instructions(code)
    kinds = [lp.kind for lp in loops_of(code)]
    assert kinds.count("while") == 1 and kinds.count("for") >= 1    # 3.12+: the comprehension too
    loop_for = next(lp for lp in loops_of(code) if lp.kind == "for" and
                    ins[lp.header].positions.lineno == first_line(loops_and_comprehension) + 2)
    assert ins[loop_for.start].opname == "GET_ITER" and ins[loop_for.header].opname == "FOR_ITER"
    loop_while = next(lp for lp in loops_of(code) if lp.kind == "while")
    assert ins[loop_while.start].positions.lineno == first_line(loops_and_comprehension) + 5
    assert ins[loop_while.exit].positions.lineno == first_line(loops_and_comprehension) + 7
    # the `return i` inside the `for` is not part of its cycle, but inside the loop's region
    ret = next(i for i, x in enumerate(ins) if x.opname in pyversion.RETURNS and
               x.positions.lineno == first_line(loops_and_comprehension) + 4)
    assert ret not in loop_for.body


def test_nesting_outermost_first():
    code = nested.__code__
    ins = pyversion.instructions(code)
    inner = next(i for i, x in enumerate(ins) if x.opname == "FOR_ITER")
    around = enclosing(code, inner + 1)
    assert [lp.kind for lp in around] == ["while", "for"]
    assert around[0].contains(around[1].start)
    first = loops_of(code)[0]                                     # `while True:`
    assert first.kind == "while" and first.start == first.header


def test_live_locals():
    code = with_continue.__code__
    loop = next(lp for lp in loops_of(code) if lp.kind == "while")
    at_header, at_exit = live_before(code, loop.header), live_before(code, loop.exit)
    # `err` is live where the body starts: a `continue` reaches the test before `err` is written
    assert {"x", "tol", "err"} <= at_header
    assert at_exit == {"x"}


def test_live_locals_when_the_code_reads_locals():
    def uses_locals(a):
        b = a + 1
        return locals()
    assert live_before(uses_locals.__code__, 0) == set(uses_locals.__code__.co_varnames)


def test_a_temporary_of_the_body_is_dead_at_both_ends():
    def relax(u, tol):
        d = 1.0
        while d > tol:
            old = u.copy()
            u[1:-1] = 0.5 * (old[2:] + old[:-2])
            d = np.abs(u - old).max()
        return u
    code = relax.__code__
    loop = next(lp for lp in loops_of(code) if lp.kind == "while")
    for name in ("d", "old"):
        assert name not in live_before(code, loop.header) and name not in live_before(code, loop.exit)
