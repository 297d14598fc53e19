"""CPython 3.11 bytecode facts (the baseline the opcode handlers in trace/opcodes.py were written for)."""

# Conditional jumps: opname -> jump when the value is truthy (POP_JUMPS) / when it is None (POP_JUMPS_NONE).
POP_JUMPS = {
    "POP_JUMP_FORWARD_IF_TRUE": True, "POP_JUMP_BACKWARD_IF_TRUE": True,
    "POP_JUMP_FORWARD_IF_FALSE": False, "POP_JUMP_BACKWARD_IF_FALSE": False,
}
POP_JUMPS_NONE = {
    "POP_JUMP_FORWARD_IF_NONE": True, "POP_JUMP_BACKWARD_IF_NONE": True,
    "POP_JUMP_FORWARD_IF_NOT_NONE": False, "POP_JUMP_BACKWARD_IF_NOT_NONE": False,
}
JUMP_OR_POP = {"JUMP_IF_TRUE_OR_POP": True, "JUMP_IF_FALSE_OR_POP": False}
UNCONDITIONAL_JUMPS = {"JUMP_FORWARD", "JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT", "JUMP_ABSOLUTE"}

# The opnames the break function emits for a conditional jump: (if true, if false, if None, if not None).
EMIT_JUMPS = ("POP_JUMP_FORWARD_IF_TRUE", "POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_NONE",
              "POP_JUMP_FORWARD_IF_NOT_NONE")
# POP_JUMP_IF_TRUE/FALSE need an exact bool below them (3.13): the break function emits TO_BOOL first.
JUMP_NEEDS_TO_BOOL = False

NO_OPS = {"NOP", "RESUME", "PRECALL", "CACHE", "EXTENDED_ARG", "COPY_FREE_VARS"}

# Calls: opname -> stack slots consumed besides the `arg` arguments (callable and NULL/self; CALL_KW: names).
CALLS = {"CALL": 2}
# Emitted before CALL by the break and resume functions.
CALL_PREFIX = ("PRECALL",)
# Is the NULL of a call below the callable ([NULL, fn, args]) or above it ([fn, NULL, args])?
NULL_BELOW_CALLABLE = True

# FOR_ITER on an exhausted iterator pops it and jumps to its target, then skips this many instructions.
FOR_ITER_SKIP = 0

# Straight-line instructions a graph break can run on their own: opname -> (pops, pushes).
SIMPLE_STACK_EFFECT = {
    "STORE_ATTR": (2, 0), "STORE_SUBSCR": (3, 0), "DELETE_SUBSCR": (2, 0), "STORE_GLOBAL": (1, 0),
    "DELETE_GLOBAL": (0, 0), "DELETE_ATTR": (1, 0), "BINARY_SUBSCR": (2, 1), "LOAD_ATTR": (1, 1),
    "BINARY_OP": (2, 1), "COMPARE_OP": (2, 1), "CONTAINS_OP": (2, 1), "IS_OP": (2, 1),
    "UNARY_NEGATIVE": (1, 1), "UNARY_POSITIVE": (1, 1), "UNARY_INVERT": (1, 1), "UNARY_NOT": (1, 1),
    "FORMAT_VALUE": (1, 1),
}

# Opcodes whose handler differs between versions: opname -> name of the OpcodeHandlers method
# (3.11 uses the op_<OPNAME> handlers of trace/opcodes.py as they are).
HANDLERS = {}

# Opcodes a traced program may meet that stop the trace on purpose (a graph break or eager run), with why.
GRAPH_BREAKS = {
    "RAISE_VARARGS": "the traced code raises: the frame runs eagerly so Python raises it",
    "RETURN_GENERATOR": "a generator frame is not traced itself; generators a traced frame consumes are inlined",
    "LOAD_ASSERTION_ERROR": "only reached when an assert fails, which then raises",
}


def line_started(ins):
    """The source line an instruction starts, or None."""
    return ins.starts_line

# Opcodes without a handler, by why: meeting one stops the trace (the frame runs eagerly, or breaks
# there when the instruction is in SIMPLE_STACK_EFFECT). tests/trace/test_opcode_coverage.py checks
# that every opcode of `dis.opmap` has a handler or is listed here.
NOT_TRACED = {
    "generators, coroutines and async code are not traced": {
        "SEND", "GET_AWAITABLE", "GET_AITER", "GET_ANEXT", "END_ASYNC_FOR", "BEFORE_ASYNC_WITH",
        "GET_YIELD_FROM_ITER", "ASYNC_GEN_WRAP"},
    "try/except/with: the frame is split before the block, which runs in Python (resume/region.py)": {
        "PUSH_EXC_INFO", "POP_EXCEPT", "RERAISE", "CHECK_EXC_MATCH", "CHECK_EG_MATCH",
        "WITH_EXCEPT_START", "PREP_RERAISE_STAR"},
    "imports, class bodies and module-level code are not compiled functions": {
        "IMPORT_NAME", "IMPORT_FROM", "IMPORT_STAR", "LOAD_BUILD_CLASS", "LOAD_NAME", "STORE_NAME", "DELETE_NAME",
        "SETUP_ANNOTATIONS", "LOAD_CLASSDEREF", "PRINT_EXPR"},
    "structural pattern matching is not traced": {
        "MATCH_CLASS", "MATCH_KEYS", "MATCH_MAPPING", "MATCH_SEQUENCE", "GET_LEN"},
    "sets are not traced": {"BUILD_SET", "SET_ADD", "SET_UPDATE"},
    "deleting globals, attributes and cells is a side effect (graph break at the instruction)": {
        "DELETE_GLOBAL", "DELETE_ATTR", "DELETE_DEREF"},
}

# A `with` block starts here (the context manager on top of the stack): the tracer splits the frame
# before it and resume/region.py runs the block (3.14 would use LOAD_SPECIAL), except a
# `with np.errstate(...)`, which is traced (BEFORE_WITH's handler: trace/errstate.py).
WITH_STARTS = {"BEFORE_WITH"}
# Instructions that leave a frame other than by raising: a region containing one is not extracted.
FRAME_EXITS = {"RETURN_VALUE", "YIELD_VALUE", "RETURN_GENERATOR", "SEND"}
# A `return` (a region function returns the value to its break function instead: resume/region.py).
RETURNS = {"RETURN_VALUE"}
# locals() in a function: one dict per frame that each call refreshes (False), or a new snapshot (3.13).
LOCALS_SNAPSHOT = False
# Instructions naming one local (renamed when a resume function renames a parameter), and the
# superinstructions whose argument is a pair of local names (3.13).
LOCAL_NAME_OPS = {"LOAD_FAST", "STORE_FAST", "DELETE_FAST", "LOAD_FAST_CHECK"}
LOCAL_PAIR_OPS = set()
