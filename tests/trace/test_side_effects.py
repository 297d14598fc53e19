"""Side effects on objects and containers the caller can see: recorded while tracing, visible to
later reads in the same trace, replayed after the graph in order (and before a graph break)."""
import copy

import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS, assert_same

def whole_graph():
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0 and s.unique_graphs >= 1, s


rng = np.random.default_rng(3)


class Adam:
    def __init__(self, n):
        self.m = np.zeros(n)
        self.v = np.zeros(n)
        self.t = 0
        self.history = []

    def step(self, w, g, lr=0.01, b1=0.9, b2=0.999):
        self.t += 1
        self.m = b1 * self.m + (1 - b1) * g
        self.v = b2 * self.v + (1 - b2) * g * g
        mhat = self.m / (1 - b1 ** self.t)
        vhat = self.v / (1 - b2 ** self.t)
        self.history.append(self.t)
        return w - lr * mhat / (np.sqrt(vhat) + 1e-8)


def _same_state(a, b):
    assert a.t == b.t and a.history == b.history
    assert_same(a.m, b.m)
    assert_same(a.v, b.v)


@pytest.mark.parametrize("backend", BACKENDS)
def test_attribute_stores_on_self_are_replayed_in_order(backend):
    eager, traced = Adam(5), Adam(5)
    step = ft.compile(Adam.step, backend=backend)
    w1 = w2 = rng.standard_normal(5)
    for _ in range(4):
        g = rng.standard_normal(5)
        w1 = Adam.step(eager, w1, g)
        w2 = step(traced, w2, g)
        assert_same(w2, w1)
        _same_state(traced, eager)
    whole_graph()


class Layer:
    def __init__(self, d):
        self.w = rng.standard_normal((d, d))
        self.cache = None

    def forward(self, x):
        self.cache = x                  # kept for a backward pass
        out = np.tanh(x @ self.w)
        self.out = out
        return out + self.cache        # the read sees the stored value


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_after_write_sees_the_stored_value_and_arrays_leave_the_graph(backend):
    a, b = Layer(4), Layer(4)
    b.w = a.w.copy()
    f = ft.compile(Layer.forward, backend=backend)
    for n in (3, 3, 6):
        x = rng.standard_normal((n, 4))
        assert_same(f(b, x), Layer.forward(a, x))
        assert b.cache is x
        assert_same(b.out, a.out)
    whole_graph()


def mutate_dict(d, x):
    d["y"] = x * 2.0
    d["w"] -= 0.5 * d["y"]
    old = d.pop("gone")
    d.setdefault("fresh", x.sum())
    d.update(extra=1.5)
    del d["dropme"]
    return d["w"] + old, len(d)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mutating_a_dict_the_caller_passed(backend):
    x = rng.standard_normal(4)
    base = {"w": rng.standard_normal(4), "gone": rng.standard_normal(4), "dropme": 1}
    want_d, got_d = copy.deepcopy(base), copy.deepcopy(base)
    want = mutate_dict(want_d, x)
    got = ft.compile(mutate_dict, backend=backend)(got_d, x)
    assert_same(got, want)
    assert list(got_d) == list(want_d)
    for k in want_d:
        assert_same(got_d[k], want_d[k])
    whole_graph()


def mutate_list(lst, ids, x):
    lst.append(x + 1.0)
    lst.extend([x * 2.0, 3])
    lst.insert(0, x.sum())
    first = lst.pop(1)
    del lst[-1]
    ids.append(len(ids))
    ids.remove(ids[0])
    n = ids.count(2) + ids.index(2)
    ids[0] = n
    ids += [4]
    return first * n, len(lst)


@pytest.mark.parametrize("backend", BACKENDS)
def test_mutating_a_list_the_caller_passed(backend):
    x = rng.standard_normal(3)
    base = [rng.standard_normal(3), 5]
    want_l, got_l = copy.deepcopy(base), copy.deepcopy(base)
    want_ids, got_ids = [1, 2, 2], [1, 2, 2]
    want = mutate_list(want_l, want_ids, x)
    got = ft.compile(mutate_list, backend=backend)(got_l, got_ids, x)
    assert_same(got, want)
    assert got_ids == want_ids
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        assert_same(g, w)
    whole_graph()


def clear_and_return(lst, d):
    lst.clear()
    d.clear()
    return lst, d


def test_cleared_containers_are_the_callers_objects():
    lst, d = [1, 2], {"a": 1}
    got = ft.compile(clear_and_return)(lst, d)
    assert got[0] is lst and got[1] is d and lst == [] and d == {}


STATE = {"calls": 0, "total": 0.0}


