"""DID resolution for the two methods we accept: did:key (local) and did:web.

A did:web document comes from the trust file (offline, the default) or, only
when the caller injects a fetcher (``acx_oci.net.https``), over HTTPS (with a
base-URL override so tests can serve it from loopback); this module never
touches the network itself. A key is only usable for credentials when
its controller document lists it under ``assertionMethod`` — a key that is
merely *present* in a document does not speak for the DID.
"""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Protocol

from acx_oci.crypto import b58decode, did_document, ed25519_public_from_multikey, public_from_did_key
from acx_oci.errors import AcxError, DidError, MethodNotAuthorizedError, UsageError
from acx_oci.jsonio import loads_ijson
from acx_oci.urls import split_fragment

# The one DID grammar: did:key (base58btc multibase) and did:web (host, optional %3A port, path segments).
DID_SYNTAX = re.compile(r"^did:(key:z[1-9A-HJ-NP-Za-km-z]+|web:[A-Za-z0-9.-]+(%3A[0-9]+)?(:[A-Za-z0-9._~-]+)*)\Z")
Fetch = Callable[[str], bytes]


class DocumentSource(Protocol):
    """Where offline DID documents come from (the trust file); kept abstract so this module stays pure."""

    def did_document_for(self, did: str) -> dict[str, Any] | None:
        """The DID document supplied offline for ``did``, or None to fall back to did:key derivation or did:web."""


def check_did(value: str, what: str = "DID") -> str:
    """A did:key or did:web in valid syntax, else a one-line UsageError naming ``what``."""
    if not isinstance(value, str) or not DID_SYNTAX.match(value):
        raise UsageError(f"{what}: expected did:key:z6Mk... or did:web:HOST[:PATH...], found {str(value)[:80]!r}")
    return value


MAX_DID_DOCUMENT_BYTES = 256 * 1024


def split_did_url(did_url: str) -> tuple[str, str | None]:
    """``did:x:y#frag`` -> (``did:x:y``, ``frag``); validates the DID syntax."""
    if not isinstance(did_url, str):
        raise DidError(f"expected a DID URL string, found {type(did_url).__name__}")
    base, frag = split_fragment(did_url)
    if not DID_SYNTAX.match(base):
        raise DidError(f"unsupported or malformed DID {base[:80]!r} (did:key and did:web are supported)")
    return base, (frag or None)


def did_web_url(did: str, base_url: str | None = None) -> str:
    """Map ``did:web`` to its HTTPS URL (did-method-web §3.2); ``base_url`` replaces scheme+host."""
    base, _ = split_did_url(did)
    if not base.startswith("did:web:"):
        raise DidError(f"not a did:web: {base}")
    parts = base[len("did:web:"):].split(":")
    host = urllib.parse.unquote(parts[0])
    if not host or "/" in host:
        raise DidError(f"malformed did:web host in {base}")
    path = "/".join(urllib.parse.unquote(p) for p in parts[1:])
    suffix = f"/{path}/did.json" if path else "/.well-known/did.json"
    root = base_url.rstrip("/") if base_url else f"https://{host}"
    return root + suffix


def fetch_did_web(did: str, fetch: Fetch, base_url: str | None = None) -> dict[str, Any]:
    """Fetch a did:web document with the injected (bounded) fetcher; any failure is a :class:`DidError`."""
    url = did_web_url(did, base_url)
    try:
        body = fetch(url)
    except AcxError as exc:
        raise DidError(f"did:web {did}: cannot fetch {url}: {exc}") from None
    if len(body) > MAX_DID_DOCUMENT_BYTES:
        raise DidError(f"did:web {did}: document at {url} is larger than {MAX_DID_DOCUMENT_BYTES} bytes")
    try:
        doc = loads_ijson(body)
    except ValueError:
        raise DidError(f"did:web {did}: document at {url} is not JSON") from None
    return check_did_document(doc, did)


def check_did_document(doc: Any, did: str) -> dict[str, Any]:
    """A DID document must be an object whose ``id`` is exactly the DID it claims to describe."""
    if not isinstance(doc, dict):
        raise DidError(f"DID document for {did}: expected a JSON object")
    if doc.get("id") != did:
        raise DidError(f"DID document for {did}: its id is {str(doc.get('id'))[:80]!r}")
    return doc


