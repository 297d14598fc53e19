"""Whole programs spread over two or three modules, for the differential fuzzer (modrun.py runs them).

A program is a library module (globals of every kind, helper functions that read and write
them, a closure with state in its cell, a base class with class attributes, a property, a
classmethod and a method), a model module that imports it (`import lib as L` or `from lib import
...`), has globals of its own (some with the library's names and other values) and subclasses its
class (super() calls, class attribute counters, a loop that breaks on data), and a driver module
(the model module itself in two-module programs) whose `f(m, x, k)` calls all of that, with a
graph break at a random point (a print, `.item()`, a branch on data), side effects on module
globals, on the object and on classes, and sometimes a deliberate exception.

The runner imports the modules fresh for every run (eager, and each compiled mode), calls
`make()` for the object and `f` a few times with new sizes, and compares results, exceptions,
warnings, printed lines, the arguments afterwards and the state the program keeps (`state`:
expressions evaluated in a module after each call).
"""
from __future__ import annotations

import dataclasses

SIZES = (0, 1, 2, 3, 4, 5, 7, 9)
FLOATS = ("0.5", "1.5", "-0.75", "2.0", "0.25", "3.0", "-2.0")
LIMITS = ("0.0", "0.5", "1.0", "-0.5", "2.5")


@dataclasses.dataclass
class ModProgram:
    seed: int
    modules: dict          # module name -> source, the library first, the driver last
    driver: str            # the module defining make() and f(m, x, k)
    calls: list            # (n, value seed, k) per call
    state: list            # (module name, expression) read after every call
    features: tuple = ()   # what the program exercises (for the report and failure triage)

    def describe(self):
        out = []
        for name, source in self.modules.items():
            out += [f"# ---- {name}.py", source.rstrip()]
        out.append(f"# calls (n, seed, k): {self.calls}")
        out.append(f"# state: {self.state}")
        out.append(f"# features: {', '.join(self.features)}")
        return "\n".join(out)


class _Scope:
    """Names a function body may use: scalars (floats), array helpers (v -> array like v)."""

    def __init__(self, scalars, helpers, table):
        self.scalars, self.helpers, self.table = list(scalars), list(helpers), table


def _array_expr(src, v, scope, depth=0):
    """An expression of the 1-d float array `v` with v's shape (valid for every length)."""
    s = src.choice(scope.scalars)
    c = src.choice(FLOATS)
    forms = [
        f"{v} * {s} + {c}",
        f"np.tanh({v}) * {s}",
        f"{v} - {v}.mean()",
        f"np.where({v} > {c}, {v}, {v} * {s})",
        f"np.maximum({v}, {c}) / ({s} + 4.0)",
        f"np.sqrt(np.abs({v})) + {s}",
        f"np.log(np.abs({v}) + {src.choice(('0.0', '1.0', '0.5'))})",
        f"{v}[::-1] + {v} * {c}",
        f"np.cumsum({v}) * {s}",
        f"{v} * {scope.table}.sum()",
        f"{v} / {s}",
    ]
    if scope.helpers and depth == 0:
        h = src.choice(scope.helpers)
        forms += [f"{h}({v})", f"{h}({v} * {c})"]
    return src.choice(forms)


def _scalar_expr(src, v, scope):
    """A Python float (or int) computed from `v` and the scope."""
    s = src.choice(scope.scalars)
    return src.choice((
        f"float({v}.sum())",
        f"{v}.shape[0] * {s}",
        f"float(np.abs({v}).sum()) * {s}",
        f"float({v}.mean())",
        f"{s} + len({v})",
    ))


def _body(src, v, scope, n, indent="    "):
    return [f"{indent}{v} = {_array_expr(src, v, scope)}" for _ in range(n)]


# ---- the library module ------------------------------------------------------------------------

