"""Values live across a graph break: NumPy scalars the graph computed (a 0-d graph input of
the resume function, guarded on type, not value), data-dependent sizes (read off a graph
output), and the recompile-reason explainer on guards that meet an unexpected value."""
import numpy as np
import pytest

import frametrace as ft
from frametrace.guards.builder import GuardBuilder
from frametrace.sources import LocalSource
from frametrace.trace.compile import EntryInfo


@pytest.fixture(params=["numpy", "llvm"])
def backend(request):
    return request.param


def scalar_then_break(x):
    v = x.sum()
    m = x.max()
    print("break")
    return v * 3 + m, m


def test_numpy_scalar_across_break_is_an_input_not_a_constant(backend, capsys):
    f = ft.compile(scalar_then_break, backend=backend)
    for n in (3, 4, 5, 9):
        x = np.arange(float(n)) - 1.0
        got, want = f(x), scalar_then_break(x)
        assert got == want and all(type(g) is type(w) for g, w in zip(got, want))
    resume = [v for k, v in f._frametrace_cache.state.data["resume"].items() if k[0] == "resume"]
    assert len(resume) == 1
    inner = resume[0]._frametrace_cache
    assert len(inner.entries) == 1                       # one resume graph for every value
    got = f(np.arange(4, dtype=np.float32))
    assert type(got[1]) is np.float32 and got == scalar_then_break(np.arange(4, dtype=np.float32))
    assert len(inner.entries) == 2                       # a new dtype is a new type: one more


def mask_size_then_break(x):
    v = x[x > 0]
    n = v.shape[0]
    k = n * 2 - 1
    print("break", n)
    return v * n, k


def test_unbacked_size_across_break(backend, capsys):
    f = ft.compile(mask_size_then_break, backend=backend)
    for x in (np.arange(-2.0, 4.0), np.arange(-5.0, 9.0), np.arange(-3.0, 0.0)):
        got, want = f(x), mask_size_then_break(x)
        np.testing.assert_array_equal(got[0], want[0])
        assert got[1] == want[1] and type(got[1]) is int


def test_explainer_counts_raising_and_non_bool_guards_as_failing():
    b, y = GuardBuilder(), LocalSource("y")
    b.equals(y, 5)                                   # type(L['y']) is int, L['y'] == 5
    b.predicate(y, lambda v: v.missing > 0, "has .missing > 0")      # raises on an int or array
    b.length(y, 3)
    info = EntryInfo("0/0", ("y",), b.guards, b.namespace, None, 0, "")
    assert info.failing_guards([np.arange(3)]) == ["type(L['y']) is int", "L['y'] == 5", "L['y'] has .missing > 0"]
    assert info.failing_guards([5]) == ["L['y'] has .missing > 0", "len(L['y']) == 3"]


def greedy_decode(W, start, steps):
    toks = [start]
    for _ in range(steps):
        h = W[toks[-1]]
        toks.append(int(np.argmax(h)))      # `int()` of array data: a break with `toks.append` on the stack
    return toks


def shared_containers(x):
    a = [x.sum()]
    d = {"a": a}
    pair = (a, a, d)
    print("", end="")                       # a break: the three references rebuilt in the resume function
    a.append(1)
    return pair, d


def test_a_list_on_the_stack_and_in_a_local_stays_one_object(backend):
    """A list the frame made is rebuilt once for a break, not once per reference: the append
    through the bound method on the stack lands in `toks` (found by an adversarial program)."""
    W = np.random.default_rng(1).random((10, 10))
    f = ft.compile(greedy_decode, backend=backend)
    for steps in (5, 5, 7):
        assert f(W, 2, steps) == greedy_decode(W, 2, steps)


def test_shared_containers_across_a_break(backend):
    x = np.arange(4.0)
    (a1, a2, d), d2 = ft.compile(shared_containers, backend=backend)(x)
    (b1, b2, e), e2 = shared_containers(x)
    assert a1 is a2 and d["a"] is a1 and d is d2
    assert a1 == b1 and d == e
