"""`%load_ext frametrace`, then a cell starting with `%%frametrace` runs under the global hook and
prints the report of what it compiled:

    %%frametrace
    for n in (100, 200, 300):
        step(np.ones(n))

IPython is imported here only, when the extension loads (it is no dependency of frametrace).
Options: `%%frametrace --dynamic true --backend numpy --no-report`.
"""
from __future__ import annotations

import argparse
import shlex
import types

_DYNAMIC = {"auto": None, "true": True, "false": False}


def _parse(line: str):
    p = argparse.ArgumentParser(prog="%%frametrace", add_help=False)
    p.add_argument("--dynamic", choices=tuple(_DYNAMIC), default="auto")
    p.add_argument("--backend", choices=("llvm", "numpy"))
    p.add_argument("--no-report", dest="report", action="store_false")
    return p.parse_args(shlex.split(line))


def run_cell(shell, line: str, cell: str):
    """Run `cell` in `shell` with its functions compiled; print the report of this cell."""
    import frametrace as ft
    from csrc_free_runtime import global_hook

    from ..enable import consider
    from . import records, summary
    args = _parse(line)
    first = len(records.snapshot())
    hits = ft.stats().cache_hits
    with summary.recording() as sampler, ft.enabled(dynamic=_DYNAMIC[args.dynamic], backend=args.backend):
        for value in list(shell.user_ns.values()):      # functions earlier cells defined
            if isinstance(value, types.FunctionType) and consider(value.__code__):
                global_hook.install(value, global_owned=True)
        try:
            source = shell.transform_cell(cell)
            code = shell.compile(source, shell.compile.cache(source), "exec")
            exec(code, shell.user_ns)            # noqa: S102 - the user's cell, as IPython runs it
        finally:
            if args.report:
                print(summary.Report(summary.build(since=first, hits_since=hits, sampler=sampler)))


def load_ipython_extension(ipython):
    from IPython.core.magic import Magics, cell_magic, magics_class

    @magics_class
    class FrametraceMagics(Magics):
        @cell_magic
        def frametrace(self, line, cell):
            """Run the cell with every NumPy function it calls compiled; print the compile report."""
            run_cell(self.shell, line, cell)

    ipython.register_magics(FrametraceMagics)
