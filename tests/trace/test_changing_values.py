"""Values that change between calls become graph inputs after their first change, not guards:
items of lists of ints (a whole list at once), int arguments (no 0/1 specialisation, no duck
sizing: only a branch on the value specialises it), a list's length (a size: a history list on
`self` or a token list that grows costs one recompile), an int that becomes a NumPy float."""
import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same

RNG = np.random.default_rng(7)
V, H = 11, 6
WXH, WHH, WHY = (RNG.standard_normal(s) * 0.3 for s in ((H, V), (H, H), (V, H)))


def rnn_loss(inputs, targets, hprev):
    xs, hs, ps = {}, {}, {}
    hs[-1] = np.copy(hprev)
    loss = 0.0
    for t in range(len(inputs)):
        xs[t] = np.zeros((V, 1))
        xs[t][inputs[t]] = 1
        hs[t] = np.tanh(WXH @ xs[t] + WHH @ hs[t - 1])
        y = WHY @ hs[t]
        ps[t] = np.exp(y) / np.sum(np.exp(y))
        loss += -np.log(ps[t][targets[t], 0])
    return loss, hs[len(inputs) - 1]


def test_windows_of_ids_given_as_lists_compile_twice():
    f = ft.compile(rnn_loss)
    text = RNG.integers(0, V, 120).tolist()
    h = np.zeros((H, 1))
    for p in range(0, 96, 6):
        got = f(text[p:p + 6], text[p + 1:p + 7], h)
        want = rnn_loss(text[p:p + 6], text[p + 1:p + 7], h)
        assert_same(got, want)
        h = want[1]
    s = ft.stats()
    assert s.unique_graphs == 2 and s.recompiles == 1 and s.eager_fallbacks == 0, s


def test_one_changed_item_makes_the_whole_list_dynamic():
    def f(x, ids):
        return x[ids[0]] + x[ids[1]] * 2 + x[ids[2]] * 3
    g = ft.compile(f)
    x = np.arange(10.0)
    # only the last item changes first; later windows change the others: no more compiles
    for ids in ([1, 2, 3], [1, 2, 4], [5, 2, 4], [5, 6, 7], [0, 0, 9]):
        assert_same(g(x, ids), f(x, ids))
    assert ft.stats().unique_graphs == 2


def test_an_out_of_range_item_raises_numpys_index_error():
    def f(x, ids):
        return x[ids[0]] * 2.0
    g = ft.compile(f)
    x = np.arange(4.0)
    for ids in ([1], [2], [3]):
        assert_same(g(x, ids), f(x, ids))
    with pytest.raises(IndexError):
        g(x, [7])
    assert_same(g(x, [-4]), f(x, [-4]))


def test_int_arguments_are_not_specialised_on_zero_and_one():
    def f(x, k):
        return x * k + k
    g = ft.compile(f)
    x = np.ones(3)
    for k in (0, 1, 2, 1, 0, 5, -3):
        assert_same(g(x, k), f(x, k))
    assert ft.stats().unique_graphs == 2


def test_equal_int_arguments_do_not_share_a_symbol():
    def f(x, a, b):
        return x * a - b
    g = ft.compile(f)
    x = np.arange(3.0)
    for a, b in ((2, 2), (3, 3), (4, 5), (6, 2)):
        assert_same(g(x, a, b), f(x, a, b))
    assert ft.stats().unique_graphs == 2


def test_an_int_is_specialised_only_where_the_trace_branches_on_it():
    def f(x, n):
        if n > 3:
            return x * n
        return x - n
    g = ft.compile(f)
    x = np.ones(2)
    for n in (1, 2, 3, 0, 5, 9, 4, 2):
        assert_same(g(x, n), f(x, n))
    assert ft.stats().unique_graphs == 3      # n=1 static, then one graph per side of `n > 3`


def test_an_int_time_that_becomes_a_numpy_float_costs_one_recompile():
    def step(x, t, dt, count):
        return x * (1.0 - dt) + np.sin(t) * count
    g = ft.compile(step)
    x = np.ones(4)
    t = 0
    for k in range(12):
        dt = 0.01 * (k + 1)
        assert_same(g(x, t, dt, k), step(x, t, dt, k))
        t = t + np.float64(dt)
    assert ft.stats().unique_graphs == 2


class History:
    """Keeps every iterate on `self`; the convergence test reads the last two."""

    def __init__(self):
        self.responsibilities = []

    def e_step(self, X, means):
        d = ((X[:, None, :] - means[None]) ** 2).sum(-1)
        r = np.exp(-d)
        r = r / r.sum(1, keepdims=True)
        self.responsibilities.append(r)
        if len(self.responsibilities) > 1:
            delta = np.abs(self.responsibilities[-1] - self.responsibilities[-2]).max()
        else:
            delta = np.inf
        return r, delta


def test_a_history_list_on_self_that_grows_does_not_recompile_per_length():
    X = RNG.standard_normal((30, 2))
    want_model, got_model = History(), History()
    runs = []
    for model, hook in ((want_model, False), (got_model, True)):
        means, deltas = X[:3].copy(), []
        with ft.enabled() if hook else ft.config.patch():
            for _ in range(10):              # this loop is not compiled: e_step is, on every call
                r, delta = model.e_step(X, means)
                means = (r.T @ X) / r.sum(0)[:, None]
                deltas.append(float(delta))
        runs.append((means, deltas))
    want, got = runs
    assert_same(got[0], want[0])
    assert got[1] == pytest.approx(want[1], rel=1e-12)
    assert len(got_model.responsibilities) == 10
    for a, b in zip(got_model.responsibilities, want_model.responsibilities):
        assert_same(a, b)
    s = ft.stats()
    assert s.unique_graphs <= 3 and s.recompiles <= 2 and s.eager_fallbacks == 0, s


