"""did:web documents over HTTPS: the caller's answer when the judge asks for one (the I/O kept out of evaluation).

The judge (:mod:`acx_oci.evaluation.judge`) resolves keys offline (trust file, did:key) and yields
:class:`~acx_oci.evaluation.judge.NeedDidDocument` for a did:web beyond the trust file; a :class:`DidFetcher`
answers it, once per DID (memoised), and resolves the same documents for the caller's own key needs (replay's
issuer keys, attempt records).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from acx_oci.errors import AcxError, DidError
from acx_oci.evaluation import DidDocuments
from acx_oci.net import https
from acx_oci.trust import Trust, did


class DidFetcher:
    """Fetches did:web documents not in ``trust`` over HTTPS (``base_url``: serve them locally), each DID once."""

    def __init__(self, trust: Trust | None, base_url: str | None = None) -> None:
        self.trust, self.base_url = trust, base_url
        self._fetch = https.fetcher(max_bytes=did.MAX_DID_DOCUMENT_BYTES,
                                    accept="application/did+json, application/json")
        self._answers: dict[str, dict[str, Any] | AcxError] = {}

    def document(self, did_value: str) -> dict[str, Any] | AcxError:
        """The DID document of ``did_value`` (a did:web), or the error saying why there is none."""
        if did_value not in self._answers:
            try:
                self._answers[did_value] = did.fetch_did_web(did_value, self._fetch, self.base_url)
            except DidError as exc:
                self._answers[did_value] = exc
        return self._answers[did_value]

    def keys(self, ref: str) -> list[tuple[str, bytes]]:
        """Assertion keys of a DID or DID URL: offline first, fetching a did:web the trust file lacks."""
        documents = DidDocuments(self.trust)
        base, _ = did.split_did_url(ref)
        if base.startswith("did:web:") and documents.did_document_for(base) is None:
            documents.answer(base, self.document(base))
        return documents.keys(ref)

    def documents(self, dids: Iterable[str]) -> DidDocuments:
        """The documents of ``dids`` fetched beforehand (those the trust file lacks), for a pure step to use."""
        documents = DidDocuments(self.trust)
        for did_value in sorted(set(dids)):
            if did_value.startswith("did:web:") and documents.did_document_for(did_value) is None:
                documents.answer(did_value, self.document(did_value))
        return documents
