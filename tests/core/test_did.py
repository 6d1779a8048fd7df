"""did:key local resolution, did:web URL mapping, offline and loopback-HTTPS resolution, assertionMethod rule."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import identity_from_seed
from acx_oci.net import https
from acx_oci.trust import Party, Trust, did

from ..support.httpserver import serving_files


def test_did_web_url_examples(vectors: Path) -> None:
    data = json.loads((vectors / "did" / "did-web-to-url-examples.json").read_text())
    for ex in data["examples"]:
        assert did.did_web_url(ex["did"]) == ex["url"]


def test_did_key_vectors_resolve_to_their_keys(vectors: Path) -> None:
    data = json.loads((vectors / "did" / "did-key-ed25519-x25519-test-vectors.json").read_text())
    checked = 0
    for did_value, entry in data.items():
        seed_hex = entry.get("seed") if isinstance(entry, dict) else None
        if not isinstance(seed_hex, str) or len(seed_hex) != 64:
            continue
        ident = identity_from_seed(bytes.fromhex(seed_hex))
        assert ident.did == did_value
        ((mid, key),) = did.assertion_keys(ident.did)
        assert key == ident.public_bytes and mid == ident.verification_method
        checked += 1
    assert checked >= 1


def test_spec_example_document_matches_local_resolution(vectors: Path) -> None:
    doc = json.loads((vectors / "did" / "did-key-spec-example-did-document.json").read_text())
    ours = did.resolve(doc["id"])
    assert did.assertion_methods(ours) == did.assertion_methods(doc)
    assert doc["keyAgreement"][0]["publicKeyMultibase"] in [m["publicKeyMultibase"] for m in ours["verificationMethod"]]


def _web_doc() -> tuple[Any, dict[str, Any]]:
    ident = identity_from_seed(bytes([9]) * 32, "did:web:v.example")
    return ident, ident.did_document()


def test_did_web_from_trust_offline() -> None:
    ident, doc = _web_doc()
    trust = Trust(verifiers=[Party(ident.did, doc)])
    assert did.assertion_keys("did:web:v.example#key-1", trust) == [("did:web:v.example#key-1", ident.public_bytes)]
    with pytest.raises(did.DidError):
        did.assertion_keys("did:web:v.example#key-1", None)


def test_method_must_be_under_assertion_method() -> None:
    ident, doc = _web_doc()
    doc["assertionMethod"] = []
    trust = Trust(verifiers=[Party(ident.did, doc)])
    with pytest.raises(did.MethodNotAuthorizedError):
        did.assertion_keys("did:web:v.example#key-1", trust)
    with pytest.raises(did.MethodNotAuthorizedError):
        did.assertion_keys("did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2#key-9")
    # the X25519 key-agreement key is never an assertion key
    with pytest.raises(did.MethodNotAuthorizedError):
        did.assertion_keys("did:web:v.example#key-2", Trust(verifiers=[Party(ident.did, ident.did_document())]))


def test_foreign_controller_and_relative_ids() -> None:
    ident, doc = _web_doc()
    doc["verificationMethod"][0]["id"] = "#key-1"
    doc["assertionMethod"] = ["#key-1"]
    trust = Trust(verifiers=[Party(ident.did, doc)])
    assert did.assertion_keys("did:web:v.example#key-1", trust)[0][1] == ident.public_bytes
    doc2 = ident.did_document()
    doc2["verificationMethod"][0]["controller"] = "did:web:evil.example"
    with pytest.raises(did.MethodNotAuthorizedError):
        did.assertion_keys("did:web:v.example#key-1", Trust(verifiers=[Party(ident.did, doc2)]))


def test_malformed_dids() -> None:
    for bad in ("did:example:123", "nope", "did:key:zzz", "did:web:"):
        with pytest.raises(did.DidError):
            did.assertion_keys(bad)


@pytest.fixture()
def did_server() -> Iterator[tuple[str, dict[str, bytes]]]:
    """A loopback HTTP server for did:web documents (``--did-web-base-url``), path -> bytes."""
    with serving_files() as served:
        yield served


def test_did_web_over_loopback_only_when_allowed(did_server: tuple[str, dict[str, bytes]]) -> None:
    base, files = did_server
    ident, doc = _web_doc()
    files["/.well-known/did.json"] = json.dumps(doc).encode()
    fetch = https.fetcher(max_bytes=did.MAX_DID_DOCUMENT_BYTES)
    with pytest.raises(did.DidError):
        did.assertion_keys("did:web:v.example#key-1", None, fetch=None, base_url=base)
    keys = did.assertion_keys("did:web:v.example#key-1", None, fetch=fetch, base_url=base)
    assert keys == [("did:web:v.example#key-1", ident.public_bytes)]
    files["/.well-known/did.json"] = json.dumps({**doc, "id": "did:web:other.example"}).encode()
    with pytest.raises(did.DidError):
        did.assertion_keys("did:web:v.example", None, fetch=fetch, base_url=base)
    with pytest.raises(did.DidError):
        did.assertion_keys("did:web:v.example:missing", None, fetch=fetch, base_url=base)


def test_an_unpinned_did_web_names_both_ways_out() -> None:
    """The refusal said '(allow network resolution ...)', which no option is called: it names the trust file's
    didDocument and resolve's --allow-network (whose help now says it fetches did:web documents too)."""
    from acx_oci.errors import DidError
    from acx_oci.trust import did as did_mod

    with pytest.raises(DidError) as exc:
        did_mod.resolve("did:web:verifier.example.com")
    assert "pin it there as didDocument, or pass --allow-network to fetch it over HTTPS" in str(exc.value)
