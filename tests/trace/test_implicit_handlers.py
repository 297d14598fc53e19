"""Exception-table entries the compiler adds without a try/with in the source (3.12+: inlined
comprehensions restore the locals they shadow; a generator's body turns StopIteration into
RuntimeError). They are not user blocks: frames with them trace whole, while a real try block
inside a generator still stops the inlining (a graph break, same results)."""
import numpy as np
import pytest

import frametrace as ft
from frametrace import pyversion
from helpers import BACKENDS, assert_same

rng = np.random.default_rng(13)


def plain_gen(xs):
    for x in xs:
        yield x * 2.0


def gen_with_try(xs):
    for x in xs:
        try:
            yield x + 1.0
        except ValueError:
            pass


def gen_exhausting(xs):
    it = iter(xs)
    while True:
        yield next(it) + 1.0                # StopIteration inside a generator: RuntimeError (PEP 479)


def with_comprehension(xs):
    return [x * x for x in xs]


def with_try(x):
    try:
        return x + 1
    except ValueError:
        return x


@pytest.mark.parametrize("fn, user_block", [(plain_gen, False), (gen_with_try, True), (gen_exhausting, False),
                                            (with_comprehension, False), (with_try, True)])
def test_only_user_blocks_count_as_exception_regions(fn, user_block):
    code = fn.__code__
    assert pyversion.has_exception_table(code) is user_block
    assert bool(pyversion.protected_offsets(code)) is user_block
    if user_block and fn is gen_with_try:
        # protected: the try body and its handler, not the whole generator (its `for` line)
        first = code.co_firstlineno
        lines = {ins.positions.lineno for ins in pyversion.instructions(code)
                 if ins.offset in pyversion.protected_offsets(code)}
        assert first + 3 in lines and first + 1 not in lines, (lines, first)


def consume_plain(xs):
    return sum(plain_gen(xs)) + sum(x.sum() for x in xs)


def consume_with_try(xs):
    return list(gen_with_try(xs))


def consume_exhausting(xs):
    return list(gen_exhausting(xs))


@pytest.mark.parametrize("backend", BACKENDS)
def test_generators_trace_whole_and_a_try_inside_one_breaks(backend):
    f = ft.compile(consume_plain, backend=backend)
    for n in (3, 5, 8):
        xs = [rng.standard_normal(n) for _ in range(3)]
        assert_same(f(xs), consume_plain(xs))
    s = ft.stats()
    assert s.graph_breaks == 0 and s.eager_fallbacks == 0 and 1 <= s.unique_graphs <= 2, s
    ft.reset()
    xs = [rng.standard_normal(4) for _ in range(2)]
    assert_same(ft.compile(consume_with_try, backend=backend)(xs), consume_with_try(xs))
    assert ft.stats().graph_breaks + ft.stats().eager_fallbacks >= 1


@pytest.mark.parametrize("backend", BACKENDS)
def test_stop_iteration_inside_an_inlined_generator_raises_runtime_error(backend):
    xs = [rng.standard_normal(3) for _ in range(2)]
    with pytest.raises(RuntimeError, match="generator raised StopIteration"):
        consume_exhausting(xs)
    with pytest.raises(RuntimeError, match="generator raised StopIteration"):
        ft.compile(consume_exhausting, backend=backend)(xs)
