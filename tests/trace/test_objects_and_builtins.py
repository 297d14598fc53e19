"""User objects (__call__, methods, properties, super(), classmethods, dataclasses, partial),
generators and builtins over containers: traced inline, compared with plain Python."""
import dataclasses
import functools

import numpy as np
import pytest

import frametrace as ft
from helpers import BACKENDS, assert_same

def whole_graph():
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0 and s.unique_graphs >= 1, s


rng = np.random.default_rng(5)


class Base:
    scale = 2.0                         # a class attribute
    names = ("a", "b")                 # a class attribute of another type

    def __init__(self, d):
        self.w = rng.standard_normal((d, d))

    def act(self, x):
        return np.tanh(x)

    @property
    def wt(self):
        return self.w.T

    @staticmethod
    def shift(x):
        return x + 1.0

    @classmethod
    def factor(cls):
        return cls.scale * 3

    def __call__(self, x):
        return self.act(x @ self.wt) * self.scale + self.shift(x) * self.factor()


class Child(Base):
    scale = 0.5

    def act(self, x):
        return super().act(x) * len(self.names)


class Stack:
    def __init__(self, d, n):
        self.blocks = [Base(d) if i % 2 else Child(d) for i in range(n)]

    def __call__(self, x):
        for block in self.blocks:
            x = block(x)
        if isinstance(self.blocks[0], Child) and type(self.blocks[1]) is Base:
            x = x * 2.0
        return x


@pytest.mark.parametrize("backend", BACKENDS)
def test_callable_objects_in_lists_with_methods_properties_super(backend):
    model = Stack(4, 3)
    f = ft.compile(lambda m, x: m(x), backend=backend)
    for n in (2, 3, 5):
        x = rng.standard_normal((n, 4))
        assert_same(f(model, x), model(x))
    whole_graph()
    assert ft.stats().unique_graphs <= 2


class Grandchild(Child):
    def act(self, x):                   # a chain: each super() resolves past its own __class__
        return super().act(x) + super(Child, self).act(x) + super().scale

    def __call__(self, x):
        return super().__call__(x) - self.act(x)


@pytest.mark.parametrize("backend", BACKENDS)
def test_super_chains_attributes_and_the_two_argument_form(backend):
    model = Grandchild(3)
    f = ft.compile(lambda m, x: m(x), backend=backend)
    for n in (2, 4, 7):
        x = rng.standard_normal((n, 3))
        assert_same(f(model, x), model(x))
    whole_graph()
    assert ft.stats().unique_graphs <= 2


def test_compiling_a_bound_method_and_an_object_call():
    b = Base(3)
    x = rng.standard_normal((2, 3))
    assert_same(ft.compile(b.__call__)(x), b(x))
    whole_graph()


@dataclasses.dataclass
class Config:
    eps: float
    heads: int
    weight: np.ndarray


def normed(cfg, x):
    return x / (np.abs(x).sum() + cfg.eps) * cfg.weight[: cfg.heads].sum()


def test_dataclass_attributes():
    cfg = Config(1e-3, 2, rng.standard_normal(4))
    x = rng.standard_normal(5)
    assert_same(ft.compile(normed)(cfg, x), normed(cfg, x))
    whole_graph()


def scaled(x, a, b=1.0):
    return x * a + b


def use_partial(x, p):
    q = functools.partial(scaled, b=3.0)
    return p(x) + q(x, 2.0)


def test_functools_partial_passed_in_and_made_inside():
    x = rng.standard_normal(3)
    p = functools.partial(scaled, a=0.5)
    assert_same(ft.compile(use_partial)(x, p), use_partial(x, p))
    whole_graph()


def gen_squares(xs):
    for x in xs:
        if x.shape[0] > 1:
            yield x * x


