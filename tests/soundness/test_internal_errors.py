"""No internal error reaches the user (frametrace/internal_errors.py): a bug of frametrace, injected
here at each depth (tracing, guard building, an entry that rejects its own inputs, passes,
lowering, code generation, guard evaluation on the miss path, break/resume function making, a
resume function's own compile), makes that frame run eagerly with NumPy's results; it is logged
once with its traceback on the `graph_breaks` log and counted in ft.stats().internal_errors.
`config.strict_backend` (on in every test) raises it instead. Exceptions of the program itself
are never swallowed."""
import contextlib
import io
import logging

import numpy as np
import pytest

import frametrace as ft
import frametrace.backends.llvm as llvm_backend
from frametrace.guards.builder import GuardBuilder
from frametrace.passes import pipeline
from frametrace.resume import codegen
from frametrace.trace.translator import InstructionTranslator
from helpers import assert_same


class Injected(RuntimeError):
    pass


def _boom(*args, **kwargs):
    raise Injected("injected frametrace bug")


def helper(x):
    return np.tanh(x) * 2.0


def program(x, log):
    """A frame with a callee, a side effect the caller sees and a graph break."""
    y = helper(x) + x.shape[0]
    log.append(x.shape[0])
    print("middle", x.shape[0])             # a graph break: the rest is a resume function
    return (y * y).sum(axis=0), y[::-1]


def _run(fn, sizes):
    out, log, results = io.StringIO(), [], []
    with contextlib.redirect_stdout(out):
        for n in sizes:
            x = np.linspace(-1.0, 1.0, n * 3).reshape(n, 3)
            results.append(fn(x, log))
    return results, log, out.getvalue()


SIZES = (2, 3, 4, 3, 2)


def _patch_pipeline_stage(monkeypatch, stage):
    stages = dict(llvm_backend.PIPELINE)
    assert stage in stages, (stage, list(stages))     # a renamed stage must not make the test vacuous
    stages[stage] = _boom
    monkeypatch.setattr(llvm_backend, "PIPELINE", tuple(stages.items()))


def _reject_everything(monkeypatch):
    """Every entry gets one more guard that never holds: the entry rejects its own inputs."""
    original = GuardBuilder.type

    def typed(self, source, value):
        self.predicate(source, lambda v: False, "is never accepted (injected)")
        return original(self, source, value)
    monkeypatch.setattr(GuardBuilder, "type", typed)


def _break_resume_tracing(monkeypatch):
    original = InstructionTranslator.__init__

    def init(self, output, code, *args, **kwargs):
        if code.co_name.startswith("__resume_at_"):
            raise Injected("injected frametrace bug in a resume function's trace")
        original(self, output, code, *args, **kwargs)
    monkeypatch.setattr(InstructionTranslator, "__init__", init)


INJECTIONS = {
    "tracing": lambda mp: mp.setattr(InstructionTranslator, "binary", _boom),
    "guard building": lambda mp: mp.setattr(GuardBuilder, "ndim", _boom),
    "entry rejects its inputs": _reject_everything,
    "passes": lambda mp: mp.setattr(pipeline, "PASSES", (("boom", _boom),)),
    "lowering": lambda mp: _patch_pipeline_stage(mp, "steps"),
    "codegen": lambda mp: _patch_pipeline_stage(mp, "module"),      # LLVM IR -> machine code
    "guard evaluation on a miss": lambda mp: mp.setattr(
        "frametrace.trace.compile.EntryInfo.failing_records", _boom),
    "making the resume function": lambda mp: mp.setattr(codegen, "make_resume_code", _boom),
    "a resume function's compile": _break_resume_tracing,
}


@pytest.mark.parametrize("depth", list(INJECTIONS))
def test_a_bug_at_any_depth_runs_the_frame_eagerly(depth, monkeypatch, caplog):
    want = _run(program, SIZES)
    INJECTIONS[depth](monkeypatch)
    compiled = ft.compile(program, backend="llvm")
    with ft.config.patch(strict_backend=False, verify_ir=False), \
            caplog.at_level(logging.WARNING, logger="frametrace"):
        got = _run(compiled, SIZES)
    for g, w in zip(got[0], want[0]):
        assert_same(g, w)
    assert got[1:] == want[1:]                  # the caller's list and the printed lines
    assert ft.stats().internal_errors >= 1, ft.stats()
    bugs = [r for r in caplog.records if r.name == "frametrace.graph_breaks" and r.levelno == logging.WARNING]
    if depth not in ("lowering", "codegen"):    # those fall back to the NumPy backend (its own log)
        assert bugs, caplog.text
        assert all(r.exc_info for r in bugs) and "frametrace bug while" in bugs[0].getMessage()
        messages = [r.getMessage() for r in bugs]
        assert len(messages) == len(set(messages)), messages       # each bug once


@pytest.mark.parametrize("depth", ["tracing", "guard building", "passes", "making the resume function"])
def test_strict_raises_the_bug(depth, monkeypatch):
    INJECTIONS[depth](monkeypatch)
    compiled = ft.compile(program)
    with pytest.raises(Injected, match="injected frametrace bug"):
        _run(compiled, SIZES)


def test_an_entry_rejecting_its_inputs_raises_when_strict(monkeypatch):
    _reject_everything(monkeypatch)
    with pytest.raises(ft.errors.InternalError, match="rejects its own inputs"):
        _run(ft.compile(program), SIZES)


def test_the_frame_stays_eager_and_callees_still_compile(monkeypatch):
    # a bug in the caller's trace (one opcode handler) leaves its callee compilable
    def caller(x):
        return callee(x) - 1

    def callee(x):
        return np.exp(x) + 1

    original = InstructionTranslator.step

    def step(self, *args):
        if self.code.co_name == "caller" and self.parent is None:
            raise Injected("bug in the caller's trace")
        return original(self, *args)
    monkeypatch.setattr(InstructionTranslator, "step", step)
    f = ft.compile(caller)
    with ft.config.patch(strict_backend=False):
        for n in (2, 3, 4):
            assert_same(f(np.ones(n)), np.exp(np.ones(n)))
    s = ft.stats()
    assert s.internal_errors == 1 and s.frames_compiled >= 1, s     # the callee, as its own frame


def hooked_program(x, log):
    """As `program`, never ft.compile'd (the hook leaves functions ft.compile has seen alone)."""
    y = helper(x) + x.shape[0]
    log.append(x.shape[0])
    print("middle", x.shape[0])
    return (y * y).sum(axis=0), y[::-1]


def test_under_the_global_hook(monkeypatch):
    monkeypatch.setattr(GuardBuilder, "ndim", _boom)
    want = _run(hooked_program, SIZES)
    with ft.config.patch(strict_backend=False), ft.enabled():
        got = _run(hooked_program, SIZES)
    for g, w in zip(got[0], want[0]):
        assert_same(g, w)
    assert got[1:] == want[1:]
    assert ft.stats().internal_errors >= 1


def test_the_programs_own_exceptions_are_not_swallowed():
    def bad(x, y):
        z = np.sin(x)
        return z + y                # NumPy raises: operands could not be broadcast

    def indexes(x, i):
        return x[i] * 2             # IndexError from NumPy at run time

    with ft.config.patch(strict_backend=False):
        with pytest.raises(ValueError, match="could not be broadcast"):
            ft.compile(bad)(np.ones(3), np.ones(4))
        f = ft.compile(indexes)
        f(np.ones(3), 1)
        with pytest.raises(IndexError):
            f(np.ones(3), 7)
    assert ft.stats().internal_errors == 0
