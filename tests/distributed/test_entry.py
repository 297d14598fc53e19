"""The signed envelope of remote cache entries: only complete entries we signed come back."""
import struct

import pytest

from frametrace.remote_cache.entry import Rejected, seal, unseal

KEY = b"k" * 32
PAYLOAD = bytes(range(256)) * 4


def test_round_trip():
    blob = seal(KEY, "kernel", "abc", PAYLOAD)
    assert unseal(KEY, "kernel", "abc", blob) == PAYLOAD
    assert unseal(KEY, "pgo", "x", seal(KEY, "pgo", "x", b"")) == b""


@pytest.mark.parametrize("where", [0, 4, 6, 14, 20, 46, 100, -1])
def test_any_flipped_byte_is_rejected(where):
    blob = bytearray(seal(KEY, "kernel", "abc", PAYLOAD))
    blob[where] ^= 0x01
    with pytest.raises(Rejected):
        unseal(KEY, "kernel", "abc", bytes(blob))


def test_wrong_key_is_rejected():
    with pytest.raises(Rejected, match="bad signature"):
        unseal(b"another key", "kernel", "abc", seal(KEY, "kernel", "abc", PAYLOAD))


@pytest.mark.parametrize("cut", [1, 100, len(PAYLOAD)])
def test_truncated_is_rejected(cut):
    blob = seal(KEY, "kernel", "abc", PAYLOAD)
    with pytest.raises(Rejected, match="truncated"):
        unseal(KEY, "kernel", "abc", blob[:-cut])
    with pytest.raises(Rejected):
        unseal(KEY, "kernel", "abc", blob[:10])


def test_padded_is_rejected():
    with pytest.raises(Rejected, match="truncated or padded"):
        unseal(KEY, "kernel", "abc", seal(KEY, "kernel", "abc", PAYLOAD) + b"\0")


def test_wrong_version_is_rejected_even_if_signed():
    with pytest.raises(Rejected, match="version 2"):
        unseal(KEY, "kernel", "abc", seal(KEY, "kernel", "abc", PAYLOAD, version=2))


def test_unsigned_payload_is_rejected():
    with pytest.raises(Rejected, match="not a signed"):
        unseal(KEY, "kernel", "abc", PAYLOAD)
    # right magic and version, but a length and MAC that are not ours
    fake = b"FTRC" + struct.pack(">HQ", 1, len(PAYLOAD)) + b"\0" * 32 + PAYLOAD
    with pytest.raises(Rejected, match="bad signature"):
        unseal(KEY, "kernel", "abc", fake)


def test_entry_is_bound_to_its_key_and_namespace():
    blob = seal(KEY, "kernel", "abc", PAYLOAD)
    with pytest.raises(Rejected):
        unseal(KEY, "kernel", "abd", blob)
    with pytest.raises(Rejected):
        unseal(KEY, "pgo", "abc", blob)
