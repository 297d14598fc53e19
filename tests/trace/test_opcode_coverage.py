"""Per CPython version: every opcode has a handler or a documented reason not to be traced, and every
handler of this version's opcodes is exercised by a traced program."""
import dis

import numpy as np

import frametrace as ft
from frametrace import pyversion
from frametrace.trace.translator import InstructionTranslator
from helpers import check

X = np.arange(6.0)


def chained_and_short_circuit(x, y=None, flags=(1, 2)):
    n = x.shape[0]
    a = 1 < n <= 10                                  # COPY / SWAP
    b = (n > 2) and n                                # JUMP_IF_FALSE_OR_POP
    c = (n < 2) or n                                 # JUMP_IF_TRUE_OR_POP
    assert n > 0, "positive"                        # LOAD_ASSERTION_ERROR (not taken)
    if y is None:                                    # POP_JUMP_*_IF_NOT_NONE
        y = x
    if y is not None:                                # POP_JUMP_*_IF_NONE
        y = y * 2
    t = (*flags, n)                                  # LIST_EXTEND, LIST_TO_TUPLE
    d = {k: v for k, v in zip("ab", flags)}          # MAP_ADD
    key = "c"
    d2 = {key: n, **d}                               # BUILD_MAP, DICT_UPDATE
    d2["gone"] = 1
    del d2["gone"]                                   # DELETE_SUBSCR
    first, *rest = t                                 # UNPACK_EX
    same = x is y                                    # IS_OP
    inv = ~(x > 2)                                   # UNARY_INVERT
    part = x[1:n]                                    # BUILD_SLICE
    kw = {"scale": 2.0}
    z = helper(x, **kw)                              # DICT_MERGE, CALL_FUNCTION_EX
    tmp = 5
    del tmp                                          # DELETE_FAST
    w = helper(x, scale=3.0)                         # KW_NAMES (3.13: CALL_KW)
    label = f"{n:3d}{n!r}"                           # FORMAT_VALUE (3.13: FORMAT_WITH_SPEC, CONVERT_VALUE)
    squares = [v * v for v in range(n)]              # 3.12+: LOAD_FAST_AND_CLEAR, SWAP, END_FOR skipped
    head = x[:n - 1]                                 # 3.12+: BINARY_SLICE
    out = x.copy()
    out[1:3] = 0.5                                   # 3.12+: STORE_SLICE
    a = a + len(label) + len(squares) + head.sum() + out.sum()
    return y * a + b + c + sum(t) + d["a"] + z + d2["c"] + first + len(rest) + same + inv + part.sum() + w


def helper(x, scale=1.0, **rest):
    total = 0

    def bump(v):
        nonlocal total                               # STORE_DEREF in an inlined function
        total = total + v
        return total
    bump(1)
    bump(2)

    def nothing():
        return None                                  # 3.12+: RETURN_CONST
    nothing()
    return x * scale + total + ~3 + (not x.ndim) + -(+x.shape[0])


def _opcodes():
    """This version's opcodes: not the INSTRUMENTED_ forms (they replace an opcode while a monitor is
    active) nor the pseudo-instructions (numbered from 256, the compiler replaces them)."""
    return {name for name, num in dis.opmap.items() if not name.startswith("INSTRUMENTED_") and num < 256}


def test_every_opcode_has_a_handler_or_a_documented_reason():
    handled = set(InstructionTranslator.dispatch)
    documented = set().union(*pyversion.NOT_TRACED.values())
    missing = _opcodes() - handled - documented
    assert not missing, f"opcodes with neither a handler nor a reason in pyversion.NOT_TRACED: {sorted(missing)}"
    assert not documented & handled, sorted(documented & handled)
    assert documented <= _opcodes(), f"stale NOT_TRACED entries: {sorted(documented - _opcodes())}"
    assert set(pyversion.GRAPH_BREAKS) <= handled & _opcodes(), sorted(set(pyversion.GRAPH_BREAKS) - handled)


def test_version_handlers_exist_and_are_used():
    for opname, method in pyversion.HANDLERS.items():
        assert opname in _opcodes(), opname
        assert InstructionTranslator.dispatch[opname] is getattr(InstructionTranslator, method)


def generator_sum(x, flags=(1, 2)):
    return x * sum(v * 2 for v in flags)


def test_programs_cover_every_handler(monkeypatch):
    executed = set()
    table = {name: fn for name, fn in InstructionTranslator.dispatch.items() if name in _opcodes()}
    wrapped = {}
    for name, fn in table.items():
        def rec(self, ins, fn=fn, name=name):
            executed.add(name)
            return fn(self, ins)
        wrapped[name] = rec
    monkeypatch.setattr(InstructionTranslator, "dispatch", wrapped)
    check(chained_and_short_circuit, X, graphs=1)
    ft.reset()
    check(generator_sum, X)                          # RETURN_GENERATOR, YIELD_VALUE (inlined genexpr)
    from test_opcodes import (test_builtins_len_min_max_abs_isinstance_int_float, test_contains_and_is,
                              test_for_loops_over_range_tuples_lists_enumerate_zip,
                              test_fstring_and_string_constants, test_nested_function_with_cell,
                              test_star_args_call_and_lambda_and_closure,
                              test_subscripts_slices_and_store_subscr, test_tuple_list_dict_building_and_unpacking,
                              test_while_loop_on_a_size)
    for t in (test_builtins_len_min_max_abs_isinstance_int_float, test_contains_and_is,
              test_for_loops_over_range_tuples_lists_enumerate_zip, test_fstring_and_string_constants,
              test_nested_function_with_cell, test_star_args_call_and_lambda_and_closure,
              test_subscripts_slices_and_store_subscr, test_tuple_list_dict_building_and_unpacking,
              test_while_loop_on_a_size):
        ft.reset()
        t()
    from test_side_effects import test_read_after_write_sees_the_stored_value_and_arrays_leave_the_graph
    ft.reset()
    test_read_after_write_sees_the_stored_value_and_arrays_leave_the_graph("numpy")      # STORE_ATTR
    from test_side_effects import test_global_statements_are_replayed
    ft.reset()
    test_global_statements_are_replayed()                                                  # STORE_GLOBAL
    from test_objects_and_builtins import test_super_chains_attributes_and_the_two_argument_form
    ft.reset()
    test_super_chains_attributes_and_the_two_argument_form("numpy")                      # LOAD_SUPER_ATTR (3.12+)
    from test_errstate_blocks import test_nested_blocks_and_all
    ft.reset()
    test_nested_blocks_and_all("numpy", 1.0)                                              # BEFORE_WITH
    # handlers that only raise Unsupported (the frame then runs eagerly or breaks), no-ops, and jump
    # forms the compiler emits only in rare shapes (their semantics are shared with the forms exercised above)
    only_unsupported = set(pyversion.GRAPH_BREAKS) | {
        "LOAD_FAST_CHECK", "CACHE", "EXTENDED_ARG", "NOP", "JUMP_ABSOLUTE", "POP_JUMP_BACKWARD_IF_TRUE",
        "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE", "POP_JUMP_BACKWARD_IF_FALSE",
        "JUMP_BACKWARD_NO_INTERRUPT", "COPY_FREE_VARS", "RAISE_VARARGS", "LOAD_ASSERTION_ERROR"}
    missing = set(table) - executed - only_unsupported
    assert not missing, sorted(missing)
