"""Key resolution that may go online: did:web documents over HTTPS (the caller's I/O, kept out of evaluation).

The judge in :mod:`acx_oci.evaluation` resolves keys offline (trust file, did:key)
unless it is handed a resolver; this module builds the one that fetches.
"""

from __future__ import annotations

from acx_oci.evaluation.checks import KeyResolver, offline_keys
from acx_oci.net import https
from acx_oci.trust import did
from acx_oci.trust.trustfile import Trust


def network_keys(trust: Trust | None, base_url: str | None = None) -> KeyResolver:
    """A resolver that fetches did:web documents not in ``trust`` over HTTPS (``base_url``: serve them locally)."""
    fetch = https.fetcher(max_bytes=did.MAX_DID_DOCUMENT_BYTES, accept="application/did+json, application/json")
    return lambda ref: did.assertion_keys(ref, trust, fetch, base_url)


def key_resolver(trust: Trust | None, allow_network: bool, base_url: str | None = None) -> KeyResolver:
    """Online when allowed, else the judge's offline resolver (one switch for every caller)."""
    return network_keys(trust, base_url) if allow_network else offline_keys(trust)
