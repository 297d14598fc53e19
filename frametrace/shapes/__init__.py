"""Symbolic sizes: ShapeEnv (symbols, hints, value ranges, replacements, guards with the user
code that caused them) and SymInt / SymBool / SymFloat values that behave like int / bool /
float and record what was asked of them.

Module map: value_ranges (intervals), functions (FloorDiv, PythonMod), symint (Sym values),
helpers (sym_max, guard_or_false, ...), shape_env (ShapeEnv, evaluate_expr), refine (what a
guard teaches), produce (guards as Python source), printer (pycode), constraints
(mark_dynamic violations), records (Location, ShapeGuard, ShapeGuardCode, Specialization).
"""
from .functions import FloorDiv, PythonMod, ToFloat, is_float_expr
from .helpers import (expect_true, guard_bool, guard_float, guard_int, guard_or_false,
                      guard_or_true, guard_size_oblivious, is_symbolic, statically_known_true,
                      sym_and, sym_eq, sym_max, sym_min, sym_not, sym_or)
from .printer import pycode
from .records import Location, RuntimeAssert, ShapeGuard, ShapeGuardCode, Specialization
from .shape_env import ShapeEnv
from .symint import SymBool, SymFloat, SymInt
from .value_ranges import ValueRanges, int_oo

__all__ = [
    "ShapeEnv", "SymInt", "SymBool", "SymFloat", "ShapeGuard", "ShapeGuardCode", "int_oo",
    "sym_max", "sym_min", "sym_eq", "sym_not", "sym_and", "sym_or", "is_symbolic",
    "guard_int", "guard_bool", "guard_float", "statically_known_true", "guard_or_false",
    "guard_or_true", "guard_size_oblivious", "expect_true", "pycode", "ValueRanges",
    "FloorDiv", "PythonMod", "ToFloat", "is_float_expr", "Location", "Specialization", "RuntimeAssert",
]
