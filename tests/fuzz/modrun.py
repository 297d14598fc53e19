"""The differential runner of the multi-module programs (fuzzmodules.py).

Each run imports the program's modules fresh from a private folder (new globals, classes and
closure cells), makes the object, and calls the driver's `f` on every call of the program:
eagerly, then compiled in a few modes (`ft.compile` with dynamic None/True/False on either
backend, or the whole program under `ft.enabled()`). Results, exceptions (type and message),
warnings (category and message), printed lines, the array argument afterwards and the program's
state after each call must agree with plain Python. Strict mode (`config.strict_backend`) makes
any internal error of frametrace a failure.
"""
from __future__ import annotations

import contextlib
import copy
import importlib
import io
import os
import sys
import tempfile
import traceback
import warnings

import numpy as np

import frametrace as ft
from fuzzrun import compare_values

MODES = (("compile", None, "llvm"), ("compile", True, "numpy"), ("compile", False, "llvm"),
         ("enabled", None, "llvm"), ("compile", True, "llvm"))
_folder = []


def _workdir() -> str:
    if not _folder:
        _folder.append(tempfile.mkdtemp(prefix="ftfuzzmod"))
        sys.path.insert(0, _folder[0])
    return _folder[0]


def write(prog):
    folder = _workdir()
    for name, source in prog.modules.items():
        path = os.path.join(folder, f"{name}.py")
        if not os.path.exists(path):
            with open(path, "w") as fh:
                fh.write(source)
    importlib.invalidate_caches()


def forget(prog):
    for name in prog.modules:
        sys.modules.pop(name, None)


def _inputs(call):
    n, seed, k = call
    rng = np.random.default_rng(seed)
    x = np.round(rng.standard_normal(n) * 2, 2)
    if n and rng.random() < 0.2:
        x[rng.integers(n)] = rng.choice([0.0, -0.0, np.nan, np.inf])
    return x, k


def _state(prog):
    out = []
    for module, expr in prog.state:
        try:
            value = eval(expr, vars(sys.modules[module]))   # noqa: S307 - the generator's own expressions
        except Exception as exc:                           # noqa: BLE001
            value = f"<{type(exc).__name__}>"
        out.append(copy.deepcopy(value))
    return out


def run(prog, mode):
    """[(result, exception, warnings, printed, x afterwards, object state, program state)] per call."""
    kind, dynamic, backend = mode
    forget(prog)
    ft.reset()
    driver = importlib.import_module(prog.driver)
    m = driver.make()
    fn = driver.f if kind != "compile" else ft.compile(driver.f, dynamic=dynamic, backend=backend)
    outs = []
    for call in prog.calls:
        x, k = _inputs(call)
        printed = io.StringIO()
        hook = ft.enabled(dynamic=dynamic, backend=backend) if kind == "enabled" else contextlib.nullcontext()
        with contextlib.redirect_stdout(printed), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                with hook:
                    result, exc = fn(m, x, k), None
            except Exception as e:           # noqa: BLE001 - the exception is part of the outcome
                result, exc = None, e
        warned = sorted({(w.category.__name__, str(w.message)) for w in caught if not _own(w)})
        outs.append((copy.deepcopy(result), exc, warned, printed.getvalue(), x,
                     copy.deepcopy(vars(m)), _state(prog)))
    forget(prog)
    return outs


def _own(w) -> bool:
    """frametrace's own warnings (the cache-size-limit notice) are not the program's."""
    return type(w.message).__module__.split(".")[0] in ("frametrace", "csrc_free_runtime") or \
        str(w.message).startswith("frametrace ")


def _describe_exc(exc):
    return None if exc is None else f"{type(exc).__name__}: {exc}"


def compare(want, got, where):
    errs = []
    for i, (w, g) in enumerate(zip(want, got)):
        at = f"{where} call#{i}"
        wres, wexc, wwarn, wout, wx, wobj, wstate = w
        gres, gexc, gwarn, gout, gx, gobj, gstate = g
        if (wexc is None) != (gexc is None) or (wexc is not None and (
                type(wexc) is not type(gexc) or str(wexc) != str(gexc))):
            tb = "" if gexc is None else "".join(traceback.format_exception(gexc)[-8:])
            errs.append(f"{at} exception: eager {_describe_exc(wexc)}; compiled {_describe_exc(gexc)}\n{tb}")
            break
        if wexc is None:
            errs += [f"{at} result {e}" for e in compare_values(wres, gres, "out", 1e-9)]
        if wwarn != gwarn:
            errs.append(f"{at} warnings: eager {wwarn}; compiled {gwarn}")
        if wout != gout:
            errs.append(f"{at} printed: eager {wout!r}; compiled {gout!r}")
        errs += [f"{at} argument x afterwards {e}" for e in compare_values(wx, gx, "x", 1e-9)]
        errs += [f"{at} object state {e}" for e in compare_values(wobj, gobj, "m", 1e-9)]
        errs += [f"{at} program state {e}" for e in compare_values(wstate, gstate, "state", 1e-9)]
        if errs:
            break
    return errs


def modes_for(seed, backends=None):
    """The compiled mode a program of a long run runs in, drawn by its seed: ft.compile with
    automatic dynamic on the LLVM backend for one in three, each other mode (dynamic True/False,
    the NumPy backend, the global hook) for one in six (test_fuzz.py's seeds run every mode)."""
    import random
    mode = random.Random(seed).choice(MODES[:1] * 4 + MODES[1:] * 1 + MODES[1:] * 1)
    if backends and mode[2] not in backends:
        mode = (mode[0], mode[1], backends[0])
    return [mode]


def run_program(prog, modes=None):
    """Eager vs each compiled mode; -> [failure description]."""
    write(prog)
    modes = modes or MODES[:2]
    try:
        want = run(prog, ("eager", None, None))
    except Exception:                         # noqa: BLE001 - a generator bug, not frametrace's
        return ["the program does not run eagerly:\n" + traceback.format_exc()[-1500:]]
    failures = []
    for mode in modes:
        where = f"[{mode[0]} dynamic={mode[1]} backend={mode[2]}]"
        try:
            got = run(prog, mode)
        except BaseException as exc:           # noqa: BLE001 - a crash of the harness or of frametrace
            failures.append(f"{where} crashed: " + "".join(traceback.format_exception(exc)[-8:]))
            continue
        failures += compare(want, got, where)
    return failures
