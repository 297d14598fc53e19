"""Profile-guided dynamism (PGO): what automatic dynamic learnt, kept across processes.

Per code object, the `FrameState` (sizes per array source, values per int source; `None`/`?`
= seen varying) is merged into a small text file under `<config.cache_dir>/pgo/`, one file
per code object. The next process loads it before the first compile, so sizes that varied
before start dynamic and the size-change recompile never happens.

A profile file is the readable artifact text under a version and checksum line:

    # frametrace pgo v1 sha256=<sha256 hex of everything after this line>
    /abs/path/script.py:2:f:
      L['x']: array size=[?] stride=[8]
      L['n']: scalar ?

A file that fails the version, checksum, key or parse check is ignored with one warning
(`CacheFileWarning`) and rewritten by the next save; nothing is ever executed or unpickled.
Folders of the cache are created owner-only (0o700, `private_dir`, shared with the kernel cache
of backends/llvm/jit.py); an existing one that other users may write to is warned about.
Saves take an exclusive `fcntl.flock` on `<file>.lock` around read-merge-write and replace the
file atomically, so concurrent processes merge instead of overwriting each other.

With a remote cache (FRAMETRACE_REMOTE_CACHE, see remote_cache/), the same text is also kept
there under namespace "pgo" and the file's name: `load` reads the local file, else the remote
entry (and keeps a local copy); `save` writes the local file, then merges into the remote entry.
"""
from __future__ import annotations

import contextlib
import hashlib
import operator
import os
import re
import tempfile
import warnings

from . import structured_trace as st
from .cache_files import CacheFileWarning, private_dir
from .config import config
from .dynamic_policy import VARYING, FrameState, join_sizes

try:
    import fcntl
except ImportError:                 # not POSIX: atomic replace only, no cross-process lock
    fcntl = None

VERSION = 1
_HEADER = "# frametrace pgo v"
_ADVICE = ("PGO detected a recompilation due to dynamic shapes. To reduce shape recompilations by "
           "compiling dynamically to start, set environment variable FRAMETRACE_DYNAMIC_SOURCES=")


class _BadProfile(Exception):
    """A profile file we do not trust; the message says why."""


# ---------------------------------------------------------------------------------------------
# keys and paths

def _code_triple(code) -> tuple[str, int, str]:
    """(path, firstlineno, name) of a code object, a function, or such a tuple."""
    if isinstance(code, tuple):
        filename, firstlineno, name = code
    else:
        code = getattr(code, "__code__", code)
        filename, firstlineno, name = code.co_filename, code.co_firstlineno, code.co_name
    filename = str(filename)
    if not (filename.startswith("<") and filename.endswith(">")):   # "<stdin>", "<string>" stay
        filename = os.path.abspath(filename)
    return filename, int(firstlineno), str(name)


def code_key(code) -> str:
    """`/abs/path/script.py:2:f`: absolute file path, first line and name of the code object."""
    return "%s:%d:%s" % _code_triple(code)


def profile_path(code) -> str:
    """The profile file of `code`: readable stem plus a hash of the whole key (no collisions)."""
    filename, firstlineno, name = _code_triple(code)
    stem = re.sub(r"[^A-Za-z0-9_.-]", "_", f"{os.path.basename(filename)}.{firstlineno}.{name}")[:80]
    digest = hashlib.sha256(code_key(code).encode("utf-8", "surrogateescape")).hexdigest()[:16]
    return os.path.join(config.cache_dir, "pgo", f"{stem}.{digest}.txt")


# ---------------------------------------------------------------------------------------------
# lattice (sizes and strides join by dynamic_policy.join_sizes)

def _merge_dicts(a: dict, b: dict, join) -> dict:
    out = dict(a)
    for name, value in b.items():
        out[name] = join(out[name], value) if name in out else value
    return out


def merge(a: FrameState | None, b: FrameState | None) -> FrameState:
    """Join of two states: equal values stay, different ones become `?`, different ndim -> size=?."""
    out = FrameState()
    for s in (a, b):
        if s is None:
            continue
        out.sizes = _merge_dicts(out.sizes, s.sizes, join_sizes)
        out.ints = _merge_dicts(out.ints, s.ints, lambda x, y: x if x == y else None)
        out.strides = _merge_dicts(out.strides, getattr(s, "strides", {}), join_sizes)
    return out


