"""One credential through the judge: the one place a level credential is accepted.

``resolve`` judges every attestation of a cartridge with :func:`~acx_oci.evaluation.judge.judge_credentials`;
the gateway's push check, ``vc verify`` and the demo hand the same judge a one-attestation input here, so
a condition gets one reason code wherever it is met (a capability the cartridge does not claim, a flood of
containers, a missing game record, a credential its verifier's log lacks, a rolled-back status list).
sigstore-python has one verifier every caller uses; this is that verifier. Like the judge it asks rather than
calls out: :func:`accepting` yields a replay or a did:web document it needs and the caller answers
(:func:`acx_oci.services.consumer.answers.answer_needs`); :func:`accept_credential` asks nothing.
"""

from __future__ import annotations

from collections.abc import Generator, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from acx_oci import reasons
from acx_oci.evaluation.checks import Check, VerifyResult, bad
from acx_oci.evaluation.judge import judging
from acx_oci.evaluation.judge_input import (
    Answer,
    CartridgeFacts,
    Expected,
    FetchedAttestation,
    Judgement,
    Material,
    Need,
    settled,
)
from acx_oci.evaluation.log_check import LogView
from acx_oci.model import AcceptedCredential, Rejection
from acx_oci.trust import Trust


@dataclass(frozen=True)
class Acceptance:
    """The judge's verdict on one credential: accepted, or rejected with every reason (and every rule's check)."""

    accepted: AcceptedCredential | None
    rejection: Rejection | None
    checks: tuple[Check, ...]  # every rule's check, then one per reason found beside the rules
    judgement: Judgement

    @property
    def verified(self) -> bool:
        """Accepted by every rule (and the caller's replay, when it gave one)."""
        return self.accepted is not None

    @property
    def codes(self) -> tuple[str, ...]:
        """The reason codes, each once, in the order found (empty when accepted)."""
        return self.rejection.codes if self.rejection is not None else ()

    def problems(self) -> list[tuple[str, str]]:
        """(code, sentence) per failed check, as the gateway reports a refused push."""
        return [(c.code, c.message) for c in self.checks if not c.ok]

    def result(self) -> VerifyResult:
        """As ``vc verify`` renders it: every check, failed ones with their codes."""
        return VerifyResult(list(self.checks))


def one_attestation(item: FetchedAttestation, status_copies: tuple[dict[str, Any], ...] = (), min_sequence: int = 0,
                    kept: dict[str, Any] | None = None, logs: Mapping[str, LogView] | None = None) -> Material:
    """The judge's input for one credential: the copies of its status list found, the sequence this consumer
    remembers for that list (and the list it kept), and the logs fetched (None: the log rule is off)."""
    cred = item.credential
    url, issuer = (cred.view.status_url, cred.issuer) if cred is not None else (None, None)
    key = (url, issuer) if url and issuer else None
    return Material((item,), {url: status_copies} if url else {}, {key: min_sequence} if key else {},
                    {key: kept} if key and kept is not None else {}, logs)


def accept_credential(material: Material, expected: Expected | CartridgeFacts, trust: Trust, now: datetime, *,
                      allow_unknown_status: bool = False) -> Acceptance:
    """:func:`accepting` with nothing to ask (no replay; did:web only from the trust file)."""
    return settled(accepting(material, expected, trust, now, allow_unknown_status=allow_unknown_status))


def accepting(material: Material, expected: Expected | CartridgeFacts, trust: Trust, now: datetime, *,
              allow_unknown_status: bool = False, replay: bool = False,
              ask_dids: bool = False) -> Generator[Need, Answer, Acceptance]:
    """Judge the one attestation in ``material`` exactly as ``resolve`` judges each of a cartridge's, asking
    for its replay (``replay``) and for did:web documents beyond the trust file (``ask_dids``)."""
    if len(material.attestations) != 1:
        raise ValueError(f"accept_credential judges one attestation, given {len(material.attestations)}")
    item = material.attestations[0]
    issuer = item.credential.issuer if item.credential is not None else None
    judgement = yield from judging(material, expected, trust, now, allow_unknown_status=allow_unknown_status,
                                   replay=replay, ask_dids=ask_dids)
    accepted = next((a for group in judgement.accepted.values() for a in group), None)
    rejection = next((r for group in (*judgement.rejected.values(), judgement.unmatched) for r in group), None)
    if accepted is None and rejection is None:  # the caller's replay could not decide (its deadline passed)
        rejection = Rejection(item.digest, (reasons.DEADLINE_EXCEEDED,),
                              ("the game records could not be replayed in time: not decided",),
                              item.credential_digest, issuer)
    checks = list(judgement.checks.get(item.digest, ()))
    seen = {c.code for c in checks if not c.ok}
    unseen = [c for c in (rejection.codes if rejection else ()) if c not in seen]
    if unseen:  # decided beside the rules (not claimed, superseded, replay) or before them (unreadable bytes)
        messages = rejection.messages if rejection else ()
        paired = len(messages) == len(rejection.codes) if rejection else False
        for code in unseen:
            i = rejection.codes.index(code) if rejection else 0
            checks.append(bad(code, code, messages[i] if paired else "; ".join(messages) or code))
    return Acceptance(accepted, rejection, tuple(checks), judgement)
