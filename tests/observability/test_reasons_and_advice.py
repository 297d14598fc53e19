"""Break and recompile reasons name types and sources, never object addresses, so equal causes
read (and count) the same; a cause seen at three recompiles gets advice naming its source, the
user line that made it a guard, and the fix; a branch on a value says the value is specialised
there."""
import collections
import logging
import math
import re

import numpy as np
import pytest

import frametrace as ft
from frametrace.guards.text import value_text

ADDRESS = re.compile(r"0x[0-9a-fA-F]{4,}")


@pytest.mark.parametrize("value, text", [
    (1.0.is_integer, "float.is_integer"),
    ("abc".zfill, "str.zfill"),
    (collections.OrderedDict, "class collections.OrderedDict"),
    (math.floor, "math.floor"),
    (np.sum, "numpy.sum"),
    (object(), "object object"),
    (np.ones(2).sum, "ndarray.sum"),
    (2.5, "2.5"),
    ("x" * 100, repr("x" * 100)[:37] + "..."),
])
def test_values_are_named_by_type_and_name(value, text):
    assert value_text(value) == text


def zfill_width(x, n):
    return x * len(str(n).zfill(3))


def calls_a_float_method(x):
    t = x.shape[0] * 0.5
    check = t.is_integer
    return x * check()


@pytest.mark.parametrize("fn, args", [(zfill_width, (np.ones(2), 7)), (calls_a_float_method, (np.ones(4),))])
def test_break_reasons_carry_no_addresses(fn, args):
    reasons = [str(r) for r in ft.explain(fn, *args).break_reasons]
    assert reasons and not any(ADDRESS.search(r) for r in reasons), reasons
    again = [str(r) for r in ft.explain(fn, *args).break_reasons]
    assert again == reasons            # another call, other objects: the same text


def first_item(x, ids):
    return x[ids[0]] * 2.0


def sum_of(x, ws):
    for w in ws:
        x = x * w
    return x


def scaled_unless_multiple(x, n):
    if n % 4 == 0:
        return x * 2.0
    return x + n


def test_a_cause_seen_three_times_names_its_source_line_and_fix(caplog):
    f = ft.compile(first_item, dynamic=False)
    x = np.arange(6.0)
    with caplog.at_level(logging.INFO, logger="frametrace.recompiles"):
        for k in range(4):
            assert f(x, [k, 1]) == x[k] * 2.0
    text = caplog.text
    assert "L['ids'][0] changed at 3 recompiles" in text, text
    assert "test_reasons_and_advice.py" in text and "return x[ids[0]] * 2.0" in text
    assert "np.asarray(ids)" in text and "FRAMETRACE_DYNAMIC_SOURCES=\"L['ids'][*]\"" in text
    assert "changed at 2 recompiles" not in text          # below three: the short advice only


def test_a_list_used_whole_is_named_with_the_line_that_iterates_it(caplog):
    f = ft.compile(sum_of)
    with caplog.at_level(logging.INFO, logger="frametrace.recompiles"):
        for n in range(1, 6):
            f(np.ones(2), [1.5] * n)
    assert "L['ws'] changed at 3 recompiles" in caplog.text
    assert "for w in ws:" in caplog.text and "read its items by index" in caplog.text


def test_a_branch_on_an_int_says_it_is_specialised_there(caplog):
    f = ft.compile(scaled_unless_multiple)
    with caplog.at_level(logging.INFO, logger="frametrace.recompiles"):
        for n in (1, 2, 3, 4, 5, 8):
            assert np.array_equal(f(np.ones(2), n), scaled_unless_multiple(np.ones(2), n))
    assert "is specialised where the code branches on it" in caplog.text
    assert "if n % 4 == 0:" in caplog.text
    assert ft.stats().unique_graphs == 3


def test_explain_lists_the_recompiles_with_their_advice():
    f = ft.compile(first_item, dynamic=False)
    x = np.arange(6.0)
    for k in range(4):
        f(x, [k, 1])
    history = ft.explain(f, x, [5, 1]).recompiles
    assert len(history) >= 3, history
    causes = [[str(r).split(": ", 1)[1].split(" == ")[0] for r in reasons] for _, reasons, _ in history]
    assert all(c[0] == "L['ids'][0]" for c in causes), causes
    assert "changed at 3 recompiles" in history[2][2]
