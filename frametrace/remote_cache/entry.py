"""The authenticated envelope of a remote cache entry: nothing is returned that we did not sign.

    magic "FTRC" | version u16 | payload length u64 | HMAC-SHA256 (32 bytes) | payload

The HMAC (keyed by FRAMETRACE_CACHE_KEY) covers the version, the length, the namespace, the
key and the payload, so an entry cannot be edited, truncated, extended, or moved to another
key or namespace (e.g. a PGO profile served as a kernel object) without the check failing.
"""
from __future__ import annotations

import hashlib
import hmac
import struct

VERSION = 1
MAGIC = b"FTRC"
_HEAD = struct.Struct(">4sHQ")
_MAC_LEN = 32


class Rejected(Exception):
    """An entry that must not be used; the message says why (for the warning)."""


def _mac(secret: bytes, head: bytes, namespace: str, key: str, payload: bytes) -> bytes:
    h = hmac.new(secret, digestmod=hashlib.sha256)
    for part in (head, namespace.encode(), key.encode()):
        h.update(struct.pack(">I", len(part)))
        h.update(part)
    h.update(payload)
    return h.digest()


def seal(secret: bytes, namespace: str, key: str, payload: bytes, version: int = VERSION) -> bytes:
    """The stored form of `payload` under (namespace, key)."""
    head = _HEAD.pack(MAGIC, version, len(payload))
    return head + _mac(secret, head, namespace, key, payload) + payload


def unseal(secret: bytes, namespace: str, key: str, blob: bytes) -> bytes:
    """The payload of a stored entry; raises Rejected unless it is complete and ours."""
    if len(blob) < _HEAD.size + _MAC_LEN or blob[:4] != MAGIC:
        raise Rejected("not a signed frametrace entry")
    head = blob[:_HEAD.size]
    _, version, length = _HEAD.unpack(head)
    if version != VERSION:
        raise Rejected(f"entry format version {version}, this frametrace reads version {VERSION}")
    payload = blob[_HEAD.size + _MAC_LEN:]
    if len(payload) != length:
        raise Rejected(f"truncated or padded: {len(payload)} payload bytes, the header says {length}")
    if not hmac.compare_digest(blob[_HEAD.size:_HEAD.size + _MAC_LEN], _mac(secret, head, namespace, key, payload)):
        raise Rejected("bad signature (tampered, or written with another FRAMETRACE_CACHE_KEY)")
    return payload
