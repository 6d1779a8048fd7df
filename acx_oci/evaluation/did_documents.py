"""The DID documents one judgement resolves keys from, and the did:web ones it must ask the caller for (pure).

The judge does no I/O: did:key is derived from the DID itself, did:web comes from the trust file or from a
document the caller fetched because the judge asked (:class:`~acx_oci.evaluation.judge.NeedDidDocument`).
Resolving a did:web it has no document for fails as offline resolution fails, and the DID is noted as
``missing``: the judge asks for it and verifies again (python-tuf's shape: say what is needed, let the caller
fetch). Each DID is asked for at most once per judgement, and at most :data:`MAX_DID_DOCUMENTS` in all, so a
credential naming a thousand did:web methods costs a bounded number of fetches and rounds.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acx_oci.errors import AcxError, DidError
from acx_oci.trust import Trust, did

MAX_DID_DOCUMENTS = 32  # did:web documents one judgement may ask for (an honest one needs a verifier or two)
MAX_DID_ROUNDS = 3  # verifications of one credential: verify, ask for what was missing, verify again (+1 spare)

DidAnswer = dict[str, Any] | AcxError | None  # the caller's answer: the document, or why it could not be had


@dataclass
class DidDocuments:
    """The documents a judgement may use (a :class:`~acx_oci.trust.did.DocumentSource`): the trust file's, then
    the caller's answers; ``failed`` says why a DID had none, ``missing`` which did:web were wanted and unknown."""

    trust: Trust | None
    ask: bool = False  # may the judge ask the caller for did:web documents? (else they fail as offline)
    asked: int = 0  # documents asked for so far in this judgement (at most MAX_DID_DOCUMENTS)
    fetched: dict[str, dict[str, Any]] = field(default_factory=dict)
    failed: dict[str, str] = field(default_factory=dict)
    missing: set[str] = field(default_factory=set)

    def did_document_for(self, did_value: str) -> dict[str, Any] | None:
        """The trust file's document for ``did_value``, else the one the caller fetched, else None."""
        doc = self.trust.did_document_for(did_value) if self.trust is not None else None
        return doc if doc is not None else self.fetched.get(did_value)

    def keys(self, ref: str) -> list[tuple[str, bytes]]:
        """Assertion keys of a DID or DID URL, with no I/O (a :data:`~acx_oci.evaluation.checks.KeyResolver`)."""
        base, _ = did.split_did_url(ref)
        if base in self.failed:
            raise DidError(self.failed[base])
        if base.startswith("did:web:") and self.did_document_for(base) is None:
            self.missing.add(base)
        return did.assertion_keys(ref, self)

    def answer(self, did_value: str, answer: DidAnswer) -> None:
        """Take the caller's answer for ``did_value``: a document must describe exactly that DID."""
        self.missing.discard(did_value)
        if isinstance(answer, dict):
            try:
                self.fetched[did_value] = did.check_did_document(answer, did_value)
            except DidError as exc:
                self.failed[did_value] = str(exc)
            return
        self.failed[did_value] = str(answer) if answer is not None else (
            f"did:web {did_value}: no DID document (the caller could not fetch it)")

    def to_ask(self) -> tuple[list[str], bool]:
        """The did:web documents the last verification lacked that may be asked for now, and whether any was
        refused for the bound (the credential is then verified again, so its check says why)."""
        missing, self.missing = sorted(self.missing), set()
        if not self.ask:
            return [], False
        room = max(0, MAX_DID_DOCUMENTS - self.asked)
        for did_value in missing[room:]:
            self.failed[did_value] = (f"did:web {did_value}: not fetched: this judgement already asked for "
                                      f"{MAX_DID_DOCUMENTS} DID documents (the bound)")
        self.asked += len(missing[:room])
        return missing[:room], len(missing) > room
