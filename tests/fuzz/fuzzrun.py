"""The differential runner of the fuzzer: run a program eagerly and compiled (every dynamic
mode x backend, several calls per compiled entry) and list every difference in values,
dtypes, shapes, layouts (C/F contiguity of results), aliasing, in-place effects, raised
exceptions (type), warnings (categories, under errstate "warn"/"raise") and compile counts
(dynamic=True: no recompile when the program says so); the known, reported bugs (KNOWN_BUGS,
each pinned by a strict xfail in test_regressions.py). Programs come from fuzzgen.py and
fuzzshapes.py.
"""
from __future__ import annotations

import contextlib
import itertools
import linecache
import traceback
import warnings

import numpy as np

import frametrace as ft
from fuzzgen import TOL, Program, make_inputs

# ---- running and comparing --------------------------------------------------------------------

_counter = itertools.count()


def load(source: str):
    name = f"<fuzz-{next(_counter)}>"
    linecache.cache[name] = (len(source), None, source.splitlines(True), name)
    ns = {}
    exec(compile(source, name, "exec"), ns)
    return ns["f"]


@contextlib.contextmanager
def quiet():
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        yield


def _flatten(x, path="out"):
    if isinstance(x, dict):
        for k, v in x.items():
            yield from _flatten(v, f"{path}[{k!r}]")
    elif isinstance(x, (tuple, list)):
        for i, v in enumerate(x):
            yield from _flatten(v, f"{path}[{i}]")
    else:
        yield path, x


def compare_values(want, got, path="out", min_tol=0.0):
    errs = []
    if type(got) is not type(want):
        return [f"{path}: type {type(got).__name__} != eager {type(want).__name__}"]
    if isinstance(want, dict):
        if list(got) != list(want):
            return [f"{path}: keys {list(got)} != eager {list(want)}"]
        for k in want:
            errs += compare_values(want[k], got[k], f"{path}[{k!r}]", min_tol)
        return errs
    if isinstance(want, (tuple, list)):
        if len(got) != len(want):
            return [f"{path}: length {len(got)} != {len(want)}"]
        for i, (g, w) in enumerate(zip(got, want)):
            errs += compare_values(w, g, f"{path}[{i}]", min_tol)
        return errs
    if isinstance(want, (np.ndarray, np.generic)):
        if got.dtype != want.dtype:
            return [f"{path}: dtype {got.dtype} != eager {want.dtype}"]
        if np.shape(got) != np.shape(want):
            return [f"{path}: shape {np.shape(got)} != eager {np.shape(want)}"]
        if isinstance(want, np.ndarray) and want.ndim >= 2 and want.size > 1 and (
                (got.flags.c_contiguous, got.flags.f_contiguous)
                != (want.flags.c_contiguous, want.flags.f_contiguous)):
            return [f"{path}: layout (C, F contiguous) {(got.flags.c_contiguous, got.flags.f_contiguous)}"
                    f" != eager {(want.flags.c_contiguous, want.flags.f_contiguous)} (K order)"]
        tol = TOL.get(want.dtype)
        if tol is not None:
            tol = max(tol, min_tol)
        if tol is None:
            if not np.array_equal(got, want):
                return [f"{path}: values differ\n  got  {got!r}\n  want {want!r}"]
            return []
        w = np.asarray(want)
        g = np.asarray(got)
        fin = np.isfinite(w)
        scale = max(1.0, float(np.max(np.abs(w[fin])))) if fin.any() else 1.0
        try:
            np.testing.assert_allclose(g, w, rtol=tol, atol=tol * scale, equal_nan=True)
        except AssertionError as exc:
            return [f"{path}: values differ {str(exc).strip()[:600]}\n  got  {got!r}\n  want {want!r}"]
        return []
    if want is None:
        return []
    if isinstance(want, float) and want == want and got == got:
        tol = max(1e-5, min_tol)
        if not np.isclose(got, want, rtol=tol, atol=tol * max(1.0, abs(want) if abs(want) < np.inf else 1.0)):
            return [f"{path}: {got!r} != eager {want!r}"]
        return []
    if not (got == want or (got != got and want != want)):
        return [f"{path}: {got!r} != eager {want!r}"]
    return []


def _aliasing(result, inputs):
    """Which outputs share memory with which inputs / other outputs, and identities."""
    outs = [(p, v) for p, v in _flatten(result) if isinstance(v, np.ndarray)]
    facts = set()
    for p, v in outs:
        for i, a in enumerate(inputs):
            if isinstance(a, np.ndarray):
                if v is a:
                    facts.add(f"{p} is arg{i}")
                if np.shares_memory(v, a):
                    facts.add(f"{p} shares memory with arg{i}")
        for q, w in outs:
            if p < q and np.shares_memory(v, w):
                facts.add(f"{p} shares memory with {q}")
    return facts


def _own_warning(w) -> bool:
    """frametrace's own warnings (a fallback notice, advice) are not NumPy's."""
    return type(w.message).__module__.split(".")[0] in ("frametrace", "csrc_free_runtime")


def run_once(fn, inputs, errstate=None):
    """-> (result, exception, warning categories or None). errstate None: all quiet;
    "warn"/"raise": np.errstate(all=errstate) around the call, warnings recorded."""
    if errstate is None:
        with quiet():
            try:
                return fn(*inputs), None, None
            except Exception as exc:        # noqa: BLE001
                return None, exc, None
    with np.errstate(all=errstate), warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            res, exc = fn(*inputs), None
        except Exception as e:              # noqa: BLE001
            res, exc = None, e
    mine = [w for w in caught if not _own_warning(w)]
    return res, exc, _Warned(sorted({w.category.__name__ for w in mine}),
                             sorted({str(w.message) for w in mine}))


