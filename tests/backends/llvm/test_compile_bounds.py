"""Large straight-line graphs compile, exactly, with bounded kernels (lower/schedule.py
MAX_LAZY_DEPTH, lower/fusion.py MAX_KERNEL_JOBS / MAX_KERNEL_REDUCTIONS): an unrolled chain of
hundreds of elementwise steps used to exceed Python's recursion limit in lowering (the graph then
ran on NumPy, or failed in strict mode), and one kernel collecting every job cost time quadratic
in its jobs. Mutation hazards are found in time linear in the graph (schedule._mutation_hazards)."""
import numpy as np
import pytest

import frametrace as ft
from frametrace.lower import fusion, schedule
from frametrace.lower.loop_ir import Op, Store, Update
from frametrace.reporting import watch
from helpers import assert_same

rng = np.random.default_rng(12)


def straight_line(name: str, lines: list, head=(), ret="x"):
    """A function of `x` made of `lines`, as an unrolled loop would trace (no Python loop)."""
    src = "\n".join([f"def {name}(x):"] + [f"    {s}" for s in list(head) + lines + [f"return {ret}"]])
    ns = {"np": np}
    exec(compile(src, f"<{name}>", "exec"), ns)
    return ns[name]


def kernels_of(fn):
    run = fn._frametrace_cache.entries[0].info.namespace["___graph"]
    return [s.kernel for s in run.steps if hasattr(s, "kernel")]


def expr_depth(e) -> int:
    """Longest chain of operations in an expression (iterative: the expression may be deep)."""
    depth, best, stack = {}, 0, [(e, False)]
    while stack:
        x, done = stack.pop()
        if not isinstance(x, Op) or id(x) in depth:
            continue
        if done:
            depth[id(x)] = 1 + max((depth.get(id(a), 0) for a in x.args), default=0)
            best = max(best, depth[id(x)])
        else:
            stack.append((x, True))
            stack.extend((a, False) for a in x.args)
    return best


def statements(body):
    for s in body:
        yield s
        yield from statements(getattr(s, "body", ()))


@pytest.mark.parametrize("steps", [1, 30, 400])
def test_long_elementwise_chain_compiles_exactly(steps):
    fn = straight_line(f"chain{steps}", [f"x = x * {1 + (i % 5) * 1e-3!r} - {(i % 3) * 0.25!r}"
                                          for i in range(steps)])
    x = rng.standard_normal((3, 70))
    f = ft.compile(fn)
    assert_same(f(x), fn(x))
    ks = kernels_of(f)
    assert len(ks) == max(1, -(-2 * steps // (schedule.MAX_LAZY_DEPTH + 1)))
    for k in ks:
        for s in statements(k.body):
            if isinstance(s, (Store, Update)):
                assert expr_depth(s.value) <= schedule.MAX_LAZY_DEPTH + 1


def test_chain_through_views_and_a_reused_value():
    lines = []
    for i in range(120):
        lines.append(f"x = (x[1:] + x[:-1]) * 0.5 + {i % 4}.0" if i % 10 == 0 else f"x = x - x * {0.01 * (i % 7)!r}")
    fn = straight_line("views", lines, ret="x, x.sum()")
    x = rng.standard_normal(64)
    assert_same(ft.compile(fn)(x), fn(x))


def test_many_reductions_split_into_bounded_kernels():
    fn = straight_line("norms", ["x = x / (np.abs(x).sum() + 1.0)"] * 60)
    x = rng.standard_normal(200)
    f = ft.compile(fn)
    assert_same(f(x), fn(x))
    ks = kernels_of(f)
    assert len(ks) >= 60 / fusion.MAX_KERNEL_REDUCTIONS
    for k in ks:
        accumulators = [s for s in statements(k.body) if type(s).__name__ == "Acc"]
        assert len(accumulators) <= fusion.MAX_KERNEL_REDUCTIONS


def test_many_outputs_still_share_one_kernel():
    fn = straight_line("outs", [f"y{i} = np.sin(x) * {i}.0" for i in range(40)],
                       ret="(" + ", ".join(f"y{i}" for i in range(40)) + ")")
    x = rng.standard_normal(50)
    f = ft.compile(fn)
    assert_same(f(x), fn(x))
    assert len(kernels_of(f)) == 1


def test_element_writes_and_values_read_before_them():
    """Hundreds of writes into an array, with values computed before some writes and used
    after them (NumPy computed them before the write: they must not see it)."""
    lines = []
    for i in range(150):
        lines.append(f"x[{i % 40 + 1}] = x[{i % 40}] * 0.5 + 1.0")
        if i % 25 == 0:
            lines.append(f"v{i} = x * 2.0")
    keep = [f"v{i}" for i in range(0, 150, 25)]
    fn = straight_line("writes", lines, head=["x = x.copy()"], ret="(x, " + ", ".join(keep) + ")")
    x = rng.standard_normal(50)
    assert_same(ft.compile(fn)(x), fn(x))


def test_compile_log_of_a_large_graph_names_its_size(caplog, monkeypatch):
    # on a loaded machine this compile can pass 2 s: then the watcher's "still compiling" line would
    # come too (its own test is in tests/cli/test_report.py)
    monkeypatch.setattr(watch, "ANNOUNCE_AFTER_S", 3600.0)
    fn = straight_line("big", ["x = x * 1.5 - 0.25"] * 300)
    ft.set_logs(compile=True)
    try:
        with caplog.at_level("INFO", logger="frametrace.compile"):
            ft.compile(fn)(rng.standard_normal(10))
    finally:
        ft.set_logs(compile=False)
    (line,) = [r.getMessage() for r in caplog.records if r.name == "frametrace.compile"]
    assert "big (<big>:1): graph of 600 nodes" in line