def builtins_over_containers(xs, d):
    total = sum(float(np.sum(x)) for x in xs)
    sq = list(gen_squares(xs))
    doubled = list(map(lambda t: t * 2.0, xs))
    big = list(filter(lambda t: t.shape[0] > 2, xs))
    sizes = sorted((x.shape[0] for x in xs), reverse=True)
    by_size = sorted(xs, key=lambda t: t.shape[0])
    flags = (any(x.shape[0] > 3 for x in xs), all(x.ndim == 1 for x in xs))
    pairs = dict(zip(d.keys(), reversed(list(d.values()))))
    firsts = [i + x[0] for i, x in enumerate(xs)]
    return total, sq, doubled, big, sizes, by_size[0], flags, pairs, tuple(firsts), min(sizes), max(sizes)


@pytest.mark.parametrize("backend", BACKENDS)
def test_generators_and_builtins_over_containers(backend):
    xs = [rng.standard_normal(n) for n in (3, 1, 4)]
    d = {"a": rng.standard_normal(2), "b": rng.standard_normal(2)}
    want = builtins_over_containers(xs, d)
    got = ft.compile(builtins_over_containers, backend=backend)(xs, d)
    assert type(got[0]) is float and got[0] == pytest.approx(want[0], rel=1e-12)
    for g, w in zip(got[1:], want[1:]):
        assert_same(g, w)
    whole_graph()


def star_calls(x, params, extra):
    return scaled(x, **params) + scaled(*extra) + scaled(x, *extra[1:], **{"b": 0.5})


def test_calls_with_star_args_and_kwargs_are_inlined():
    x = rng.standard_normal(3)
    params = {"a": rng.standard_normal(3), "b": rng.standard_normal(3)}
    extra = (rng.standard_normal(3), 2.0)
    assert_same(ft.compile(star_calls)(x, params, extra), star_calls(x, params, extra))
    whole_graph()


def test_sizes_and_shapes_leave_as_plain_ints():
    f = ft.compile(lambda x: (x.sum(), len(x), x.shape, {x.shape[0]: x.size}), dynamic=True)
    for n in (3, 4, 7):
        _, m, shape, table = f(np.ones((n, 2)))
        assert type(m) is int and m == n
        assert all(type(s) is int for s in shape) and shape == (n, 2)
        assert table == {n: 2 * n} and all(type(k) is int for k in table)
    assert ft.stats().unique_graphs <= 4


def float_of_data(x, y):
    s = float(np.sum(x)) * 2.0 + 1.0
    return x * s, y * -s, s, s > 0.5


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("ydtype", [np.float64, np.float32, np.int32])
def test_float_of_a_reduction_is_a_python_float_with_python_promotion(backend, ydtype):
    x = rng.standard_normal(5)
    y = (rng.standard_normal(3) * 10).astype(ydtype)
    got, want = ft.compile(float_of_data, backend=backend)(x, y), float_of_data(x, y)
    assert_same(got[0], want[0])
    assert_same(got[1], want[1])
    assert type(got[2]) is float and got[2] == pytest.approx(want[2], rel=1e-12)
    assert got[3] == want[3]


def test_returned_iterators_keep_their_type():
    d = {"a": np.ones(2)}
    got = ft.compile(lambda d, x: (map(abs, [x]), d.items(), zip([x], [x])))(d, np.ones(2))
    assert [type(g) for g in got] == [map, type(d.items()), zip]


class Table:
    weights = np.arange(6.0)
    offset = 2

    @staticmethod
    def scale(x):
        return x * 3.0

    @classmethod
    def shifted(cls, x):
        return x + cls.offset

    def plain(self, x):
        return x - 1.0


def class_level_reads(obj, x):
    cls = type(obj)
    return (Table.scale(x) + cls.shifted(x) + Table.plain(obj, x) + Table.weights[: x.shape[0]],
            isinstance(obj, Table), cls is Table)


def test_attributes_read_off_a_user_class():
    x = rng.standard_normal(4)
    got, want = ft.compile(class_level_reads)(Table(), x), class_level_reads(Table(), x)
    assert_same(got[0], want[0])
    assert got[1:] == want[1:]
    whole_graph()


def apply_twice(x, fn, other):
    return fn(fn(x)), fn is other


