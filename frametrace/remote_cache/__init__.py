"""A cache shared by processes and machines: PGO profiles and compiled kernels, on Redis.

    FRAMETRACE_REMOTE_CACHE=redis://host:6379/0  FRAMETRACE_CACHE_KEY=<secret> python prog.py

    from frametrace import remote_cache
    remote_cache.put("kernel", key, object_bytes)
    remote_cache.get("kernel", key)          # -> bytes, or None (miss, disabled, down, rejected)

It sits behind the local cache (`config.cache_dir`): readers look locally first and ask the remote
on a miss; writers write both. Nothing here is ever required: every failure is a miss.

* Trust. Loading a kernel object is running its machine code, so every entry is signed with
  HMAC-SHA256 keyed by FRAMETRACE_CACHE_KEY (see entry.py). Without a key the remote cache is
  off (one warning); an entry that is unsigned, wrongly signed, truncated or of another format
  version is rejected with a warning and never returned. Anyone holding the key can write code
  that every reader will run: give it only to machines you would let run your programs.
* Bounded cost. Each operation has a socket timeout (`remote_cache_timeout_s`, 0.3 s) and no
  retries. After a failure the remote is skipped for `remote_cache_backoff_s` (30 s; writes only,
  when the server refuses writes, e.g. out of memory) and frametrace goes on with the local cache.
* Concurrency. One SET per entry, which Redis applies atomically: many processes writing the
  same key leave one whole entry. Kernel keys are content hashes, so every writer writes the
  same bytes; PGO profiles are merged (pgo.py) before they are written.
"""
from __future__ import annotations

import logging
import os
import threading
import time

from ..config import config
from .entry import Rejected, seal, unseal

__all__ = ["get", "put", "enabled", "stats", "reset", "NAMESPACES"]

NAMESPACES = ("pgo", "kernel")
KEY_PREFIX = "frametrace:"
log = logging.getLogger("frametrace.remote_cache")

_lock = threading.Lock()
_store = None                   # _Store for the current (url, secret, timeout), built lazily
_warned: set = set()
_COUNTERS = ("gets", "hits", "misses", "puts", "errors", "rejected", "skipped")
_stats = {ns: dict.fromkeys(_COUNTERS, 0) for ns in NAMESPACES}


def _setting(name: str, default):
    """A setting from ft.config, else FRAMETRACE_<NAME>, else `default`."""
    try:
        value = getattr(config, name)
    except AttributeError:
        value = os.environ.get("FRAMETRACE_" + name.upper())
    return default if value is None else type(default)(value)


def _warn_once(what, message: str, *args) -> None:
    if what not in _warned:
        _warned.add(what)
        log.warning("frametrace remote cache: " + message, *args)


class _Store:
    """One Redis client plus the backoff state; every method returns instead of raising."""

    def __init__(self, url: str, secret: bytes, timeout: float):
        import redis
        from redis.backoff import NoBackoff
        from redis.retry import Retry
        self.url, self.secret, self.timeout = url, secret, timeout
        self.redis = redis
        self.client = redis.Redis.from_url(
            url, socket_timeout=timeout, socket_connect_timeout=timeout, retry=Retry(NoBackoff(), 0),
            retry_on_timeout=False, health_check_interval=0)
        self.down_until = 0.0           # skip everything until then (unreachable, slow)
        self.readonly_until = 0.0       # skip writes until then (full, read-only replica)

    def _failed(self, namespace: str, exc, writing: bool) -> None:
        _stats[namespace]["errors"] += 1
        backoff = _setting("remote_cache_backoff_s", 30.0)
        until = time.monotonic() + backoff
        refused = isinstance(exc, self.redis.ResponseError) and not isinstance(exc, self.redis.ConnectionError)
        if writing and refused:
            self.readonly_until = until         # at most one warning per backoff period
            log.warning("frametrace remote cache: %s refused a write (%s); not writing to it for %gs",
                        _safe(self.url), exc, backoff)
        else:
            self.down_until = until
            log.warning("frametrace remote cache: %s unavailable (%s: %s); using the local cache only for %gs",
                        _safe(self.url), type(exc).__name__, exc, backoff)

    def get(self, namespace: str, key: str):
        if time.monotonic() < self.down_until:
            _stats[namespace]["skipped"] += 1
            return None
        _stats[namespace]["gets"] += 1
        try:
            blob = self.client.get(KEY_PREFIX + namespace + ":" + key)
        except (self.redis.RedisError, OSError) as exc:
            self._failed(namespace, exc, writing=False)
            return None
        if blob is None:
            _stats[namespace]["misses"] += 1
            return None
        try:
            data = unseal(self.secret, namespace, key, bytes(blob))
        except Rejected as exc:
            _stats[namespace]["rejected"] += 1
            # once per stored content: a bad entry read at every compile is reported once
            _warn_once(("rejected", namespace, key, hash(blob)), "rejected entry %s:%s from %s: %s; not loaded",
                       namespace, key, _safe(self.url), exc)
            return None
        _stats[namespace]["hits"] += 1
        return data

    def put(self, namespace: str, key: str, data: bytes) -> None:
        now = time.monotonic()
        if now < self.down_until or now < self.readonly_until:
            _stats[namespace]["skipped"] += 1
            return
        try:
            self.client.set(KEY_PREFIX + namespace + ":" + key, seal(self.secret, namespace, key, bytes(data)))
        except (self.redis.RedisError, OSError) as exc:
            self._failed(namespace, exc, writing=True)
            return
        _stats[namespace]["puts"] += 1


