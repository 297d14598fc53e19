"""Under `python -m frametrace`, a user module imported while the program runs has its functions
hooked as soon as its body has run, as ft.enable() does for the modules loaded before it
(discovery alone finds a function only if its first call comes while the profiler is armed).

A finder first on sys.meta_path asks the others for the spec; for a user module's source file
it wraps that spec's own loader instance's exec_module (its type and other methods unchanged).
"""
from __future__ import annotations

import sys
import threading

from csrc_free_runtime import global_hook

from .enable import is_user_file


class _Finder:
    def __init__(self):
        self.local = threading.local()

    def find_spec(self, fullname, path, target=None):
        if getattr(self.local, "busy", False):
            return None
        self.local.busy = True
        try:
            spec = None
            for finder in sys.meta_path:
                find = getattr(finder, "find_spec", None)
                if finder is self or find is None:
                    continue
                spec = find(fullname, path, target)
                if spec is not None:
                    break
        finally:
            self.local.busy = False
        if spec is None or not (spec.origin or "").endswith(".py") or not is_user_file(spec.origin):
            return spec
        loader = spec.loader
        run = getattr(loader, "exec_module", None)
        if run is None or "exec_module" in getattr(loader, "__dict__", {"exec_module": 0}):
            return spec

        def exec_module(module):
            run(module)
            if global_hook.enabled():
                global_hook.hook_module(module)
        loader.exec_module = exec_module
        return spec


_finder = _Finder()


def install():
    if _finder not in sys.meta_path:
        sys.meta_path.insert(0, _finder)


def uninstall():
    if _finder in sys.meta_path:
        sys.meta_path.remove(_finder)
