"""Class and closure state. Class attributes read through `type(self)`, a classmethod's `cls` or
`super()` are guarded (a later change is seen); stores to them are side effects replayed after
the graph and seen by later reads in the same trace, through the class or its instances. A
`nonlocal` write of an inlined closure to a cell the trace did not make is replayed into that
cell; two closures sharing a cell share it in the trace too."""
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


def make_tick(step):
    count = 0

    def tick(v):
        nonlocal count
        count = count + step
        return v + count

    def peek():
        return count
    return tick, peek


def test_nonlocal_write_of_an_inlined_closure_is_kept():
    def make():
        tick, peek = make_tick(0.5)

        class Holder:
            bump = staticmethod(tick)          # reached through a class: no source of its own

        def f(x):
            y = tick(x) + tick(x)              # the second call sees the first one's write
            return y * peek(), Holder.bump(x)
        return f, lambda: tick.__closure__[0].cell_contents
    _run_both(make, [(np.ones(2),)] * 4)


def test_a_fresh_closure_per_call_writes_its_own_cell():
    def apply(x, tick):
        return tick(x) * 2

    f = ft.compile(apply)
    for step in (1, 2, 3):
        tick, peek = make_tick(step)
        assert_same(f(np.ones(3), tick), (np.ones(3) + step) * 2)
        assert peek() == step
        assert_same(f(np.ones(3), tick), (np.ones(3) + 2 * step) * 2)
        assert peek() == 2 * step


def test_two_closures_sharing_a_cell_or_not():
    def both(x, tick, peek):
        return tick(x) + peek()

    f = ft.compile(both)
    tick, peek = make_tick(1.0)
    assert_same(f(np.ones(2), tick, peek), np.full(2, 3.0))          # one cell: peek sees 1.0
    other_tick, _ = make_tick(1.0)
    _, other_peek = make_tick(5.0)                                      # two cells, same code
    assert_same(f(np.ones(2), other_tick, other_peek), np.full(2, 2.0))
    assert other_tick.__closure__[0].cell_contents == 1.0 and other_peek() == 0


def test_a_sibling_closure_writes_the_compiled_frames_free_variable():
    def make():
        total = 0.0

        def add(v):
            nonlocal total
            total = total + float(v.sum())

        def f(x):
            add(x)
            add(x * 2)
            return x * total
        return f, lambda: total
    _run_both(make, [(np.arange(3.0),), (np.arange(4.0),), (np.ones(2),)])


# ------------------------------------------------ closure variables rebound inside a loop node

def _sizes_compiled_once(fn, calls, state=None, compiles=2):
    """Eager vs compiled over calls of growing sizes: same results (and state), and the sizes
    after the first share one compiled entry (the loop is a node over a symbolic range; sizes
    0 and 1 are specialized: one entry more each)."""
    want = [(fn(*args), state() if state else None) for args in calls]
    ft.reset()
    compiled = ft.compile(fn)
    got = [(compiled(*args), state() if state else None) for args in calls]
    for (gr, gs), (wr, ws) in zip(got, want):
        assert_same(gr, wr)
        assert type(gr) is type(wr)
        assert gs == ws, (gs, ws)
    assert ft.stats().frames_compiled == compiles


def test_nonlocal_int_bumped_by_an_inlined_closure_in_a_loop_node():
    def f(x):
        k = 0

        def bump():
            nonlocal k
            k += 1
        for _i in range(x.shape[0]):
            bump()
        return k
    _sizes_compiled_once(f, [(np.ones(2),), (np.ones(3),), (np.ones(7),), (np.ones(0),), (np.ones(1),)],
                         compiles=4)


def test_nonlocal_float_accumulated_in_a_loop_node():
    def f(x):
        total = 0.0

        def add(v):
            nonlocal total
            total = total + v
        for i in range(x.shape[0]):
            add(x[i])
        return total
    _sizes_compiled_once(f, [(np.arange(2.0),), (np.arange(3.0),), (np.arange(6.0),)])


def test_a_cell_of_the_frame_rebound_in_the_loop_and_read_by_a_closure():
    def f(x):
        k = 0

        def get():
            return k
        for _i in range(x.shape[0]):
            k = k + 2
        return get() * x
    _sizes_compiled_once(f, [(np.ones(2),), (np.ones(3),), (np.ones(5),)])


def test_nested_loops_bump_one_cell_and_an_array_in_another():
    def f(x):
        n = 0
        acc = np.zeros(x.shape[1])

        def bump(row):
            nonlocal n, acc
            n += 1
            acc = acc + row
        for i in range(x.shape[0]):
            for _j in range(x.shape[1]):
                bump(x[i])
        return n, acc
    _sizes_compiled_once(f, [(np.ones((2, 3)),), (np.arange(12.0).reshape(3, 4),), (np.ones((4, 2)),)])


def test_a_sibling_closure_rebinds_the_frames_free_variable_in_a_loop():
    def make():
        total = 0.0

        def add(v):
            nonlocal total
            total = total + float(v)

        def f(x):
            for i in range(x.shape[0]):
                add(x[i])
            return x * total
        return f, lambda: total
    fn, state = make()
    want = [(fn(a), state()) for a in (np.arange(3.0), np.arange(4.0), np.ones(2))]
    fn, state = make()
    compiled = ft.compile(fn)
    got = [(compiled(a), state()) for a in (np.arange(3.0), np.arange(4.0), np.ones(2))]
    for (gr, gs), (wr, ws) in zip(got, want):
        assert_same(gr, wr)
        assert gs == ws and type(gs) is type(ws), (gs, ws)


def test_a_closure_variable_bumped_under_a_data_dependent_if_in_a_loop():
    def f(x):
        k = 0

        def bump():
            nonlocal k
            k += 1
        for i in range(x.shape[0]):
            if x[i] > 0:
                bump()
        return k
    compiled = ft.compile(f)
    for a in (np.array([1.0, -1.0]), np.array([1.0, 2.0, -3.0]), np.array([-1.0, 2.0, 3.0, 4.0, 0.0])):
        assert compiled(a) == f(a)