def _safe(url: str) -> str:
    """The URL without a password (for messages)."""
    scheme, sep, rest = url.partition("://")
    if sep and "@" in rest:
        rest = rest.rsplit("@", 1)[1]
    return f"{scheme}{sep}{rest}"


def _current():
    """The store for the current settings, or None when the remote cache is off."""
    global _store
    url = _setting("remote_cache", "").strip()
    if not url:
        return None
    secret = os.environ.get("FRAMETRACE_CACHE_KEY", "")
    if not secret:
        _warn_once("nokey", "FRAMETRACE_REMOTE_CACHE is set but FRAMETRACE_CACHE_KEY is not: the remote cache "
                   "is off (entries are signed with that key, and unsigned code is never loaded)")
        return None
    timeout = _setting("remote_cache_timeout_s", 0.3)
    store = _store
    if store is not None and (store.url, store.secret, store.timeout) == (url, secret.encode(), timeout):
        return store
    with _lock:
        if not url.startswith(("redis://", "rediss://", "unix://")):
            _warn_once(("scheme", url), "unsupported URL %s (want redis://host:port/db); remote cache off", _safe(url))
            return None
        try:
            _store = _Store(url, secret.encode(), timeout)
        except ImportError:
            _warn_once("noredis", "FRAMETRACE_REMOTE_CACHE is set but the redis package is missing "
                       "(pip install 'frametrace[redis]'); remote cache off")
            return None
        except ValueError as exc:
            _warn_once(("url", url), "bad URL %s: %s; remote cache off", _safe(url), exc)
            return None
        return _store


def _check(namespace: str, key: str) -> None:
    if namespace not in NAMESPACES:
        raise ValueError(f"unknown remote cache namespace {namespace!r}; known: {NAMESPACES}")
    if not key or any(c.isspace() for c in key):
        raise ValueError(f"bad remote cache key {key!r}")


def enabled() -> bool:
    """Whether get/put talk to a remote store (URL and key set, redis installed)."""
    return _current() is not None


def get(namespace: str, key: str) -> bytes | None:
    """The payload stored under (namespace, key), or None: off, missing, unreachable, or rejected."""
    _check(namespace, key)
    store = _current()
    return None if store is None else store.get(namespace, key)


def put(namespace: str, key: str, data: bytes) -> None:
    """Store `data` under (namespace, key), signed; does nothing when off or unreachable."""
    _check(namespace, key)
    store = _current()
    if store is not None:
        store.put(namespace, key, data)


def stats(namespace: str | None = None) -> dict:
    """Counters of one namespace, or of all: gets, hits, misses, puts, errors, rejected, and
    skipped (operations not tried during a backoff)."""
    if namespace is not None:
        return dict(_stats[namespace])
    return {c: sum(ns[c] for ns in _stats.values()) for c in _COUNTERS}


def reset() -> None:
    """Drop the client, the backoff and the counters; warnings may be given again."""
    global _store
    with _lock:
        _store = None
        _warned.clear()
        for counters in _stats.values():
            counters.update(dict.fromkeys(_COUNTERS, 0))
