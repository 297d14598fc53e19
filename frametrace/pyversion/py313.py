"""CPython 3.13 bytecode facts: what changed from 3.12 (py312.py)."""
from .py312 import FRAME_EXITS, LOCAL_NAME_OPS, RETURNS, WITH_STARTS  # noqa: F401  (unchanged)
from .py312 import GRAPH_BREAKS as _GRAPH_BREAKS_312
from .py312 import HANDLERS as _HANDLERS_312
from .py312 import NOT_TRACED as _NOT_TRACED_312
from .py312 import SIMPLE_STACK_EFFECT as _SIMPLE_312

POP_JUMPS = {"POP_JUMP_IF_TRUE": True, "POP_JUMP_IF_FALSE": False}
POP_JUMPS_NONE = {"POP_JUMP_IF_NONE": True, "POP_JUMP_IF_NOT_NONE": False}
JUMP_OR_POP = {}
UNCONDITIONAL_JUMPS = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"}
EMIT_JUMPS = ("POP_JUMP_IF_TRUE", "POP_JUMP_IF_FALSE", "POP_JUMP_IF_NONE", "POP_JUMP_IF_NOT_NONE")
# POP_JUMP_IF_TRUE/FALSE test `is True` (the compiler puts TO_BOOL before them).
JUMP_NEEDS_TO_BOOL = True

NO_OPS = {"NOP", "RESUME", "CACHE", "EXTENDED_ARG", "COPY_FREE_VARS"}

# The callable is below its NULL/self; keyword calls are CALL_KW with the names tuple on the stack.
CALLS = {"CALL": 2, "CALL_KW": 3}
CALL_PREFIX = ()
NULL_BELOW_CALLABLE = False

# FOR_ITER jumps to END_FOR, POP_TOP; CPython pops the iterator and skips both.
FOR_ITER_SKIP = 2

# FORMAT_VALUE split into CONVERT_VALUE / FORMAT_SIMPLE / FORMAT_WITH_SPEC; TO_BOOL is its own instruction.
SIMPLE_STACK_EFFECT = {k: v for k, v in _SIMPLE_312.items() if k != "FORMAT_VALUE"}
SIMPLE_STACK_EFFECT.update({"FORMAT_SIMPLE": (1, 1), "FORMAT_WITH_SPEC": (2, 1), "CONVERT_VALUE": (1, 1),
                            "TO_BOOL": (1, 1)})

HANDLERS = dict(_HANDLERS_312)
HANDLERS.update({
    "LOAD_GLOBAL": "load_global_null_above",
    "LOAD_ATTR": "load_attr_method_bit_null_above",
    "CALL": "call_null_above",
    "CALL_FUNCTION_EX": "call_ex_null_above",
    "MAKE_FUNCTION": "make_function_bare",              # defaults and closure come by SET_FUNCTION_ATTRIBUTE
    "LOAD_FAST": "load_fast_or_closure_cell",           # LOAD_CLOSURE is now a LOAD_FAST of the cell
})

GRAPH_BREAKS = dict(_GRAPH_BREAKS_312)


def line_started(ins):
    return ins.line_number if ins.starts_line else None

NOT_TRACED = {k: set(v) for k, v in _NOT_TRACED_312.items()}
NOT_TRACED["interpreter internals never stored in a function's code"] |= {
    "ENTER_EXECUTOR", "EXIT_INIT_CHECK"}

# PEP 667: locals() in a function returns a new snapshot on each call.
LOCALS_SNAPSHOT = True

# Superinstructions: their argument names two locals.
LOCAL_PAIR_OPS = {"LOAD_FAST_LOAD_FAST", "STORE_FAST_LOAD_FAST", "STORE_FAST_STORE_FAST"}
