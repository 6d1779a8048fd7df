"""Is the checkpoint a rebuild restores the newest the verifier published? Evidence that it is not.

A registry that serves the verifier's older, genuine checkpoint (its blobs are still there) made ``state rebuild``
restore fewer attempts than were logged, with no warning, and the rebuilt verifier then appended to a different
tree of the same size: a fork signed by itself, and cooldowns and counts gone back. Anything the verifier itself
signed that shows a longer log is evidence: a witness that has cosigned a bigger tree (asked with the tlog-witness
``add-checkpoint`` flow, which names the size it holds); the log repository's ``tiles-<size>`` tags of
publications past the served size; a log proof in an attestation whose checkpoint, signed by the verifier's key,
is bigger. (A status list copy newer than the log's last signature of it is not evidence: not every re-sign is
logged.) Evidence refuses the rebuild (exit 1) unless the operator accepts the older checkpoint; none, and no witness to
ask, leaves the freshness unproven, which the report says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from acx_oci.crypto import Identity
from acx_oci.errors import AcxError, LogInconsistent, VerificationError
from acx_oci.net import add_checkpoint
from acx_oci.services.verifier.log_tree import TransLog, Witness
from acx_oci.tlog import check_proof, ed25519_verifier, parse_proof


@dataclass
class Freshness:
    """What was found about the served checkpoint's size: evidence of a longer log, and what could not be asked."""

    size: int = 0
    evidence: list[str] = field(default_factory=list)
    unasked: list[tuple[str, str]] = field(default_factory=list)  # (witness, why it could not be asked)
    witnesses: int = 0

    def refuse_or_warn(self, accept_older: bool) -> list[str]:
        """The report's warnings; :class:`VerificationError` (exit 1) on evidence unless ``accept_older``."""
        if self.evidence and not accept_older:
            raise VerificationError(
                f"state rebuild: the log served has {self.size} entries, but the verifier published a longer one: "
                f"{'; '.join(self.evidence[:3])}{' …' if len(self.evidence) > 3 else ''}. Restoring it would lose "
                "attempts and fork the log; serve the newest checkpoint, or --accept-older-checkpoint")
        out = [f"accepted an older checkpoint (--accept-older-checkpoint): {e}" for e in self.evidence]
        out += [f"witness {w}: could not be asked ({why})" for w, why in self.unasked]
        if self.witnesses == 0 or len(self.unasked) == self.witnesses:
            out.append(f"the checkpoint's freshness (size {self.size}) is unproven: no witness was asked "
                       "(--witness URL=VKEY); only the registry's tags and the records found were checked")
        return out


def ask_witnesses(witnesses: Sequence[Witness], note: bytes, log: TransLog, fresh: Freshness) -> None:
    """Offer each witness the served checkpoint: one that has cosigned a bigger tree says so (a 409 naming its
    size); one that cannot be reached proves nothing either way."""
    fresh.witnesses = len(witnesses)
    for w in witnesses:
        try:
            add_checkpoint(w.url, note, w.cosigner, lambda old: log.tree.consistency(old, log.size), old=log.size)
        except LogInconsistent as exc:
            fresh.evidence.append(f"witness {w.url}: {exc}")
        except AcxError as exc:
            fresh.unasked.append((w.url, str(exc)[:160]))


def proof_size(raw: bytes, verifier: Identity, origin: str | None) -> int | None:
    """The log size a log-proof layer shows: its checkpoint's, when that checkpoint verifies with the verifier's
    key under the log's ``origin`` and the proof's entry is included in it (the path checked: an index alone is
    anyone's to write, and a forged one refused every honest rebuild); None otherwise."""
    try:
        proof = parse_proof(raw)
        if origin is not None and proof.origin != origin:
            return None
        cosigned = check_proof(proof, ed25519_verifier(proof.origin, verifier.public_bytes), [], 0)
    except AcxError:
        return None
    return cosigned.checkpoint.size


__all__ = ["Freshness", "ask_witnesses", "proof_size"]
