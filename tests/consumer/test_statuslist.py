"""Bitstring Status List v1.0: the vectors decode to their documented indices; bombs and short lists refused."""

from __future__ import annotations

import base64
import gzip
import json
import resource
import zlib
from datetime import UTC, datetime
from pathlib import Path

import pytest

from acx_oci.crypto import dataintegrity, identity_from_seed
from acx_oci.errors import StatusListError
from acx_oci.model import statuslist
from acx_oci.trust import assertion_keys

DOCUMENTED = {
    "1edtech-validator/testlist.json": [23],
    "generated-by-digitalbazaar/statuslist-131072-empty.json": [],
    "generated-by-digitalbazaar/statuslist-131072-set-0-1-7-8-23-94567-131071.json":
        [0, 1, 7, 8, 23, 94567, 131071],
    "generated-by-digitalbazaar/statuslist-262144-set-131072-262143.json": [131072, 262143],
    "spec-examples/example-bitstring-status-list-credential.json": [],
    "spec-examples/example-status-list-credential.json": [],
}
LEGACY = ["status-credential-multi-purpose-fail.json", "status-credential-multi-purpose-ok.json",
          "status-credential-short-encoded-list-fail.json", "status-credential-single-purpose-fail.json",
          "status-credential-single-purpose-ok.json"]


@pytest.mark.parametrize(("name", "indices"), sorted(DOCUMENTED.items()))
def test_vectors_decode_to_documented_indices(vectors: Path, name: str, indices: list[int]) -> None:
    doc = json.loads((vectors / "bitstring-status-list" / name).read_text())
    bits = statuslist.list_bits(doc)
    assert statuslist.set_indices(bits) == indices
    assert len(bits) * 8 >= statuslist.MIN_ENTRIES


def test_signed_status_list_vector(vectors: Path) -> None:
    doc = json.loads((vectors / "eddsa-jcs-2022/generated-by-digitalbazaar/signed-status-list-credential.json")
                     .read_text())
    assert statuslist.set_indices(statuslist.list_bits(doc)) == [0, 1, 7, 8, 23, 94567, 131071]
    assert dataintegrity.all_ok(dataintegrity.verify(doc, lambda vm: [k for _, k in assertion_keys(vm)]))


@pytest.mark.parametrize("name", LEGACY)
def test_legacy_lists_without_u_prefix_are_refused(vectors: Path, name: str) -> None:
    doc = json.loads((vectors / "bitstring-status-list/w3c-test-suite-legacy" / name).read_text())
    with pytest.raises(StatusListError, match="prefix"):
        statuslist.list_bits(doc)


def test_level6_mtime0_reproduces_the_spec_example(vectors: Path) -> None:
    doc = json.loads((vectors / "bitstring-status-list/spec-examples/example-status-list-credential.json").read_text())
    assert statuslist.encode_bits(bytes(16384)) == doc["credentialSubject"]["encodedList"]


def _encode_raw(compressed: bytes) -> str:
    return "u" + base64.urlsafe_b64encode(compressed).decode().rstrip("=")


def test_gzip_bomb_is_refused_with_bounded_memory() -> None:
    # 512 MiB of zeros, compressed in chunks so the test itself never holds them.
    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    chunk = bytes(1 << 20)
    parts = [comp.compress(chunk) for _ in range(512)]
    parts.append(comp.flush())
    encoded = _encode_raw(b"".join(parts))
    assert len(encoded) < 2 * 1024 * 1024
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(StatusListError, match="bomb"):
        statuslist.decode_encoded_list(encoded)
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 64 * 1024, f"decoding grew RSS by {grown_kib} KiB"


def test_short_list_is_refused() -> None:
    with pytest.raises(StatusListError, match="at least 131072"):
        statuslist.decode_encoded_list(_encode_raw(gzip.compress(bytes(125), mtime=0)))  # 1,000 bits


@pytest.mark.parametrize("encoded", ["", "u", "u!!!", "uAAAA", "u" + "A" * 40, 5, "u+/+/"])
def test_malformed_lists_are_refused(encoded: object) -> None:
    with pytest.raises(StatusListError):
        statuslist.decode_encoded_list(encoded)


def test_truncated_gzip_is_refused() -> None:
    raw = gzip.compress(bytes(16384), mtime=0)
    with pytest.raises(StatusListError):
        statuslist.decode_encoded_list(_encode_raw(raw[:-12]))


def test_bit_order_msb_first() -> None:
    bits = statuslist.empty_bits()
    statuslist.set_bit(bits, 0)
    statuslist.set_bit(bits, 9)
    assert bits[0] == 0x80 and bits[1] == 0x40
    assert statuslist.get_bit(bits, 9) and not statuslist.get_bit(bits, 10)
    statuslist.set_bit(bits, 9, False)
    assert statuslist.set_indices(bits) == [0]
    with pytest.raises(StatusListError):
        statuslist.get_bit(bits, statuslist.MIN_ENTRIES)


def test_random_allocation_avoids_used_and_spreads() -> None:
    used = set(range(0, statuslist.MIN_ENTRIES, 2))
    picks = {statuslist.allocate_index(statuslist.MIN_ENTRIES, used) for _ in range(200)}
    assert all(p % 2 == 1 for p in picks)
    assert len(picks) > 150
    with pytest.raises(StatusListError):
        statuslist.allocate_index(8, set(range(8)), attempts=50)


def test_create_revoke_sign_roundtrip() -> None:
    ident = identity_from_seed(bytes([3]) * 32)
    now = datetime(2026, 7, 1, tzinfo=UTC)
    url = statuslist.new_list_url("https://v.example/status/")
    assert len(url.rsplit("/", 1)[1]) == 36
    lst = statuslist.new_status_list(list_url=url, issuer=ident.did, valid_from=now)
    signed = statuslist.sign_status_list(lst, ident, ident.verification_method, now)
    resolve = lambda vm: [k for _, k in assertion_keys(vm)]  # noqa: E731
    assert dataintegrity.all_ok(dataintegrity.verify(signed, resolve))
    revoked = statuslist.sign_status_list(statuslist.with_bit(signed, 4242, True, valid_from=now), ident,
                                          ident.verification_method, now)
    assert statuslist.set_indices(statuslist.list_bits(revoked)) == [4242]
    assert dataintegrity.all_ok(dataintegrity.verify(revoked, resolve))
    entry = statuslist.status_entry(url, 4242)
    assert entry["statusListIndex"] == "4242" and entry["id"] == f"{url}#4242"
    with pytest.raises(StatusListError):
        statuslist.new_status_list(list_url=url, issuer=ident.did, valid_from=now, size=1000)


def test_index_parsing() -> None:
    assert statuslist.parse_index("94567") == 94567
    assert statuslist.parse_index(23) == 23
    for bad in ("-1", "1e3", True, None, "0x10"):
        with pytest.raises(StatusListError):
            statuslist.parse_index(bad)
