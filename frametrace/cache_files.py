"""Trust rules for files under `config.cache_dir`, shared by the PGO profiles (pgo.py) and the
kernel objects (backends/llvm/jit.py): the warning category of a rejected file or folder, and
owner-only folders.
"""
from __future__ import annotations

import os
import warnings


class CacheFileWarning(RuntimeWarning, UserWarning):
    """A file or folder under `config.cache_dir` that frametrace does not trust: the file is
    ignored and rebuilt. (A RuntimeWarning like frametrace's other warnings; also a UserWarning,
    what the kernel cache warned with before.)"""


_checked_dirs: set = set()


def private_dir(path: str, root: str, create: bool = True) -> None:
    """Make `path` (`root`, the cache dir, or a folder below it) exist, creating `root` and the
    folders below it owner-only (0o700) when `create`. A folder of them that already exists and
    that other users could write to (group/other write bit, or another owner) is warned about,
    once per process: whoever can write there decides what this process loads (kernels are
    machine code). The folders above `root` are the user's and left alone."""
    path, root = os.path.abspath(path), os.path.abspath(root)
    rel = os.path.relpath(path, root)
    if rel == ".." or rel.startswith(".." + os.sep):        # not below root: only path itself is ours
        root, rel = path, "."
    chain = [root]
    if rel != ".":
        for part in rel.split(os.sep):
            chain.append(os.path.join(chain[-1], part))
    if create:
        os.makedirs(os.path.dirname(root), exist_ok=True)
        for d in chain:
            try:
                os.mkdir(d, 0o700)
            except FileExistsError:
                continue
            os.chmod(d, 0o700)          # mkdir's mode is masked by the umask
    for d in chain:
        if d in _checked_dirs:
            continue
        try:
            info = os.stat(d)
        except OSError:
            continue
        _checked_dirs.add(d)
        foreign = hasattr(os, "getuid") and info.st_uid != os.getuid()
        if info.st_mode & 0o022 or foreign:
            mode = info.st_mode & 0o777
            who = "is owned by another user" if foreign else f"is writable by other users (mode {mode:o})"
            warnings.warn(f"frametrace: cache folder {d} {who}: anyone who can write there chooses the kernels "
                          "(machine code) and profiles this process loads; use chmod 700 or another "
                          "ft.config.cache_dir (FRAMETRACE_CACHE_DIR)", CacheFileWarning, stacklevel=3)
