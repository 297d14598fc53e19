"""`python -m frametrace [options] script.py [args...]` / `python -m frametrace [options] -m module [args...]`.

Runs an unmodified program under the global hook (ft.enable()), as `python -m cProfile` runs one
under the profiler: `sys.argv`, `__main__`, `sys.path[0]`, exit codes, exceptions and
KeyboardInterrupt are what plain Python gives (frametrace's own frames are left out of tracebacks).
"""
from __future__ import annotations

import argparse
import atexit
import os
import runpy
import sys

USAGE = "python -m frametrace [options] (script.py | -m module) [args ...]"
_VALUED = ("--logs", "--trace", "--backend", "--dynamic")
_DYNAMIC = {"auto": None, "true": True, "false": False}


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m frametrace", usage=USAGE,
        description="Run a Python program with every NumPy function it calls compiled by frametrace.")
    p.add_argument("--logs", metavar="CHANNELS", default="",
                   help="comma list of log channels (the FRAMETRACE_LOGS names: graph_breaks,recompiles,dynamic,"
                        "guards,graph_code,output_code,loops,compile, all; +name for debug)")
    p.add_argument("--trace", metavar="DIR", help="write the structured trace (for tlparse) into DIR")
    p.add_argument("--backend", choices=("llvm", "numpy"), help="the backend (default: ft.config.backend)")
    p.add_argument("--dynamic", choices=tuple(_DYNAMIC), default="auto",
                   help="auto: static first, sizes that change become dynamic (default); true: every size "
                        "symbolic; false: one graph per size")
    p.add_argument("--report", action="store_true", help="print a compile report on stderr at exit")
    p.add_argument("-m", dest="module", metavar="module", help="run a library module as a script (like python -m)")
    return p


def split_argv(argv: list) -> tuple[list, list]:
    """(frametrace's options, [target, *its args]): options end at the script, or after `-m NAME`."""
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--":
            return argv[:i], argv[i + 1:]
        if a == "-m" or (a.startswith("-m") and not a.startswith("--")):
            return (argv[:i + 2], argv[i + 2:]) if a == "-m" else ([*argv[:i], "-m", a[2:]], argv[i + 1:])
        if not a.startswith("-") or a == "-":
            return argv[:i], argv[i:]
        i += 2 if a in _VALUED else 1
    return argv, []


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    options, rest = split_argv(argv)
    parser = _parser()
    args = parser.parse_args(options)
    import frametrace as ft
    from .log_setup import configure
    try:
        configure(args.logs)
    except ValueError as exc:
        parser.error(str(exc))
    if args.module is None and not rest:
        parser.print_usage(sys.stderr)
        print("python -m frametrace: error: name a script or -m module to run", file=sys.stderr)
        return 2
    if args.module is not None:
        target, prog_args = args.module, rest
    else:
        target, prog_args = rest[0], rest[1:]
        if not os.path.exists(target):
            print(f"python -m frametrace: can't open file {os.path.abspath(target)!r}: "
                  "[Errno 2] No such file or directory", file=sys.stderr)
            return 2

    _announce_long_compiles()
    if args.trace:
        from . import structured_trace
        structured_trace.enable(args.trace)

    if args.report:
        from .reporting.summary import recording
        recorder = recording()
        recorder.__enter__()
        atexit.register(_print_report, recorder)      # after the traceback, as plain Python's atexit
    sys.excepthook = _TrimmedHook(sys.excepthook)
    _prepare(args.module is not None, target, prog_args)
    ft.enable(dynamic=_DYNAMIC[args.dynamic], backend=args.backend)
    from . import import_hook
    import_hook.install()          # the modules the program imports: their functions hooked at once
    try:
        if args.module is not None:
            runpy.run_module(target, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(target, run_name="__main__")
    finally:
        import_hook.uninstall()
        ft.disable()
    return 0


def _only_long_compiles(record) -> bool:
    return getattr(record, "long_compile", False)


def _announce_long_compiles():
    """A compile longer than 2 s says so (while it runs and when it ends) even
    when the `compile` channel was not asked for; asked for, it logs every compile as usual."""
    import logging

    import frametrace as ft
    logger = logging.getLogger("frametrace.compile")
    if not logger.isEnabledFor(logging.INFO):
        ft.set_logs(compile=True)
        logger.addFilter(_only_long_compiles)


def _prepare(as_module: bool, target: str, prog_args: list):
    """sys.argv and sys.path[0] as `python target args` / `python -m target args` set them."""
    sys.argv = [target, *prog_args]       # runpy sets argv[0] to the module's file for -m
    if not as_module:
        sys.path[0] = os.path.dirname(os.path.abspath(target))
    # (python -m puts the working directory first on sys.path; `python -m frametrace` already did)


def _print_report(recorder):
    import frametrace as ft
    recorder.__exit__(None, None, None)
    sys.stdout.flush()
    print(ft.report(), file=sys.stderr)


_OURS = (os.path.abspath(__file__), os.path.join(os.path.dirname(os.path.abspath(__file__)), "__main__.py"),
         runpy.__file__)


class _TrimmedHook:
    """sys.excepthook that leaves frametrace's and runpy's frames out of an uncaught exception's
    traceback: the program's tracebacks read as under plain Python (KeyboardInterrupt and exit
    codes are Python's own: the exception leaves main())."""

    def __init__(self, hook):
        self.hook = hook

    def __call__(self, exc_type, exc, tb):
        while tb is not None and (tb.tb_frame.f_code.co_filename in _OURS
                                  or tb.tb_frame.f_code.co_filename.startswith("<frozen runpy")):
            tb = tb.tb_next
        if isinstance(exc, BaseException):
            exc.__traceback__ = tb       # what Python's own hook prints
        return self.hook(exc_type, exc, tb)


if __name__ == "__main__":
    sys.exit(main())