def _library(src, name, feats):
    scale, eps, limit = src.choice(FLOATS), src.choice(("1e-3", "0.5", "1.0")), src.choice(LIMITS)
    scope = _Scope(["SCALE", "EPS"], [], "TABLE")
    lines = ["import numpy as np", "",
             f"SCALE = {scale}", f"EPS = {eps}", f"LIMIT = {limit}",
             f"TABLE = np.linspace(-1.0, 1.0, {src.choice((1, 3, 4))})",
             "TOTAL = 0", "COUNTS = {'calls': 0, 'seen': 0}", "HISTORY = []", ""]
    helpers = []
    for i in range(src.randint(1, 3)):
        h = f"lib_h{i}"
        lines += [f"def {h}(v):"]
        if src.chance(0.3):
            lines += ["    global TOTAL", "    TOTAL = TOTAL + 1"]
            feats.add("global store (library)")
        if src.chance(0.3):
            lines += ["    COUNTS['calls'] += 1"]
            feats.add("global dict update")
        inner = _Scope(scope.scalars, helpers[:], scope.table)
        lines += _body(src, "v", inner, src.randint(1, 2)) + ["    return v", ""]
        helpers.append(h)
    # a closure whose cell keeps state between calls
    step = src.choice(("1", "2", "0.5"))
    lines += ["def make_tick(step):", "    count = 0", "", "    def tick(v):", "        nonlocal count",
              "        count = count + step", "        return v + count * EPS", "", "    return tick", "",
              f"TICK = make_tick({step})", ""]
    lines += ["def note(v):", "    global TOTAL", "    TOTAL = TOTAL + v.shape[0]", "    HISTORY.append(v.shape[0])",
              "    return v", ""]
    # the base class
    gain = src.choice(FLOATS)
    lines += ["class Base:", "    calls = 0", f"    gain = {gain}", "",
              "    def __init__(self, w):", "        self.w = w", "        self.steps = 0", "",
              "    @property", "    def factor(self):", "        return self.gain * SCALE", "",
              "    @classmethod", "    def bump(cls):", "        cls.calls = cls.calls + 1",
              "        return cls.calls", "",
              "    def forward(self, v):"]
    inner = _Scope(["self.factor", "self.w", "SCALE"], helpers, "TABLE")
    lines += _body(src, "v", inner, src.randint(1, 2), "        ") + ["        return v", ""]
    return "\n".join(lines) + "\n", helpers


# ---- the model module ----------------------------------------------------------------------

def _model(src, name, lib, lib_helpers, feats):
    style = src.choice(("module", "names"))
    if style == "module":
        imports = [f"import {lib} as L"]
        L = "L."
        helpers = [f"L.{h}" for h in lib_helpers]
        base, tick, note, lib_limit = "L.Base", "L.TICK", "L.note", "L.LIMIT"
    else:
        names = ", ".join(["Base", "TICK", "note", "LIMIT"] + lib_helpers)
        imports = [f"from {lib} import {names}"]
        L = ""
        helpers = list(lib_helpers)
        base, tick, note, lib_limit = "Base", "TICK", "note", "LIMIT"
    feats.add(f"imports ({style})")
    scale = src.choice(FLOATS)
    lines = ["import numpy as np", *imports, "",
             f"SCALE = {scale}                  # the library has a SCALE too", "TOTAL = 0",
             f"TABLE = np.arange({src.choice((2, 5))}.0)", ""]
    own = []
    for i in range(src.randint(0, 2)):
        h = f"model_h{i}"
        lines += [f"def {h}(v):"]
        if src.chance(0.3):
            lines += ["    global TOTAL", "    TOTAL = TOTAL + 2"]
            feats.add("global store (model)")
        lines += _body(src, "v", _Scope(["SCALE", f"{L}SCALE" if L else "SCALE"], helpers + own, "TABLE"),
                       src.randint(1, 2)) + ["    return v", ""]
        own.append(h)
    lines += [f"class Model({base}):"]
    if src.chance(0.5):
        lines += [f"    gain = {src.choice(FLOATS)}"]
    lines += ["", "    def forward(self, v):"]
    if src.chance(0.7):
        lines += ["        v = super().forward(v)"]
        feats.add("super()")
    lines += _body(src, "v", _Scope(["self.factor", "SCALE", "self.w"], helpers + own, "TABLE"),
                   src.randint(0, 2), "        ")
    if src.chance(0.15):
        lines += ["        print('forward', v.shape[0])"]
        feats.add("graph break in a method")
    if src.chance(0.4):
        lines += ["        type(self).calls += 1"]
        feats.add("class attribute store")
    if src.chance(0.3):
        lines += ["        self.steps += 1"]
        feats.add("object attribute store")
    lines += ["        return v", ""]
    # a loop that breaks on data
    limit = src.choice((lib_limit, src.choice(LIMITS)))
    lines += ["    def scan(self, v):", "        acc = 0.0"]
    if src.chance(0.5):
        feats.add("for loop with a break on data")
        lines += ["        for i in range(v.shape[0]):", f"            if v[i] > {limit}:", "                break",
                  "            acc = acc + v[i] * self.w"]
    else:
        feats.add("while loop on data")
        lines += ["        i = 0", f"        while i < v.shape[0] and v[i] <= {limit}:",
                  "            acc = acc + v[i]", "            i += 1"]
    if src.chance(0.3):
        lines += ["        return acc + i if v.shape[0] else acc"]
        feats.add("loop index after the loop")
    else:
        lines += ["        return acc"]
    lines += ["", "    def tally(self):", "        self.steps = self.steps + 1",
              "        return self.bump() + self.steps", ""]
    exported = {"tick": tick, "note": note, "helpers": helpers + own}
    return "\n".join(lines) + "\n", exported


