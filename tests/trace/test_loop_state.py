"""State a loop body writes besides its locals is carried through the loop node
(trace/loop_state.py): attributes of objects, entries of dicts and items of lists the caller
passed, closure cells written by inlined closures (`nonlocal`), also under `if`s on data and
with `break`. Compared with plain Python on random inputs: results, the objects afterwards,
graph counts, no graph break, and the same graph size whatever the trip count."""
import copy

import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS, assert_same


def run_both(fn, *args, backend="llvm", **kw):
    """(eager result, eager args afterwards, compiled result, compiled args afterwards)."""
    a1, a2 = copy.deepcopy(args), copy.deepcopy(args)
    want = fn(*a1)
    got = ft.compile(fn, backend=backend, **kw)(*a2)
    return want, a1, got, a2


def same_state(a, b):
    if hasattr(a, "__dict__") and not isinstance(a, type):
        a, b = vars(a), vars(b)
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            same_state(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same_state(x, y)
    else:
        assert_same(b, a)


def shape_of_graph(fn, *args):
    ft.reset()
    out = ft.explain(fn, *copy.deepcopy(args))
    return (out.graph_count, out.graph_break_count, sum(len(str(g).splitlines()) for g in out.graphs),
            sum(1 for g in out.graphs for n in g.nodes if n.op == "loop"))


# ---------------------------------------------------------------- attributes of objects

class LinearModel:
    def __init__(self, n, lr=0.1):
        self.w = np.zeros(n)
        self.b = 0.0
        self.lr = lr
        self.steps = 0

    def fit(self, X, y, n_iter):
        for _ in range(n_iter):
            err = X @ self.w + self.b - y
            self.w -= self.lr * (X.T @ err) / X.shape[0]     # in place: the attribute keeps its array
            self.b = self.b - self.lr * err.mean()          # rebound: carried, written back after
            self.lr *= 0.99
            self.steps += 1
        return self.w


def fit(model, X, y, n_iter):
    return model.fit(X, y, n_iter)


@pytest.mark.parametrize("backend", BACKENDS)
def test_gradient_descent_on_a_model_object_is_one_loop(backend):
    rng = np.random.default_rng(0)
    X, y = rng.standard_normal((30, 4)), rng.standard_normal(30)
    sizes = set()
    for n_iter in (40, 400):
        graphs, breaks, lines, loops = shape_of_graph(fit, LinearModel(4), X, y, n_iter)
        assert (graphs, breaks, loops) == (1, 0, 1)
        sizes.add(lines)
        ft.reset()
        want, a1, got, a2 = run_both(fit, LinearModel(4), X, y, n_iter, backend=backend)
        assert_same(got, want)
        same_state(a1[0], a2[0])
        assert type(a2[0].b) is type(a1[0].b) and type(a2[0].steps) is int
    assert len(sizes) == 1, sizes


def test_an_attribute_made_in_the_loop_is_unrolled_and_correct():
    class Box:
        pass

    def f(box, x):
        for i in range(3):
            box.last = x[i] * 2
        return x
    want, a1, got, a2 = run_both(f, Box(), np.arange(5.0))
    assert_same(got, want)
    same_state(a1[0], a2[0])


# ---------------------------------------------------------------- dict entries and list items

def sgd(params, grads, steps):
    for _ in range(steps):
        for k in ("w", "b"):                      # a tuple of keys: unrolled
            params[k] = params[k] - 0.01 * grads[k]
        params["t"] += 1
    return params


@pytest.mark.parametrize("backend", BACKENDS)
def test_dict_entries_written_in_a_loop(backend):
    rng = np.random.default_rng(1)
    params = {"w": rng.standard_normal((3, 3)), "b": rng.standard_normal(3), "t": 0}
    grads = {"w": rng.standard_normal((3, 3)), "b": rng.standard_normal(3), "t": 0}
    assert shape_of_graph(sgd, params, grads, 50)[::3] == (1, 1)
    ft.reset()
    want, a1, got, a2 = run_both(sgd, params, grads, 50, backend=backend)
    same_state(want, got)
    same_state(a1[0], a2[0])


def test_list_items_written_in_a_loop():
    def f(acc, x):
        for i in range(x.shape[0]):
            acc[0] = acc[0] + x[i]
            acc[-1] = max(acc[-1], x[i])
        return acc
    rng = np.random.default_rng(2)
    for n in (1, 5, 60):
        ft.reset()
        x = rng.standard_normal(n)
        want, a1, got, a2 = run_both(f, [np.float64(0.0), np.float64(-np.inf)], x, dynamic=True)
        same_state(want, got)


# ---------------------------------------------------------------- closure cells

def count_positive(x):
    k = 0
    total = 0.0

    def seen(v):
        nonlocal k, total
        k += 1
        total = total + v

    for i in range(x.shape[0]):
        if x[i] > 0:
            seen(x[i])
    return k, total


def nested_counter(a):
    calls = 0

    def bump():
        nonlocal calls
        calls += 1

    for i in range(a.shape[0]):
        for j in range(i):
            if a[i, j] > 0.5:
                bump()
    return calls


@pytest.mark.parametrize("backend", BACKENDS)
def test_nonlocal_cells_written_by_inlined_closures(backend):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(50) + 0.3           # positive first: `total` stays one type
    x[0] = 1.0
    assert shape_of_graph(count_positive, x)[::3] == (1, 1)
    ft.reset()
    f = ft.compile(count_positive, backend=backend, dynamic=True)
    for n in (2, 9, 70):
        x = rng.standard_normal(n)
        x[0] = 1.0
        assert_same(f(x), count_positive(x))
    a = rng.standard_normal((30, 30))
    assert shape_of_graph(nested_counter, a)[::3] == (1, 1)
    ft.reset()
    g = ft.compile(nested_counter, backend=backend, dynamic=True)
    for n in (2, 7, 33):
        a = rng.standard_normal((n, n))
        assert g(a) == nested_counter(a)


def test_a_cell_written_under_a_break():
    def f(x):
        hits = 0

        def hit():
            nonlocal hits
            hits += 1
        for v in x:
            hit()
            if v > 1.0:
                break
        return hits
    rng = np.random.default_rng(4)
    g = ft.compile(f, dynamic=True)
    for n in (2, 10, 100):
        x = rng.standard_normal(n)
        assert g(x) == f(x)
    assert ft.stats().graph_breaks == 0


# ---------------------------------------------------------------- generators in loop bodies

def test_a_generator_whose_loop_yields_is_not_a_loop_node():
    def gen(x, n):
        for i in range(n):
            yield x[i] * 2

    def f(x):
        return sum(gen(x, x.shape[0]))
    for dynamic in (True, False):
        ft.reset()
        x = np.arange(40.0)
        assert_same(ft.compile(f, dynamic=dynamic)(x), f(x))


# ---------------------------------------------------------------- a dict or list the function made

def train_local(X, y, steps, lr):
    """Parameters kept in a dict the function builds (not passed in), returned at the end."""
    params = {"w": np.zeros(X.shape[1], X.dtype), "b": np.zeros(1, X.dtype), "seen": 0}
    history = [0.0, 0.0]
    for _ in range(steps):
        p = X @ params["w"] + params["b"]
        r = p - y
        params["w"] = params["w"] - lr * (X.T @ r)       # rebinds the entry: carried
        params["b"] -= lr * r.sum()                      # in place: nothing to carry
        params["seen"] += X.shape[0]                     # a Python int entry
        history[1] = history[0] * 0.5 + float(np.abs(r).sum())
        history[0] = history[1]
    return params, history


def nested_local(A):
    acc = {"row": np.zeros(A.shape[1]), "total": 0.0}
    for i in range(A.shape[0]):
        for j in range(A.shape[1]):
            acc["total"] = acc["total"] + A[i, j]
        acc["row"] = acc["row"] * 0.5 + A[i]
    return acc


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("n,steps,dtype", [(0, 6, "float64"), (1, 5, "float64"), (7, 12, "float64"),
                                           (5, 9, "float32")])
def test_entries_of_a_dict_and_list_the_function_made(backend, n, steps, dtype):
    rng = np.random.default_rng(n + steps)
    X, y = rng.standard_normal((n, 3)).astype(dtype), rng.standard_normal(n).astype(dtype)
    want, _, got, _ = run_both(train_local, X, y, steps, 0.05, backend=backend)
    same_state(want[0], got[0])
    assert [type(v) for v in got[1]] == [float, float]    # float32 sums accumulate in float64 natively
    np.testing.assert_allclose(got[1], want[1], rtol=1e-5 if dtype == "float32" else 1e-12)
    graphs, breaks, lines, loops = shape_of_graph(train_local, X, y, steps, 0.05)
    assert (graphs, breaks, loops) == (1, 0, 1)
    assert shape_of_graph(train_local, X, y, steps + 20, 0.05)[2] == lines


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("shape", [(0, 3), (1, 1), (9, 7)])
def test_a_local_dict_written_by_nested_loops(backend, shape):
    A = np.random.default_rng(shape[0]).standard_normal(shape)
    want, _, got, _ = run_both(nested_local, A, backend=backend)
    same_state(want, got)
    if shape == (9, 7):                                  # past the unroll budget
        graphs, breaks, _, loops = shape_of_graph(nested_local, A)
        assert (graphs, breaks, loops) == (1, 0, 1)


def new_keys(x):
    d = {}
    for i in range(x.shape[0]):
        d[i] = x[i] * 2                                  # a new key per iteration: unrolled
    made = []
    for i in range(3):
        row = {"v": x[:1] * 0}
        row["v"] = row["v"] + i                          # a dict made inside the body
        made.append(row["v"])
    return d, made


def test_new_keys_and_dicts_made_in_the_body_stay_correct():
    x = np.arange(5.0)
    want, _, got, _ = run_both(new_keys, x)
    same_state(want, got)


def two_loops(x, table):
    for i in range(x.shape[0]):
        tmp = x[i] * 2.0                                 # unusable after the loop (not carried)
        x[i] = tmp
    for j in range(x.shape[0]):                          # its locals are looked at when it starts
        table["sum"] = table["sum"] + x[j]
    return x, table


@pytest.mark.parametrize("n", [0, 1, 70])
def test_a_loop_after_one_that_left_a_local_unusable(n):
    x = np.random.default_rng(n).standard_normal(n)
    want, _, got, _ = run_both(two_loops, x, {"sum": 0.0}, fullgraph=True)
    same_state(want, got)
