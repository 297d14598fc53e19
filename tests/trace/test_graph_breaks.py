"""Graph breaks: the part before an untraceable instruction is compiled, the instruction runs in
Python, and a resume function (compiled on its own first call) continues the frame."""
import dis
import sys

import numpy as np
import pytest

import frametrace as ft
from frametrace.resume.codegen import make_break_code, make_resume_code
from helpers import assert_same


def with_print(x):
    y = np.exp(x) + 1.0
    print("halfway", y.shape)
    return np.log(y) * 2.0


def test_break_at_print_runs_print_once_and_compiles_both_halves(capsys):
    f = ft.compile(with_print)
    x = np.linspace(-1, 1, 9)
    assert_same(f(x), with_print(x))
    assert capsys.readouterr().out == "halfway (9,)\nhalfway (9,)\n"
    s = ft.stats()
    assert (s.unique_graphs, s.graph_breaks) == (2, 1)
    assert_same(f(x), with_print(x))            # both halves hit their caches now
    assert ft.stats().unique_graphs == 2 and ft.stats().cache_hits == 2


def test_resume_function_recompiles_on_its_own():
    f = ft.compile(with_print, dynamic=False)
    for n in (3, 4, 5):
        x = np.arange(float(n))
        assert_same(f(x), with_print(x))
    cache = f._frametrace_cache
    resume = [v for k, v in cache.state.data["resume"].items() if k[0] == "resume"]
    assert len(resume) == 1
    inner = resume[0]._frametrace_cache
    assert len(inner.entries) == 3 and len(cache.entries) == 3
    assert inner.state.frame_id != cache.state.frame_id


def data_branch(x):
    y = x * 2.0
    if y.sum() > 0:
        return y + 1.0
    return y - 1.0


def test_data_dependent_branch_takes_both_ways():
    f = ft.compile(data_branch)
    for x in (np.ones(4), -np.ones(4), np.ones(4), np.zeros(4)):
        assert_same(f(x), data_branch(x))
    assert ft.stats().graph_breaks == 1


def helper_with_print(y):
    print("in helper", y.dtype)
    return y * 3


def test_break_inside_an_inlined_call_breaks_at_the_call(capsys):
    def outer(x):
        a = x + 1
        b = helper_with_print(a)
        return b - x
    f = ft.compile(outer)
    x = np.arange(5.0)
    assert_same(f(x), outer(x))
    assert capsys.readouterr().out.count("in helper float64") == 2


def test_item_feeding_control_flow():
    def scaled(x):
        m = x.max().item()
        if m > 1.0:
            return x / m
        return x
    f = ft.compile(scaled)
    for x in (np.array([0.5, 3.0]), np.array([0.1, 0.2]), np.array([7.0, 2.0])):
        assert_same(f(x), scaled(x))


def test_break_with_keyword_arguments_and_values_below_on_the_stack(capsys):
    def g(x):
        total = x.sum() + float(len(str(print("v", 1, sep=":"))))
        return total * x
    f = ft.compile(g)
    x = np.arange(3.0)
    assert_same(f(x), g(x))
    assert capsys.readouterr().out == "v:1\nv:1\n"


@pytest.mark.parametrize("kind", ["try", "loop"])
def test_unsplittable_frames_run_eagerly_and_correctly(kind, capsys):
    def in_try(x):
        try:
            print("t")
            return x + 1
        finally:
            pass

    def in_loop(x):
        for i in range(2):
            print(i)
            x = x + i
        return x
    fn = in_try if kind == "try" else in_loop
    f = ft.compile(fn)
    x = np.ones(3)
    assert_same(f(x), fn(x))
    assert_same(f(x), fn(x))
    out = capsys.readouterr().out
    assert out.count("t" if kind == "try" else "1") == 4


def test_fullgraph_raises_naming_the_reason_and_line():
    f = ft.compile(with_print, fullgraph=True)
    with pytest.raises(ft.errors.GraphBreakError) as info:
        f(np.ones(3))
    msg = str(info.value)
    assert "print" in msg and "test_graph_breaks.py" in msg


def test_explain_counts_graphs_and_breaks():
    out = ft.explain(with_print, np.ones(4))
    assert (out.graph_count, out.graph_break_count) == (2, 1)
    assert "print" in str(out.break_reasons[0])
    text = str(out)
    assert "Graph Count: 2" in text and "Break Reason 1" in text