def decode_step(tokens, h, E, W, log):
    x = E[tokens[-1]]
    h = np.tanh(x + h)
    log.write(len(tokens))                       # an unknown call: a graph break
    nxt = int(np.argmax(h @ W))
    tokens.append(nxt)
    return h


class Log:
    def __init__(self):
        self.lines = []

    def write(self, n):
        self.lines.append(n)
        print(end="")                            # (an unknown call: the write is not inlined)


def test_a_decode_step_that_appends_after_a_graph_break_compiles_each_part_twice():
    E = RNG.standard_normal((13, 5))
    W = RNG.standard_normal((5, 13))
    f = ft.compile(decode_step)
    want_tokens, got_tokens = [1, 2], [1, 2]
    want_log, got_log = Log(), Log()
    h1 = h2 = np.zeros(5)
    for _ in range(12):
        h1 = decode_step(want_tokens, h1, E, W, want_log)
        h2 = f(got_tokens, h2, E, W, got_log)
        assert_same(h2, h1)
    assert got_tokens == want_tokens and got_log.lines == want_log.lines
    s = ft.stats()
    # the first part and the resume function: a static graph, then one for every later length
    assert s.unique_graphs <= 4 and s.eager_fallbacks == 0, s
    assert s.cache_hits >= 18, s


def sum_at(x, ids):
    s = 0.0
    for i in range(len(ids)):
        s += x[ids[i]] * 2
    return s


def test_a_loop_over_the_length_of_a_list_of_ints_is_one_graph_for_its_lengths():
    g = ft.compile(sum_at)
    x = np.arange(10.0)
    for ids in ([1, 2, 3], [4, 5], [1, 2, 3, 4, 9], [7] * 9, [0, 9, 1, 8]):
        assert_same(g(x, ids), sum_at(x, ids))
    assert ft.stats().unique_graphs == 2
    with pytest.raises(IndexError):
        g(x, [1, 20])


def read_both_ends(xs):
    first, last = xs[0], xs[-1]
    first += 1.0                                  # in place: visible through `last` when they are one
    return last * 2.0, len(xs)


def test_the_same_item_read_from_both_ends_is_one_value():
    g = ft.compile(read_both_ends)
    for n in (1, 2, 3, 1, 4):
        a = [np.arange(3.0) + i for i in range(n)]
        b = [v.copy() for v in a]
        assert_same(g(a, ), read_both_ends(b))
        for u, v in zip(a, b):
            assert_same(u, v)


def append_then_read(xs, v):
    xs.append(v * 2.0)
    xs.append(v + 1.0)
    return xs[-2] + xs[0], len(xs)


def test_items_appended_in_the_trace_are_read_back_and_replayed():
    g = ft.compile(append_then_read)
    for n in (1, 2, 3, 5):
        a = [np.full(2, float(i)) for i in range(n)]
        b = [u.copy() for u in a]
        v = np.arange(2.0)
        assert_same(g(a, v), append_then_read(b, v))
        assert len(a) == len(b)
        for u, w in zip(a, b):
            assert_same(u, w)
    assert ft.stats().unique_graphs <= 2


def test_a_list_that_is_iterated_still_specialises_its_length():
    def f(x, ws):
        for w in ws:
            x = x * w
        return x
    g = ft.compile(f)
    x = np.ones(2)
    for ws in ([1.5, 2.0], [0.5, 3.0], [2.0, 2.0, 2.0]):
        assert_same(g(x, ws), f(x, ws))
    assert ft.stats().unique_graphs == 2          # the floats are inputs; each length is a graph


def scale_by_count(xs, scale, log):
    n = len(xs)
    y = xs[-1] * scale
    log.write(str(n))                            # a graph break at str(n) and at the C method write;
                                                  # n, y and the text go to resume functions
    return y * n + xs[0]


def test_an_int_handed_to_a_resume_function_becomes_its_input():
    import io
    f = ft.compile(scale_by_count)
    log, want_log = io.StringIO(), io.StringIO()
    xs = [np.arange(3.0)]
    for k in range(8):
        xs.append(np.full(3, float(k)))
        assert_same(f(xs, 0.5, log), scale_by_count(xs, 0.5, want_log))
    assert log.getvalue() == want_log.getvalue()
    s = ft.stats()
    assert s.graph_breaks >= 1 and s.eager_fallbacks == 0, s
    # the part before the break and the one after it: static, then dynamic; the text is passed through
    assert s.unique_graphs <= 4 and s.recompiles <= 2 and s.frames_compiled <= 5, s


def tagged(x, tag):
    return x * 2.0, tag


def by_tag(x, tag):
    if tag == "double":
        return x * 2.0
    return x


def test_a_string_that_only_flows_through_is_not_guarded_by_value():
    f = ft.compile(tagged)
    for k in range(6):
        got = f(np.ones(2), f"window {k}")
        assert got[1] == f"window {k}" and np.array_equal(got[0], np.full(2, 2.0))
    assert ft.stats().frames_compiled == 1
    g = ft.compile(by_tag)                       # read by the trace: guarded, an entry per value
    for tag in ("double", "same", "double", "same"):
        assert_same(g(np.ones(2), tag), by_tag(np.ones(2), tag))
    assert ft.stats().frames_compiled == 3