# ---- the driver ----------------------------------------------------------------------------------

_BREAKS = ("print", "item", "branch", "print-in-callee")


def _driver_body(src, scope, exported, feats, prefix):
    """The statements of f(m, x, k): x a 1-d float array, k an int or float, m a Model."""
    steps = []
    pool = ["forward", "helper", "tick", "scan", "tally", "note", "scalar", "loop", "arith", "closure"]
    for _ in range(src.randint(3, 7)):
        what = src.choice(pool)
        if what == "forward":
            steps.append(["x = m.forward(x)"])
        elif what == "helper" and exported["helpers"]:
            steps.append([f"x = {src.choice(exported['helpers'])}(x)"])
        elif what == "tick":
            steps.append([f"x = {exported['tick']}(x)"])
            feats.add("closure with state")
        elif what == "scan":
            steps.append(["acc = acc + m.scan(x)"])
        elif what == "tally":
            steps.append([src.choice(("calls = m.tally()", "calls = m.bump()", f"calls = {prefix}Model.bump()"))])
            feats.add("classmethod counter")
        elif what == "note":
            steps.append([f"x = {exported['note']}(x)"])
        elif what == "scalar":
            steps.append([f"acc = acc + {_scalar_expr(src, 'x', scope)}"])
        elif what == "loop":
            c = src.choice(LIMITS)
            steps.append(["for j in range(x.shape[0]):", f"    if x[j] < {c}:", "        break",
                          "    acc = acc + x[j]"])
            feats.add("for loop with a break on data")
        elif what == "arith":
            steps.append([f"x = x * k + {src.choice(FLOATS)}"])
        elif what == "closure":
            if src.chance(0.5):
                steps.append(["def inner(t):", f"    return t * {src.choice(scope.scalars)} + acc", "x = inner(x)"])
                feats.add("local closure")
            else:
                steps.append(["seen = 0", "def count(t):", "    nonlocal seen", "    seen = seen + t.shape[0]",
                              "    return t", "x = count(x) + count(x).sum() * 0.0", "acc = acc + seen"])
                feats.add("nonlocal write in a local closure")
    # a graph break at a random point
    if src.chance(0.85):
        kind = src.choice(_BREAKS)
        feats.add(f"graph break ({kind})")
        if kind == "print":
            brk = ["print('step', x.shape[0], calls)"]
        elif kind == "item":
            brk = ["acc = acc + (x.sum().item() if x.shape[0] else 0.0)"]
        elif kind == "branch":
            # on exact data (a sum's last bits may differ within the documented tolerance, and a
            # zero-mean array's sum sits on the threshold)
            brk = [f"if (x > {src.choice(LIMITS)}).any():", "    x = x + 1.0", "else:", "    x = x * 0.5"]
        else:
            brk = ["x = shout(x)"]
        steps.insert(src.randint(0, len(steps)), brk)
    if src.chance(0.1):
        feats.add("an exception raised on purpose")
        steps.insert(src.randint(0, len(steps)), [f"if x.shape[0] > {src.choice((3, 5))}:",
                                                  "    raise ValueError('too long: %d' % x.shape[0])"])
    return steps


