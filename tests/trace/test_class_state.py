"""Class state: class attributes read through `type(self)`, a classmethod's `cls` or `super()` are
guarded (a later change is seen), stores to them are side effects replayed after the graph and
seen by later reads in the same trace, through the class or its instances."""
import numpy as np
import pytest

import frametrace as ft
from helpers import assert_same


def _run_both(make, calls):
    """make() -> (fn, state()); the same calls eagerly and compiled, results and state compared."""
    fn, state = make()
    want = [(fn(*args), state()) for args in calls]
    fn, state = make()
    compiled = ft.compile(fn)
    got = [(compiled(*args), state()) for args in calls]
    for (gr, gs), (wr, ws) in zip(got, want):
        assert_same(gr, wr)
        assert gs == ws, (gs, ws)


def test_type_self_counter_is_seen_by_later_calls():
    def make():
        class Counter:
            n = 0

            def f(self, x):
                type(self).n += 1
                return x * type(self).n
        return Counter().f, lambda: Counter.n
    _run_both(make, [(np.ones(2),)] * 5)
    assert ft.stats().frames_compiled <= 3      # 0 and 1 specialised (the int policy), then an input


def test_counter_on_a_base_class_is_written_to_the_subclass():
    def make():
        class Base:
            n = 10

        class Child(Base):
            def f(self, x):
                type(self).n += 1          # reads Base.n once, then Child's own
                return x + type(self).n + Base.n
        return Child().f, lambda: (Base.n, Child.n)
    _run_both(make, [(np.ones(3),)] * 3)


def test_classmethod_counter():
    def make():
        class Registry:
            calls = 0

            @classmethod
            def note(cls, x):
                cls.calls = cls.calls + 1
                return x * cls.calls

            def f(self, x):
                return self.note(x) + 1
        return Registry().f, lambda: Registry.calls
    _run_both(make, [(np.arange(3.0),)] * 4)


def test_instance_read_sees_a_class_store_of_the_same_trace():
    def make():
        class Model:
            scale = 1.0

            def f(self, x):
                type(self).scale = self.scale * 2.0
                return x * self.scale
        m = Model()
        return m.f, lambda: Model.scale
    _run_both(make, [(np.ones(2),)] * 3)


def test_an_instance_attribute_shadows_the_stored_class_attribute():
    def make():
        class Model:
            scale = 1.0

            def __init__(self):
                self.scale = 5.0

            def f(self, x):
                type(self).scale = 3.0
                return x * self.scale + type(self).scale
        return Model().f, lambda: None
    _run_both(make, [(np.ones(2),)] * 2)


def test_class_attribute_through_a_global_class():
    def make():
        class Stats:
            seen = 0
            total = 0.0

        def f(x):
            Stats.seen += 1
            Stats.total = Stats.total + float(x.shape[0])
            return x / Stats.seen
        return f, lambda: (Stats.seen, Stats.total)
    _run_both(make, [(np.ones(n),) for n in (2, 3, 4, 5)])


def test_super_reads_a_class_attribute_that_changes():
    class Base:
        k = 2.0

    class Child(Base):
        k = 5.0

        def f(self, x):
            return x * super().k + self.k

    f = ft.compile(Child().f)
    assert_same(f(np.ones(2)), np.full(2, 7.0))
    Base.k = 3.0
    assert_same(f(np.ones(2)), np.full(2, 8.0))
    Child.k = 1.0
    assert_same(f(np.ones(2)), np.full(2, 4.0))


def test_an_array_class_attribute_is_an_input():
    class Layer:
        w = np.eye(3)

        def f(self, x):
            return x @ type(self).w

    f = ft.compile(Layer().f)
    assert_same(f(np.ones((2, 3))), np.ones((2, 3)))
    Layer.w = np.eye(3) * 2
    assert_same(f(np.ones((2, 3))), np.full((2, 3), 2.0))


@pytest.mark.parametrize("stored", ["lambda self: 1", "staticmethod(len)", "property(lambda s: 2)"])
def test_storing_a_function_or_descriptor_on_a_class_stays_correct(stored):
    def make():
        class K:
            def f(self, x):
                type(self).g = eval(stored)
                return x + 1
        return K().f, lambda: None
    _run_both(make, [(np.ones(2),)] * 2)
