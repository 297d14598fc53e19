"""Hostile caches: truncated, corrupted, wrong-version and foreign files under cache_dir.

For kernel objects (`<cache_dir>/llvm/<key>.o`) and PGO profiles (`<cache_dir>/pgo/*.txt`):
each damaged file is rejected with a CacheFileWarning naming the file and why, the compiled
function still returns NumPy's result, and a valid file replaces the damaged one (the next
process reads it without a warning). Folders are created owner-only (0o700) and an existing
folder that others may write to is warned about.
"""
from __future__ import annotations

import contextlib
import hashlib
import os
import stat
import warnings

import numpy as np
import pytest

import frametrace as ft
from frametrace import pgo
from frametrace.backends.llvm import jit
from frametrace.cache_files import CacheFileWarning


def f(x):
    return np.sin(x) * 2.0 + x.shape[0]


def other(x):
    return np.cos(x) - 3.0


@pytest.fixture
def cache(tmp_path):
    d = tmp_path / "cache"
    with ft.config.patch(cache_dir=str(d), pgo=True):
        yield d


@contextlib.contextmanager
def _no_cache_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error", CacheFileWarning)
        yield


def _run(fn, n: int, backend: str = "llvm"):
    """A fresh process's view: forget compiled entries, compile `fn`, call it once, check it."""
    ft.reset()
    x = np.linspace(0.0, 1.0, n)
    np.testing.assert_allclose(ft.compile(fn, backend=backend)(x), fn(x), rtol=1e-12, atol=1e-12)


def _flip(data: bytes, at: int) -> bytes:
    out = bytearray(data)
    out[at] ^= 0xFF
    return bytes(out)


# ---------------------------------------------------------------------------------------------
# kernel objects

def _kernel_file(cache, fn) -> tuple:
    """(path, key, valid bytes) of the one kernel file `fn` compiles to. The first compile is
    static, so the kernel holds the size: every run of a test uses n=16 to reach the same file."""
    before = set((cache / "llvm").glob("*.o")) if (cache / "llvm").exists() else set()
    _run(fn, 16)
    (path,) = set((cache / "llvm").glob("*.o")) - before
    return path, path.stem, path.read_bytes()