def _dynamic_sources(state: FrameState) -> list[str]:
    """Source names seen varying; the items of a container seen varying as a whole are named once,
    by their group (`L['ids'][*]`, dynamic_policy.item_group)."""
    names = [n for n, size in state.sizes.items() if size is VARYING or None in size]
    groups = {n[:-len("[*]")] for n, v in state.ints.items() if v is None and n.endswith("[*]")}
    for n, v in state.ints.items():
        if v is None and n not in names and not (n.endswith("]") and n[:n.rfind("[")] in groups):
            names.append(n)
    return names


# ---------------------------------------------------------------------------------------------
# text

def _dims(dims) -> str:
    return "[" + ", ".join("?" if d is None else str(d) for d in dims) + "]"


def _scalar(value) -> str:
    try:
        return str(operator.index(value))
    except TypeError:           # None (seen varying) or not an int: nothing static to promise
        return "?"


def _printable(name) -> bool:
    return isinstance(name, str) and name != "" and "\n" not in name and "\r" not in name


def render(code, state: FrameState) -> str:
    """The readable profile: `<key>:` then one line per source (`?` = seen varying)."""
    lines = [code_key(code) + ":"]
    strides = state.strides
    for name, size in state.sizes.items():
        if not _printable(name):
            continue
        if size is VARYING:
            lines.append(f"  {name}: array size=?")
            continue
        text = f"  {name}: array size={_dims(size)}"
        stride = strides.get(name)
        if stride is not None and len(stride) == len(size):
            text += f" stride={_dims(stride)}"
        lines.append(text)
    for name, value in state.ints.items():
        if _printable(name):
            lines.append(f"  {name}: scalar {_scalar(value)}")
    return "\n".join(lines)


def recompile_advice(code, state: FrameState) -> str | None:
    """What to set so the next run compiles these sources dynamic from the start; None if none vary."""
    names = _dynamic_sources(state)
    if not names:
        return None
    return _ADVICE + '"' + ",".join(names) + '"'


_ARRAY = re.compile(r"  (?P<name>.+): array size=(?P<size>\?|\[[^\]]*\])(?: stride=(?P<stride>\[[^\]]*\]))?")
_SCALAR = re.compile(r"  (?P<name>.+): scalar (?P<value>\?|-?\d+)")


def _parse_dims(text: str) -> tuple:
    inner = text[1:-1].strip()
    if not inner:
        return ()
    out = []
    for item in inner.split(","):
        item = item.strip()
        if item == "?":
            out.append(None)
        elif re.fullmatch(r"-?\d+", item):
            out.append(int(item))
        else:
            raise _BadProfile(f"bad dimension {item!r}")
    return tuple(out)


def _file_text(code, state: FrameState) -> str:
    body = render(code, state) + "\n"
    return f"{_HEADER}{VERSION} sha256={hashlib.sha256(body.encode('utf-8')).hexdigest()}\n{body}"


def parse(text: str, key: str) -> FrameState:
    """The state a profile file holds; raises _BadProfile unless version, checksum and key check out."""
    head, sep, body = text.partition("\n")
    m = re.fullmatch(r"# frametrace pgo v(\d+) sha256=([0-9a-f]{64})", head)
    if not sep or m is None:
        raise _BadProfile("not a frametrace profile")
    if int(m.group(1)) != VERSION:
        raise _BadProfile(f"written by profile version {m.group(1)}, this is {VERSION}")
    if hashlib.sha256(body.encode("utf-8")).hexdigest() != m.group(2):
        raise _BadProfile("checksum mismatch (truncated or edited)")
    lines = body.split("\n")
    if lines[-1] != "":
        raise _BadProfile("missing final newline")
    if lines[0] != key + ":":
        raise _BadProfile(f"belongs to {lines[0][:-1]!r}")
    state = FrameState()
    for line in lines[1:-1]:
        if (m := _ARRAY.fullmatch(line)) is not None:
            size = VARYING if m.group("size") == "?" else _parse_dims(m.group("size"))
            state.sizes[m.group("name")] = size
            if m.group("stride") and size is not VARYING:
                state.strides[m.group("name")] = _parse_dims(m.group("stride"))
        elif (m := _SCALAR.fullmatch(line)) is not None:
            state.ints[m.group("name")] = None if m.group("value") == "?" else int(m.group("value"))
        else:
            raise _BadProfile(f"cannot parse line {line!r}")
    return state


# ---------------------------------------------------------------------------------------------
# files

_warned: set = set()


