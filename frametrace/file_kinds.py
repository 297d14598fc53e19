"""Whose code a source file is: frametrace's own (the compiler and its runtime), the standard
library's or an installed package's, or the user's. One answer for the global hook's candidates,
the tracer's inlining rule and the sampler of ft.recording().

File names are compared normalised: a package imported through a sys.path entry with `..` or a
relative one has such names in its code objects (`/repo/benchmarks/../frametrace/enable.py`),
and frametrace hooking its own functions would recurse."""
from __future__ import annotations

import functools
import os
import sysconfig

FRAMETRACE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = os.path.join(os.path.dirname(FRAMETRACE), "csrc_free_runtime")
LIBRARY = tuple({os.path.abspath(sysconfig.get_paths()[k])
                 for k in ("stdlib", "platstdlib", "purelib", "platlib")})


@functools.lru_cache(maxsize=8192)
def normalized(filename: str) -> str:
    """`filename` absolute and without `.` / `..` parts (names like `<stdin>` as they are)."""
    if not filename or filename.startswith("<"):
        return filename
    return os.path.abspath(filename)


def is_ours(filename: str) -> bool:
    """A file of the frametrace package or of csrc_free_runtime."""
    f = normalized(filename)
    return f.startswith((FRAMETRACE + os.sep, RUNTIME + os.sep))


def is_library(filename: str) -> bool:
    """A file of the standard library or of an installed package."""
    f = normalized(filename)
    return f.startswith(LIBRARY) or "site-packages" in f or "dist-packages" in f