def test_fresh_lambdas_share_a_graph_and_identity_is_guarded():
    f = ft.compile(apply_twice)
    for i in range(2, 7):
        x = rng.standard_normal(3)
        fn = lambda v, i=i: v * 2.0 + i      # noqa: E731 - a fresh closure per call
        other = fn if i % 2 else (lambda v: v)
        got, want = f(x, fn, other), apply_twice(x, fn, other)
        assert_same(got[0], want[0])
        assert got[1] is want[1]
    assert ft.stats().unique_graphs <= 4


class Scaled:
    @property
    def factor(self):
        return 2.0

    def f(self, x):
        return x * self.factor


class ScaledChild(Scaled):
    def f(self, x):
        return super().f(x) + 1


class ScaledGrandchild(ScaledChild):
    @property
    def factor(self):
        return -super().factor           # a property reaching past itself, two levels down


def test_super_property_in_a_three_level_hierarchy():
    obj = ScaledGrandchild()
    f = ft.compile(obj.f)
    for n in (2, 3):
        assert_same(f(np.ones(n)), obj.f(np.ones(n)))
    whole_graph()


class Talky(Scaled):
    def f(self, x):
        y = x + 1
        print("f")                       # a graph break, then super() in the resume function
        return super().f(y)

    def g(self, x):
        y = x + 1
        print("g")
        s = super()                      # the zero-argument call itself in the resume function
        return s.f(y) * len(str(s)[:0] or "ab")

    def h(self, x):
        return super(Talky, self).f(x) + super().f(print("h") or x)   # a break inside super()'s arguments


@pytest.mark.parametrize("method", ["f", "g", "h"])
def test_zero_argument_super_after_a_graph_break(method, capsys):
    obj = Talky()
    want = [getattr(obj, method)(np.ones(n)) for n in (2, 3)]
    f = ft.compile(getattr(obj, method))
    got = [f(np.ones(n)) for n in (2, 3)]
    for g, w in zip(got, want):
        assert_same(g, w)
    out = capsys.readouterr().out.split()
    assert out == [method] * 4


def test_a_partial_is_a_compiled_entry():
    entry = ft.compile(functools.partial(scaled, a=3.0))
    for n in (2, 3, 4):
        x = rng.standard_normal(n)
        assert_same(entry(x), scaled(x, 3.0))
        assert_same(entry(x, b=-1.0), scaled(x, 3.0, -1.0))
    positional = ft.compile(functools.partial(scaled, rng.standard_normal(3), 2.0))
    assert_same(positional(), scaled(positional.args[0], 2.0))
    assert ft.stats().graph_breaks == 0


class Anything:
    """A stand-in (mock, proxy, lazy module): every attribute it lacks is made up."""

    def __getattr__(self, name):
        return ("made", name)

    def set_data(self, data):
        pass


class Slotted:
    __slots__ = ("k",)

    def __getattr__(self, name):        # answers `__dict__` too, with something that is not a dict
        return ("made", name)


class Failing:
    def __getattr__(self, name):
        raise RuntimeError(f"lazy attribute {name} failed to load")


class OddCallable:
    def __call__(self, x):
        return x + 1


def test_objects_whose_attributes_are_not_what_they_seem():
    im, sl, odd = Anything(), Slotted(), OddCallable()
    sl.k = 2.0
    odd.__module__ = ("made", "__module__")      # a callable whose __module__ is not a str
    odd.__name__ = 3

    def step(x, im, sl, odd):
        y = np.sqrt(x) + 1
        im.set_data(y)
        return odd(y) * sl.k, im.scale, sl.extra

    f = ft.compile(step)
    for n in (4, 5):
        x = np.arange(float(n))
        got, want = f(x, im, sl, odd), step(x, im, sl, odd)
        assert_same(got[0], want[0])
        assert got[1:] == want[1:]


def test_an_attribute_whose_getattr_raises_raises_the_same():
    def read(x, obj):
        return x * 2, obj.weights

    f = ft.compile(read)
    for _ in range(2):
        with pytest.raises(RuntimeError, match="lazy attribute weights failed to load"):
            f(np.ones(2), Failing())