def _ops(code):
    return [(i.opname, i.argrepr if i.argrepr else ("" if i.arg is None else str(i.arg)))
            for i in dis.get_instructions(code)]


# The break function of `print("halfway", y.shape)` in with_print, per CPython version: 3.11 has PRECALL;
# 3.13 puts the callable below its NULL.
_PRINT_BREAK_GOLDEN = {
    (3, 11): ((True, False, False, False), [
        ("RESUME", "0"), ("PUSH_NULL", ""), ("LOAD_FAST", "___stack1"), ("LOAD_FAST", "___stack2"),
        ("LOAD_FAST", "___stack3"), ("PRECALL", "2"), ("CALL", "2"), ("STORE_FAST", "___result"),
        ("PUSH_NULL", ""), ("LOAD_CONST", repr(print)), ("LOAD_FAST", "___result"), ("LOAD_FAST", "x"),
        ("LOAD_FAST", "y"), ("PRECALL", "3"), ("CALL", "3"), ("RETURN_VALUE", "")]),
    (3, 12): ((True, False, False, False), [
        ("RESUME", "0"), ("PUSH_NULL", ""), ("LOAD_FAST", "___stack1"), ("LOAD_FAST", "___stack2"),
        ("LOAD_FAST", "___stack3"), ("CALL", "2"), ("STORE_FAST", "___result"),
        ("PUSH_NULL", ""), ("LOAD_CONST", repr(print)), ("LOAD_FAST", "___result"), ("LOAD_FAST", "x"),
        ("LOAD_FAST", "y"), ("CALL", "3"), ("RETURN_VALUE", "")]),
    (3, 13): ((False, True, False, False), [
        ("RESUME", "0"), ("LOAD_FAST", "___stack0"), ("PUSH_NULL", ""), ("LOAD_FAST", "___stack2"),
        ("LOAD_FAST", "___stack3"), ("CALL", "2"), ("STORE_FAST", "___result"),
        ("LOAD_CONST", repr(print)), ("PUSH_NULL", ""), ("LOAD_FAST", "___result"), ("LOAD_FAST", "x"),
        ("LOAD_FAST", "y"), ("CALL", "3"), ("RETURN_VALUE", "")]),
}


def test_generated_bytecode_golden():
    code = with_print.__code__
    instrs = list(dis.get_instructions(code))
    call = [i for i, ins in enumerate(instrs) if ins.opname == "CALL"][1]
    nxt = instrs[call + 1].offset
    resume = make_resume_code(code, nxt, (False,), ["x", "y"])
    assert resume.co_varnames[:3] == ("___stack0", "x", "y") and resume.co_argcount == 3
    ops = _ops(resume)
    # prologue: push the saved stack, jump to the instruction after the break (4 bytes later now)
    assert ops[:2] == [("RESUME", "0"), ("LOAD_FAST", "___stack0")] and ops[2][0] == "JUMP_FORWARD"
    jump = list(dis.get_instructions(resume))[2]
    assert jump.argval == nxt + 4
    target = [i for i in dis.get_instructions(resume) if i.offset == nxt + 4][0]
    assert target.opname == instrs[call + 1].opname == "POP_TOP"
    layout, golden = _PRINT_BREAK_GOLDEN[sys.version_info[:2]]
    brk = make_break_code(code, call, layout, ["x", "y"], {"next": print})
    assert _ops(brk) == golden


class Box:
    pass


COUNTER = 0


def with_side_effects(x, box, out):
    y = np.sin(x) * 2
    box.y = y                    # STORE_ATTR: a break runs it in Python
    out.append(y.sum())          # mutating the caller's list: a break at the call
    global COUNTER
    COUNTER += x.shape[0]        # STORE_GLOBAL
    return y + 1


def test_side_effects_happen_once_and_in_order():
    global COUNTER
    f = ft.compile(with_side_effects)
    for n in (3, 4, 3):
        x = np.arange(float(n))
        b1, b2, o1, o2 = Box(), Box(), [], []
        COUNTER = 0
        got = f(x, b1, o1)
        after_compiled = COUNTER
        COUNTER = 0
        want = with_side_effects(x, b2, o2)
        assert_same(got, want)
        assert_same(b1.y, b2.y)
        assert len(o1) == len(o2) == 1 and type(o1[0]) is type(o2[0])
        np.testing.assert_allclose(o1[0], o2[0], rtol=1e-12)   # llvm sums reassociate
        assert after_compiled == COUNTER == n