def _kernel_damage(kind, cache, good: bytes) -> tuple:
    """(damaged file bytes, what the warning says) for each kind of hostile kernel file."""
    header_len = good.index(b"\n") + 1
    if kind == "truncated":
        return good[:header_len + (len(good) - header_len) // 2], "truncated"
    if kind == "flipped object byte":
        return _flip(good, header_len + (len(good) - header_len) // 2), "corrupt: checksum mismatch"
    if kind == "flipped checksum":
        return _flip(good, header_len - 3), "corrupt: checksum mismatch"
    if kind == "wrong version":
        return good.replace(b"frametrace-kernel v2 ", b"frametrace-kernel v9 ", 1), "format v9"
    if kind == "version 1 file":
        obj = good[header_len:]
        return b"FTOBJ1\n" + hashlib.sha256(obj).digest() + obj, "format v1"
    if kind == "random bytes":
        return np.random.default_rng(0).bytes(4096), "foreign"
    if kind == "pgo profile":
        return b"# frametrace pgo v1 sha256=" + b"0" * 64 + b"\n/x.py:1:f:\n", "foreign"
    if kind == "another key":          # a whole, valid file, copied from another kernel's name
        _, _, theirs = _kernel_file(cache, other)
        return theirs, "another key"
    raise AssertionError(kind)


KERNEL_DAMAGE = ["truncated", "flipped object byte", "flipped checksum", "wrong version", "version 1 file",
                 "random bytes", "pgo profile", "another key"]


@pytest.mark.parametrize("kind", KERNEL_DAMAGE)
def test_hostile_kernel_file_is_rejected_and_rebuilt(cache, kind):
    path, key, good = _kernel_file(cache, f)
    assert jit.check(good, key)
    damaged, why = _kernel_damage(kind, cache, good)
    path.write_bytes(damaged)
    rejected = jit.stats["corrupt"]
    with pytest.warns(CacheFileWarning, match="ignoring kernel cache file") as record:
        _run(f, 16)                                 # the result is still NumPy's
    assert jit.stats["corrupt"] == rejected + 1
    messages = [str(w.message) for w in record if issubclass(w.category, CacheFileWarning)]
    assert any(str(path) in m and why in m and "rebuilt" in m for m in messages), messages
    rebuilt = path.read_bytes()
    assert rebuilt != damaged and jit.check(rebuilt, key)           # a valid file replaced it
    hits = jit.stats["hits"]
    with _no_cache_warnings():
        _run(f, 16)
    assert jit.stats["hits"] == hits + 1                            # and the next compile loads it


def test_kernel_check_names_each_problem():
    obj = b"\x7fELF" + bytes(range(200))
    good = jit._header("k" * 64, obj) + obj
    assert jit.check(good, "k" * 64) == obj
    for data, why in [(good, "another key"), (good[:-1], "truncated"), (good + b"\0", "truncated or padded"),
                      (b"", "foreign"), (b"frametrace-kernel v2 " + b"x" * 400, "foreign")]:
        with pytest.raises(ValueError, match=why):
            jit.check(data, "j" * 64 if why == "another key" else "k" * 64)


def test_unreadable_kernel_file_is_rebuilt(cache):
    path, key, _ = _kernel_file(cache, f)
    path.unlink()
    path.mkdir()                                    # open() fails with IsADirectoryError
    with pytest.warns(CacheFileWarning) as record:
        _run(f, 16)                                 # compiled anew: still NumPy's result
    messages = " | ".join(str(w.message) for w in record)
    assert "cannot read it" in messages and "cannot write kernel cache" in messages, messages


# ---------------------------------------------------------------------------------------------
# PGO profiles

def _profile_file(cache):
    """Learn that f's size varies (two calls), so a profile with `size=[?]` is saved."""
    ft.reset()
    cf = ft.compile(f, backend="numpy")
    for n in (10, 20):
        x = np.linspace(0.0, 1.0, n)
        np.testing.assert_allclose(cf(x), f(x))
    (path,) = (cache / "pgo").glob("*.txt")
    assert "L['x']: array size=[?]" in path.read_text()
    return path, path.read_bytes()


def _stamped(body: bytes, version: int = 1) -> bytes:
    return b"# frametrace pgo v%d sha256=%s\n" % (version, hashlib.sha256(body).hexdigest().encode()) + body


def _profile_damage(kind, cache, good: bytes) -> tuple:
    head, _, body = good.partition(b"\n")
    if kind == "truncated":
        return good[:len(good) - 5], "checksum mismatch"
    if kind == "flipped byte":
        return good.replace(b"size=[?]", b"size=[7]"), "checksum mismatch"
    if kind == "wrong version":
        return _stamped(body, version=9), "version 9"
    if kind == "random bytes":
        return np.random.default_rng(1).bytes(512), "codec can't decode"
    if kind == "kernel file":
        _, _, obj = _kernel_file(cache, other)
        return obj, "ignoring profile"
    if kind == "another function":     # valid stamp and checksum, but the profile of another key
        return _stamped(body.replace(b":f:\n", b":other:\n", 1)), "belongs to"
    raise AssertionError(kind)


PROFILE_DAMAGE = ["truncated", "flipped byte", "wrong version", "random bytes", "kernel file", "another function"]


@pytest.mark.parametrize("kind", PROFILE_DAMAGE)
def test_hostile_profile_is_rejected_and_rebuilt(cache, kind):
    path, good = _profile_file(cache)
    damaged, why = _profile_damage(kind, cache, good)
    path.write_bytes(damaged)
    ft.reset()
    cf = ft.compile(f, backend="numpy")
    x = np.linspace(0.0, 1.0, 30)
    with pytest.warns(CacheFileWarning, match="ignoring profile") as record:
        np.testing.assert_allclose(cf(x), f(x))
    messages = [str(w.message) for w in record if issubclass(w.category, CacheFileWarning)]
    assert any(str(path) in m and why in m for m in messages), messages
    assert ft.stats().frames_compiled == 1
    # the untrusted profile was not used (no size starts dynamic), and the save rebuilt it
    rebuilt = path.read_bytes()
    assert rebuilt != damaged
    with _no_cache_warnings():
        state = pgo.load(f)
    assert state.sizes == {"L['x']": (30,)}
    assert pgo.parse(rebuilt.decode(), pgo.code_key(f)).sizes == state.sizes


def test_valid_profile_is_used_without_warning(cache):
    """The control: the same profile left alone makes the next process compile dynamic at once."""
    _profile_file(cache)
    ft.reset()
    cf = ft.compile(f, backend="numpy")
    with _no_cache_warnings():
        for n in (30, 40):
            x = np.linspace(0.0, 1.0, n)
            np.testing.assert_allclose(cf(x), f(x))
    assert (ft.stats().frames_compiled, ft.stats().recompiles) == (1, 0)


# ---------------------------------------------------------------------------------------------
# permissions

def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_cache_folders_are_owner_only(cache):
    old = os.umask(0)                   # even a permissive umask gives owner-only folders
    try:
        _run(f, 12)                     # kernels
        _run(f, 13)                     # another size: PGO saves a profile
    finally:
        os.umask(old)
    for folder in (cache, cache / "llvm", cache / "pgo"):
        assert _mode(folder) == 0o700, (folder, oct(_mode(folder)))
    for file in [*(cache / "llvm").glob("*.o"), *(cache / "pgo").glob("*.txt")]:
        assert _mode(file) & 0o077 == 0, (file, oct(_mode(file)))


@pytest.mark.parametrize("folder", ["", "llvm", "pgo"])
def test_folder_others_can_write_is_warned_about(cache, folder):
    (cache / "llvm").mkdir(parents=True)
    (cache / "pgo").mkdir()
    os.chmod(cache / folder, 0o777)
    with pytest.warns(CacheFileWarning, match="writable by other users") as record:
        _run(f, 12)
        _run(f, 13)
    assert any(str(cache / folder).rstrip("/") in str(w.message) for w in record)
