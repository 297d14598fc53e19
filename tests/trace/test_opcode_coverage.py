"""Every opcode handler in the dispatch table is exercised by a traced program."""
import numpy as np

import frametrace as ft
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
    gen = sum(v * 2 for v in flags)                  # RETURN_GENERATOR, YIELD_VALUE (inlined genexpr)
    first, *rest = t                                 # UNPACK_EX
    same = x is y                                    # IS_OP
    inv = ~(x > 2)                                   # UNARY_INVERT
    part = x[1:n]                                    # BUILD_SLICE
    kw = {"scale": 2.0}
    z = helper(x, **kw)                              # DICT_MERGE, CALL_FUNCTION_EX
    tmp = 5
    del tmp                                          # DELETE_FAST
    w = helper(x, scale=3.0)                         # KW_NAMES
    return y * a + b + c + gen + sum(t) + d["a"] + z + d2["c"] + first + len(rest) + same + inv + part.sum() + w


def helper(x, scale=1.0, **rest):
    total = 0

    def bump(v):
        nonlocal total                               # STORE_DEREF in an inlined function
        total = total + v
        return total
    bump(1)
    bump(2)
    return x * scale + total + ~3 + (not x.ndim) + -(+x.shape[0])


def test_programs_cover_every_handler(monkeypatch):
    executed = set()
    table = InstructionTranslator.dispatch
    wrapped = {}
    for name, fn in table.items():
        def rec(self, ins, fn=fn, name=name):
            executed.add(name)
            return fn(self, ins)
        wrapped[name] = rec
    monkeypatch.setattr(InstructionTranslator, "dispatch", wrapped)
    check(chained_and_short_circuit, X, graphs=1)
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
    # handlers that only raise Unsupported (the frame then runs eagerly or breaks)
    # raise-only handlers, no-ops, and jump forms the 3.11 compiler emits only in rare shapes
    # (their semantics are shared with the forward/plain forms exercised above)
    only_unsupported = {"RAISE_VARARGS", "LOAD_FAST_CHECK", "CACHE",
                        "EXTENDED_ARG", "NOP", "JUMP_ABSOLUTE", "POP_JUMP_BACKWARD_IF_TRUE",
                        "POP_JUMP_BACKWARD_IF_NONE", "POP_JUMP_BACKWARD_IF_NOT_NONE",
                        "POP_JUMP_BACKWARD_IF_FALSE", "JUMP_BACKWARD_NO_INTERRUPT", "LOAD_ASSERTION_ERROR",
                        "COPY_FREE_VARS"}
    missing = set(table) - executed - only_unsupported
    assert not missing, sorted(missing)