def _driver(src, name, model, exported, feats, own_module):
    """f(m, x, k) and make(); in a module of its own (three modules) or the model's (two)."""
    prefix = "" if own_module is None else "M."
    helpers = [prefix + h for h in exported["helpers"]]
    lines = []
    if own_module is not None:
        lines += ["import numpy as np", f"import {model} as M", "", f"GAIN = {src.choice(FLOATS)}",
                  "TABLE = np.ones(3)", "", "def forward_all(v):", "    return v * GAIN", ""]
        helpers.append("forward_all")
        scope = _Scope(["M.SCALE", "k", "acc", "GAIN"], [], "TABLE")
    else:
        scope = _Scope(["SCALE", "k", "acc"], [], "TABLE")
    callables = dict(exported, helpers=helpers, tick=prefix + exported["tick"], note=prefix + exported["note"])
    cls = f"{prefix}Model"
    if own_module is not None and src.chance(0.5):
        # a third level: a property reaching past itself, a method calling up the chain
        feats.add("three-level hierarchy")
        lines += ["class Head(M.Model):", "    @property", "    def factor(self):",
                  f"        return -super().factor * {src.choice(FLOATS)}", "",
                  "    def forward(self, v):", "        return super().forward(v) + self.factor", ""]
        cls = "Head"
    lines += ["def shout(v):", "    print('shout', v.shape[0])", "    return v", "",
              "def make():", f"    return {cls}({src.choice(FLOATS)})", "", "def f(m, x, k):",
              "    acc = 0.0", "    calls = 0"]
    for step in _driver_body(src, scope, callables, feats, prefix):
        lines += ["    " + line for line in step]
    ret = src.choice(("x", "(x, acc)", "{'x': x, 'acc': acc, 'calls': calls}", "(x.sum(), acc, calls)"))
    lines += [f"    return {ret}", ""]
    return "\n".join(lines) + "\n"


def _decorate(modules, lib, model, method, feats):
    """A decorator of the library (a functools.wraps closure counting calls in a library global)
    on one method of the model's class."""
    feats.add("decorator from another module")
    modules[lib] += ("\nimport functools\n\n\ndef counted(fn):\n    @functools.wraps(fn)\n"
                     "    def wrapper(*args, **kwargs):\n        COUNTS['seen'] += 1\n"
                     "        return fn(*args, **kwargs)\n    return wrapper\n")
    source = modules[model]
    if f"import {lib} as L" in source:
        deco = "L.counted"
    else:
        deco = "counted"
        source = source.replace(f"from {lib} import ", f"from {lib} import counted, ", 1)
    modules[model] = source.replace(f"    def {method}(self", f"    @{deco}\n    def {method}(self", 1)


def gen_modules(src, seed: int) -> ModProgram:
    """A program over two or three modules (names unique to `seed`)."""
    feats: set = set()
    lib, model, driver = f"fzm{seed}_lib", f"fzm{seed}_model", f"fzm{seed}_main"
    three = src.chance(0.5)
    lib_src, lib_helpers = _library(src, lib, feats)
    model_src, exported = _model(src, model, lib, lib_helpers, feats)
    modules = {lib: lib_src}
    if three:
        modules[model] = model_src
        modules[driver] = _driver(src, driver, model, exported, feats, own_module=driver)
        main = driver
    else:
        modules[model] = model_src + "\n" + _driver(src, model, model, exported, feats, own_module=None)
        main = model
    feats.add("three modules" if three else "two modules")
    calls = [(src.choice(SIZES), src.randint(0, 2 ** 31), src.choice((1, 2, 3, 0.5, -1.5)))
             for _ in range(src.randint(3, 4))]
    if src.chance(0.3):          # drawn last: the programs of earlier seeds stay as they were
        _decorate(modules, lib, model, src.choice(("forward", "scan", "tally")), feats)
    state = [(lib, "TOTAL"), (lib, "dict(COUNTS)"), (lib, "list(HISTORY)"),
             (lib, "Base.calls"), (lib, "vars(Base).get('gain')"),
             (lib, "[c.cell_contents for c in TICK.__closure__]"),
             (model, "TOTAL"), (model, "vars(Model).get('calls')")]
    return ModProgram(seed, modules, main, calls, state, tuple(sorted(feats)))
