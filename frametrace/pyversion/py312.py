"""CPython 3.12 bytecode facts: what changed from 3.11 (py311.py)."""
from .py311 import FRAME_EXITS as _FRAME_EXITS_311
from .py311 import GRAPH_BREAKS as _GRAPH_BREAKS_311
from .py311 import HANDLERS as _HANDLERS_311
from .py311 import NOT_TRACED as _NOT_TRACED_311
from .py311 import SIMPLE_STACK_EFFECT as _SIMPLE_311
from .py311 import LOCAL_NAME_OPS as _LOCAL_NAME_OPS_311
from .py311 import LOCAL_PAIR_OPS, LOCALS_SNAPSHOT, WITH_STARTS  # noqa: F401  (unchanged)

# Jumps have no FORWARD/BACKWARD forms any more; JUMP_IF_*_OR_POP are gone.
POP_JUMPS = {"POP_JUMP_IF_TRUE": True, "POP_JUMP_IF_FALSE": False}
POP_JUMPS_NONE = {"POP_JUMP_IF_NONE": True, "POP_JUMP_IF_NOT_NONE": False}
JUMP_OR_POP = {}
UNCONDITIONAL_JUMPS = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"}
EMIT_JUMPS = ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE")
JUMP_NEEDS_TO_BOOL = False

NO_OPS = {"NOP", "RESUME", "CACHE", "EXTENDED_ARG", "COPY_FREE_VARS"}

# CALL without PRECALL.
CALLS = {"CALL": 2}
CALL_PREFIX = ()
NULL_BELOW_CALLABLE = True

# FOR_ITER jumps to its END_FOR; CPython pops the iterator and skips the END_FOR.
FOR_ITER_SKIP = 1

# UNARY_POSITIVE became CALL_INTRINSIC_1; slices of two bounds have their own instructions.
SIMPLE_STACK_EFFECT = {k: v for k, v in _SIMPLE_311.items() if k != "UNARY_POSITIVE"}
SIMPLE_STACK_EFFECT.update({"BINARY_SLICE": (3, 1), "STORE_SLICE": (4, 0)})

HANDLERS = dict(_HANDLERS_311)
HANDLERS.update({
    "FOR_ITER": "for_iter_skip_end_for",
    "LOAD_ATTR": "load_attr_method_bit_null_below",     # the low bit asks for the method form
    "STORE_FAST": "store_fast_null_unbinds",            # restores a name a comprehension shadowed
})

GRAPH_BREAKS = dict(_GRAPH_BREAKS_311)
GRAPH_BREAKS.update({
    "CALL_INTRINSIC_2": "only exception groups and type parameters use it: not traced",
})


def line_started(ins):
    return ins.starts_line

NOT_TRACED = {k: set(v) for k, v in _NOT_TRACED_311.items()}
NOT_TRACED["generators, coroutines and async code are not traced"] |= {"CLEANUP_THROW", "END_SEND"}
NOT_TRACED["generators, coroutines and async code are not traced"] -= {"ASYNC_GEN_WRAP"}
_SPLIT_BLOCKS = "try/except/with: the frame is split before the block, which runs in Python (resume/region.py)"
NOT_TRACED[_SPLIT_BLOCKS] -= {"PREP_RERAISE_STAR"}
NOT_TRACED["imports, class bodies and module-level code are not compiled functions"] -= {
    "LOAD_CLASSDEREF", "PRINT_EXPR", "IMPORT_STAR"}
NOT_TRACED["imports, class bodies and module-level code are not compiled functions"] |= {
    "LOAD_LOCALS", "LOAD_FROM_DICT_OR_DEREF", "LOAD_FROM_DICT_OR_GLOBALS"}
# (pseudo-instructions, numbered from 256 in dis.opmap, are replaced by the compiler and never met)
NOT_TRACED["interpreter internals never stored in a function's code"] = {"RESERVED", "INTERPRETER_EXIT"}
NOT_TRACED["an exhausted FOR_ITER skips its END_FOR (only generators' loops run it)"] = {"END_FOR"}

FRAME_EXITS = _FRAME_EXITS_311 | {"RETURN_CONST"}
RETURNS = {"RETURN_VALUE", "RETURN_CONST"}

# PEP 709's inlined comprehensions save and restore the locals they shadow.
LOCAL_NAME_OPS = _LOCAL_NAME_OPS_311 | {"LOAD_FAST_AND_CLEAR", "STORE_FAST_MAYBE_NULL"}