def _warn(key, message: str) -> None:
    """Warn once per (path, kind of problem) until a save repairs the file."""
    if key not in _warned:
        _warned.add(key)
        warnings.warn(f"frametrace PGO: {message}", CacheFileWarning, stacklevel=3)


def _read(path: str, key: str) -> FrameState | None:
    """The profile at `path`, or None when missing or untrusted (warned once)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(4 << 20)
    except FileNotFoundError:
        return None
    try:
        return parse(raw.decode("utf-8"), key)
    except (_BadProfile, UnicodeDecodeError) as exc:
        _warn((path, "bad"), f"ignoring profile {path}: {exc}; it is rewritten by the next save")
        return None


@contextlib.contextmanager
def _locked(lock_path: str):
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if fcntl is not None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)                # closing releases the flock


def _atomic_write(path: str, text: str) -> None:
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".tmp-", suffix=".txt")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(text.encode("utf-8"))
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _trace(compile_id, name: str, code, state: FrameState) -> None:
    if st.enabled():
        text = render(code, state)
        advice = recompile_advice(code, state)
        st.artifact(compile_id, name, text + ("\n\n" + advice if advice else ""))


def load(code, compile_id=None) -> FrameState | None:
    """The saved profile of `code` as a fresh FrameState (`.changed` False), or None.

    None when PGO is off, nothing was saved, or the file is untrusted (one warning).
    With `compile_id`, the structured trace gets a `get_local_code_state` artifact.
    """
    if not config.pgo:
        return None
    try:
        path = profile_path(code)
        private_dir(os.path.dirname(path), config.cache_dir, create=False)
        state = _read(path, code_key(code))
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        _warn(("load", type(exc)), f"cannot read profiles under {config.cache_dir}: {exc}")
        return None
    source = "get_local_code_state"
    if state is None or not (state.sizes or state.ints):
        state, source = _load_remote(code), "get_remote_code_state"
    if state is None or not (state.sizes or state.ints):
        return None
    state.changed = False
    _trace(compile_id, source, code, state)
    return state


def _remote_key(code) -> str:
    """The remote entry of `code`: the profile file's name (readable stem + hash of the key)."""
    return os.path.basename(profile_path(code))


def _load_remote(code) -> FrameState | None:
    """The remote profile of `code` (a local copy is kept for the next process), or None."""
    from . import remote_cache
    data = remote_cache.get("pgo", _remote_key(code))
    if data is None:
        return None
    try:
        state = parse(data.decode("utf-8"), code_key(code))
    except (_BadProfile, UnicodeDecodeError) as exc:
        _warn(("remote", _remote_key(code)), f"ignoring remote profile {_remote_key(code)}: {exc}")
        return None
    save(code, state, remote=False)         # the local copy (save warns instead of raising)
    return state


def _save_remote(code, state: FrameState) -> None:
    """Merge `state` into the remote profile of `code` (read, join, write if it grew)."""
    from . import remote_cache
    if not remote_cache.enabled():
        return
    key = code_key(code)
    remote = None
    data = remote_cache.get("pgo", _remote_key(code))
    if data is not None:
        try:
            remote = parse(data.decode("utf-8"), key)
        except (_BadProfile, UnicodeDecodeError):
            remote = None       # overwritten by a good one below
    merged = merge(remote, state)
    text = _file_text(code, merged)
    if remote is None or text != _file_text(code, remote):
        remote_cache.put("pgo", _remote_key(code), text.encode("utf-8"))


def save(code, state: FrameState, compile_id=None, remote: bool = True) -> None:
    """Merge `state` into the saved profile of `code` and write it atomically (no-op if PGO off);
    with a remote cache (and `remote`), merge it into the remote profile too.

    With `compile_id`, the structured trace gets a `put_local_code_state` artifact (merged text).
    """
    if not config.pgo or state is None or not (state.sizes or state.ints):
        return
    try:
        path = profile_path(code)
        key = code_key(code)
        private_dir(os.path.dirname(path), config.cache_dir)
        with _locked(path + ".lock"):
            on_disk = _read(path, key)
            merged = merge(on_disk, state)
            text = _file_text(code, merged)
            if on_disk is None or text != _file_text(code, on_disk):
                _atomic_write(path, text)
        _warned.discard((path, "bad"))
    except (OSError, ValueError, TypeError, AttributeError) as exc:
        _warn(("save", type(exc)), f"cannot save profile under {config.cache_dir}: {exc}")
        merged = merge(None, state)
    else:
        _trace(compile_id, "put_local_code_state", code, merged)
    if remote:
        _save_remote(code, merged)