def count_calls(x):
    STATE["calls"] += 1
    STATE["total"] = STATE["total"] + float(x.sum())
    return x * STATE["calls"]


def test_a_counter_in_a_global_dict():
    STATE.update(calls=0, total=0.0)
    f = ft.compile(count_calls)
    total = 0.0
    for i in range(1, 5):
        x = rng.standard_normal(3)
        total += float(x.sum())
        assert_same(f(x), x * i)
    assert STATE["calls"] == 4 and STATE["total"] == pytest.approx(total, rel=1e-12)
    assert type(STATE["total"]) is float


def mutate_then_break(d, lst, x):
    d["seen"] = x * 2.0
    lst.append(len(lst))
    print("break here", len(d))      # a graph break: the mutations land before it runs
    return d["seen"] + lst[-1]


def test_pending_side_effects_are_applied_before_a_graph_break(capsys):
    x = rng.standard_normal(3)
    d1, l1, d2, l2 = {}, [1], {}, [1]
    want = mutate_then_break(d1, l1, x)
    got = ft.compile(mutate_then_break)(d2, l2, x)
    assert_same(got, want)
    assert l2 == l1 and list(d2) == ["seen"]
    assert_same(d2["seen"], d1["seen"])
    assert capsys.readouterr().out.count("break here 1") == 2
    assert ft.stats().graph_breaks == 1


def swap(obj):
    obj.a, obj.b = obj.b, obj.a
    return obj.a


class Pair:
    def __init__(self):
        self.a, self.b = rng.standard_normal(2), rng.standard_normal(3)


def test_values_are_read_before_any_mutation_is_replayed():
    p, q = Pair(), Pair()
    q.a, q.b = p.a.copy(), p.b.copy()
    want = swap(p)
    got = ft.compile(swap)(q)
    assert_same(got, want)
    assert_same(q.a, p.a)
    assert_same(q.b, p.b)


def sized_keys(x):
    table = {x.shape[0]: "rows"}
    table[len(x) + 1] = "next"
    return table, x.shape[0] in table


def test_a_dict_keyed_by_a_size():
    f = ft.compile(sized_keys, dynamic=True)
    for n in (3, 4):
        got = f(np.ones(n))
        assert got == sized_keys(np.ones(n))
        assert all(type(k) is int for k in got[0])


def write_one_read_other(a, b, x):
    a["k"] = x * 2.0
    return b["k"] + 1.0


def test_one_dict_passed_twice_is_one_traced_value():
    x = rng.standard_normal(3)
    f = ft.compile(write_one_read_other)
    d = {"k": np.zeros(3)}
    assert_same(f(d, d, x), x * 2.0 + 1.0)
    d1, d2 = {"k": np.zeros(3)}, {"k": np.ones(3)}
    assert_same(f(d1, d2, x), np.ones(3) + 1.0)      # different objects now: a new entry
    assert_same(d1["k"], x * 2.0)
    d3 = {"k": np.zeros(3)}
    assert_same(f(d3, d3, x), x * 2.0 + 1.0)         # and aliased again: the first entry
    assert ft.stats().unique_graphs == 2


TOTAL = 0.0
STEPS = 0


def accumulate(x):
    global TOTAL, STEPS
    STEPS += 1
    TOTAL = TOTAL + float(x.sum()) * STEPS
    return x * STEPS, TOTAL


def test_global_statements_are_replayed():
    global TOTAL, STEPS
    TOTAL, STEPS = 0.0, 0
    f = ft.compile(accumulate)
    want_total = 0.0
    for i in range(1, 4):
        x = rng.standard_normal(3)
        want_total = want_total + float(x.sum()) * i
        out, total = f(x)
        assert_same(out, x * i)
        assert total == pytest.approx(want_total, rel=1e-12) and type(total) is float
    assert STEPS == 3 and TOTAL == pytest.approx(want_total, rel=1e-12)
    assert ft.stats().graph_breaks == 0


def shape_keyed(x, d):
    cache = {x.shape: x * 2.0}
    d[len(x)] = x.sum()
    d["y"] = x
    return cache[x.shape] + d["y"], (x.shape[0], "a") in {(len(x), "a"): 1}


def test_arrays_stored_in_dicts_and_keys_made_of_sizes():
    f = ft.compile(shape_keyed, dynamic=True)
    for n in (3, 4):
        x = rng.standard_normal(n)
        d1, d2 = {}, {}
        got, want = f(x, d1), shape_keyed(x, d2)
        assert_same(got[0], want[0])
        assert got[1] == want[1] and list(d1) == list(d2) and type(list(d1)[0]) is int
        assert_same(d1["y"], d2["y"])
        assert d1[n] == pytest.approx(d2[n], rel=1e-12)