@lru_cache(maxsize=256)
def _did_key_document(base: str) -> dict[str, Any]:
    """did:key documents are a pure function of the DID; resolving 1,000 credentials reuses one."""
    try:
        return did_document(base, public_from_did_key(base))
    except UsageError as exc:
        raise DidError(f"{base[:60]}: {exc}") from None


def resolve(did: str, trust: DocumentSource | None = None, fetch: Fetch | None = None,
            base_url: str | None = None) -> dict[str, Any]:
    """Return the DID document: did:key derived locally, did:web from trust or (given ``fetch``) HTTPS."""
    base, _ = split_did_url(did)
    if base.startswith("did:key:"):
        return _did_key_document(base)
    if trust is not None:
        doc = trust.did_document_for(base)
        if doc is not None:
            return check_did_document(doc, base)
    if fetch is not None:
        return fetch_did_web(base, fetch, base_url)
    raise DidError(f"cannot resolve {base} offline: no DID document for it in the trust file "
                   "(pin it there as didDocument, or pass --allow-network to fetch it over HTTPS)")


def _method_id(did: str, ref: str) -> str:
    return did + ref if ref.startswith("#") else ref


def _method_key(method: dict[str, Any]) -> bytes:
    mid = method.get("id")
    if isinstance(method.get("publicKeyMultibase"), str):
        try:
            return ed25519_public_from_multikey(method["publicKeyMultibase"])
        except UsageError as exc:
            raise DidError(f"verification method {mid}: {exc}") from None
    if isinstance(method.get("publicKeyBase58"), str):  # legacy Ed25519VerificationKey2018
        try:
            raw = b58decode("z" + method["publicKeyBase58"], f"verification method {mid}")
        except UsageError as exc:
            raise DidError(str(exc)) from None
        if len(raw) == 32:
            return raw
    raise DidError(f"verification method {mid}: not an Ed25519 Multikey (publicKeyMultibase z6Mk...)")


def assertion_methods(doc: dict[str, Any]) -> list[tuple[str, bytes]]:
    """Every Ed25519 method listed under ``assertionMethod`` (by reference or embedded)."""
    did = str(doc.get("id"))
    listed, authorized = doc.get("verificationMethod"), doc.get("assertionMethod")
    methods = {_method_id(did, str(m.get("id"))): m for m in (listed if isinstance(listed, list) else [])
               if isinstance(m, dict) and isinstance(m.get("id"), str)}
    out: list[tuple[str, bytes]] = []
    for ref in authorized if isinstance(authorized, list) else []:
        if isinstance(ref, str):
            mid = _method_id(did, ref)
            method = methods.get(mid)
        elif isinstance(ref, dict) and isinstance(ref.get("id"), str):
            mid, method = _method_id(did, ref["id"]), ref
        else:
            continue
        if method is None:
            continue
        controller = method.get("controller", did)
        if controller != did:
            continue
        try:
            out.append((mid, _method_key(method)))
        except DidError:
            continue
    return out


def assertion_keys(did_or_method: str, trust: DocumentSource | None = None, fetch: Fetch | None = None,
                   base_url: str | None = None) -> list[tuple[str, bytes]]:
    """Resolve a DID (all its assertion keys) or a DID URL (that one method, if authorized).

    Raises :class:`MethodNotAuthorizedError` when the method is not under the
    controller document's ``assertionMethod``, :class:`DidError` when the DID
    cannot be resolved.
    """
    base, frag = split_did_url(did_or_method)
    doc = resolve(base, trust, fetch, base_url)
    keys = assertion_methods(doc)
    if frag is None:
        if not keys:
            raise MethodNotAuthorizedError(f"{base} lists no Ed25519 key under assertionMethod")
        return keys
    wanted = f"{base}#{frag}"
    match = [(mid, key) for mid, key in keys if mid == wanted]
    if not match:
        raise MethodNotAuthorizedError(f"verification method {wanted} is not listed under assertionMethod of {base}")
    return match


def controller_of(method: str) -> str:
    """The DID part of a verification-method URL."""
    return split_did_url(method)[0]