class _Warned(list):
    """The categories of the warnings a call gave (compared), with their messages (shown)."""

    def __init__(self, cats, messages):
        super().__init__(cats)
        self.messages = messages

    def __repr__(self):
        return f"{list(self)} {self.messages}"


def available_backends():
    """Both backends (llvmlite is a runtime dependency: no silent skip of the LLVM one)."""
    return ["numpy", "llvm"]


def run_program(prog: Program, modes=(None, True, False), backends=None):
    """Eager vs compiled on every call of prog, for each (dynamic, backend). -> [str]"""
    if prog.factories is not None:
        factories = prog.factories
    else:
        factories = [lambda call=call: make_inputs(prog, call) for call in prog.calls]
    return run_source(prog.source, factories, modes, backends, errstate=prog.errstate,
                      one_graph=prog.one_graph)


def precision_of(source, inputs) -> float:
    """A float64 result may come from float32/float16 arithmetic (casts, bool/int8 inputs
    of float ufuncs): the tolerance is that of the least precise float type involved."""
    kinds = {np.asarray(a).dtype for a in inputs if isinstance(a, (np.ndarray, np.generic))}
    if "float16" in source or "int8" in source or "bool_" in source or any(
            d.itemsize == 1 or d == np.float16 for d in kinds):
        return TOL[np.dtype(np.float16)]
    if "float32" in source or any(d in (np.float32, np.int16, np.uint16) for d in kinds):
        return TOL[np.dtype(np.float32)]
    return 0.0


def run_source(source: str, factories, modes=(None, True, False), backends=None, errstate=None,
               one_graph=None):
    """`f` defined by `source`, called with `factory()` for each factory (fresh inputs each
    time), eagerly and compiled (one compiled function per (backend, dynamic), all calls in
    order). Exceptions must match in type; under errstate "warn"/"raise" the categories of
    the warnings too. one_graph=True: with dynamic=True no call after the first recompiles.
    Returns a list of mismatch descriptions (empty: all agree)."""
    backends = backends or available_backends()
    eager_fn = load(source)
    wants = []
    tol = 0.0
    for factory in factories:
        inputs = list(factory())
        tol = max(tol, precision_of(source, inputs))
        res, exc, warns = run_once(eager_fn, inputs, errstate)
        wants.append((res, exc, warns, inputs, _aliasing(res, inputs) if exc is None else None))
    failures = []
    for backend in backends:
        for dyn in modes:
            ft.reset()
            cfn = ft.compile(load(source), dynamic=dyn, backend=backend)
            failed = False
            for ci, (factory, (want, wexc, wwarns, winputs, walias)) in enumerate(zip(factories, wants)):
                where = f"[backend={backend} dynamic={dyn} call#{ci}]"
                inputs = list(factory())
                try:
                    got, gexc, gwarns = run_once(cfn, inputs, errstate)
                except BaseException as exc:   # noqa: BLE001
                    got, gexc, gwarns = None, exc, wwarns
                errs = []
                if gwarns != wwarns:
                    errs.append(f"warnings differ: eager {wwarns} compiled {gwarns}")
                if wexc is not None or gexc is not None:
                    if wexc is None:
                        errs.append("compiled raised, eager did not: " + "".join(
                            traceback.format_exception(gexc)[-6:]))
                    elif gexc is None:
                        errs.append(f"eager raised {type(wexc).__name__}: {wexc}; compiled returned {got!r}")
                    elif type(wexc) is not type(gexc):
                        errs.append(f"eager raised {type(wexc).__name__}: {wexc}; compiled raised "
                                    f"{type(gexc).__name__}: {gexc}")
                else:
                    errs += compare_values(want, got, min_tol=tol)
                    galias = _aliasing(got, inputs)
                    if galias != walias:
                        errs.append(f"aliasing differs: eager {sorted(walias)} compiled {sorted(galias)}")
                for i, (a, b) in enumerate(zip(inputs, winputs)):
                    if isinstance(b, np.ndarray):
                        e = compare_values(b, a, f"arg{i} after call", min_tol=tol)
                        if e:
                            errs.append("in-place effect differs: " + "; ".join(e))
                if errs:
                    failures.append(where + " " + "\n".join(errs))
                    failed = True
                    break          # later calls of this compiled fn are less informative
            if dyn is True and one_graph and not failed:
                st = ft.stats()
                if st.recompiles:
                    failures.append(f"[backend={backend} dynamic=True] compile count: {st.recompiles} "
                                    f"recompile(s) over {len(factories)} calls that vary only sizes "
                                    f"and values ({st})")
    return failures


# ---- known, reported bugs (each pinned by an xfail test in test_regressions.py) -------------
# (name, regex on a failure message). Remove an entry when its xfail test starts passing.
import re as _re  # noqa: E402

KNOWN_BUGS = [
    # (name, regex on the failure message, regex on the program source or None)
    ("complex scalar operand crashes llvm lowering (test_llvm_complex_python_scalar_operand)",
     r"NotLowerable: operand \(?[-+\w.]*j\)?\n", None),
]


def known_bug(msg: str, source: str = ""):
    for name, rx, src_rx in KNOWN_BUGS:
        if _re.search(rx, msg) and (src_rx is None or _re.search(src_rx, source)):
            return name
    return None


def unknown_failures(failures, source=""):
    return [f for f in failures if known_bug(f, source) is None]
