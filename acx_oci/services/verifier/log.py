"""The producer's side of the transparency log: what ``attest``, ``revoke`` and ``status-refresh`` append.

The log is configured per verifier state (``STATE_DIR/config.json``'s ``log``: repository, origin,
witnesses) or by flags, which override it. Order is the point: an attempt is appended after the
ledger counts it and before any byte goes to the publisher's registry, so a publisher that vetoes
the push cannot un-log the attempt; the log is published to *its own* repository (never the
publisher's cartridge repository, which the publisher controls), then the proof travels as a layer
of the attestation. A witness that refuses or cannot be reached does not stop the run: the
checkpoint carries the cosignatures obtained, the output names the witness, and each consumer's
quorum decides whether that is enough.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from acx_oci.crypto import Identity, canonical, sha256_digest
from acx_oci.errors import AcxError, RegistryError, UsageError
from acx_oci.files import read_bytes
from acx_oci.jsonio import parse_json, validate
from acx_oci.model import SEQUENCE, reason_pairs, rfc3339
from acx_oci.oci import Reference, StoreOptions, open_store, parse_reference
from acx_oci.services.artifacts import entry_bytes
from acx_oci.services.verifier.log_publish import LogPublication, publish
from acx_oci.services.verifier.log_tree import Appended, TransLog, Witness
from acx_oci.tlog import LogProof, cosigner_from_vkey, parse, parse_checkpoint_text, parse_proof

CONFIG_FILE = "config.json"
CONFIG_SCHEMA = "verifier-config.schema.json"
PROOF_FILE = "log-proof.json"


@dataclass(frozen=True)
class LogOptions:
    """Where the verifier's log is published, its origin (None: Sigsum's default) and the witnesses asked."""

    repository: str
    origin: str | None = None
    witnesses: tuple[Witness, ...] = ()
    store_options: StoreOptions = field(default_factory=StoreOptions)


def parse_witness(value: str, what: str = "--witness") -> Witness:
    """``URL=VKEY`` (the cosignature/v1 vkey inline, or a file holding it): the URL itself may hold no ``=``."""
    url, sep, vkey = value.partition("=")
    if not sep or not url.startswith(("http://", "https://")) or not vkey:
        raise UsageError(f"{what} {value[:120]!r}: expected URL=VKEY (the witness's tlog-witness URL prefix and "
                         "its cosignature/v1 key, name+hash+base64, or a file holding it)")
    if "+" not in vkey and Path(vkey).is_file():
        vkey = read_bytes(vkey, "witness key file", 4096).decode("utf-8", errors="replace").strip()
        vkey = vkey.splitlines()[0] if vkey else ""
    try:
        return Witness(url.rstrip("/"), cosigner_from_vkey(vkey))
    except AcxError as exc:
        raise UsageError(f"{what} {url}: {exc}") from None


def load_config(state_dir: Path) -> dict[str, Any]:
    """``STATE_DIR/config.json`` (schema-checked), or an empty config when there is none."""
    path = state_dir / CONFIG_FILE
    if not path.is_file():
        return {}
    doc = parse_json(read_bytes(path, "verifier state config", 1 << 20), str(path))
    validate(doc, CONFIG_SCHEMA, str(path))
    return dict(doc)


def log_options(state_dir: Path, repository: str | None, origin: str | None, witnesses: Sequence[str],
                store_options: StoreOptions) -> LogOptions | None:
    """The log to use: each flag given overrides the state config's field; None when neither names a log."""
    conf = load_config(state_dir).get("log") or {}
    repo = repository or conf.get("repository")
    if not repo:
        if origin or witnesses:
            raise UsageError("--log-origin and --witness need a log: --log REGISTRY/REPO (or oci:DIR), or "
                             f"'log.repository' in {state_dir / CONFIG_FILE}")
        return None
    ref = parse_reference(repo)
    if ref.tag or ref.digest:
        raise UsageError(f"--log {repo}: a repository (REGISTRY/REPO or oci:DIR), without a tag or digest")
    ws = [parse_witness(w) for w in witnesses] if witnesses else \
        [parse_witness(f"{w['url']}={w['key']}", f"{CONFIG_FILE} witness") for w in conf.get("witnesses", [])]
    return LogOptions(repo, origin or conf.get("origin"), tuple(ws), store_options)


def _place(ref: Reference) -> tuple[str, str]:
    if ref.kind == "oci":  # an image layout directory: the same directory however it is spelt
        return "oci", str(Path(ref.path).resolve())
    return ref.host.lower(), ref.repository


def refuse_same_repository(log: LogOptions, repository: str | Reference) -> None:
    """The log may not live in the publisher's repository (the publisher could rewrite or delete it)."""
    ref = repository if isinstance(repository, Reference) else parse_reference(repository)
    if _place(parse_reference(log.repository)) == _place(ref):
        raise UsageError(f"--log {log.repository} is the cartridge's repository, which its publisher controls: "
                         "the verifier's log needs a repository of its own")


@dataclass(frozen=True)
class Logged:
    """An append as the output reports it: the entry's proof, the log's size, who cosigned, who did not."""

    proof: LogProof | None
    size: int
    repository: str
    cosigned: tuple[str, ...]
    refused: tuple[str, ...]
    published: bool
    error: str | None = None  # the log's own registry failed: appended here, not yet served
    key: str = ""  # the log's note verifier key (name+hash+base64): what a trust file's log.key names

    def to_json(self) -> dict[str, Any]:
        """The ``log`` member of ``attest``/``revoke``/``status-refresh --json``."""
        return {"repository": self.repository, "index": self.proof.index if self.proof else None,
                "checkpointSize": self.size, "origin": self.proof.origin if self.proof else None,
                "key": self.key, "cosigned": list(self.cosigned), "refused": list(self.refused),
                "published": self.published,
                **({"error": self.error} if self.error else {})}


class VerifierLog:
    """One command's handle on the verifier's log: append (signed, witnessed), prove, publish to its repository."""

    def __init__(self, options: LogOptions, state_dir: Path, verifier: Identity) -> None:
        """Open ``STATE_DIR/log`` with the verifier's key (the note key) and the configured witnesses."""
        self.options = options
        self.log = TransLog(state_dir, verifier.private, origin=options.origin, witnesses=options.witnesses)
        self.served = 0  # the size this handle last published

    def append(self, entries: Sequence[dict[str, Any]]) -> tuple[Appended, LogProof]:
        """Append ``entries`` (one checkpoint, one round of witnesses); the proof is of the first entry."""
        appended = self.log.append(entries)
        size = parse_checkpoint_text(parse(appended.checkpoint).text).size
        index = appended.indices[0]
        entry = parse_json(entry_bytes(entries[0]), "log entry")  # as appended: with its schemaVersion
        proof = LogProof(self.log.origin, index, entry, tuple(self.log.tree.inclusion(index, size)),
                         appended.checkpoint)
        return appended, proof

    def publish(self) -> LogPublication:
        """Upload what the log's repository lacks and move its ``checkpoint`` tag; any failure is a RegistryError
        naming the log's repository (the publication failed; ``attest --publish`` retries it)."""
        try:
            with open_store(parse_reference(self.options.repository), self.options.store_options) as store:
                done = publish(self.log, store)
        except RegistryError as exc:
            raise RegistryError(f"the log's repository {self.options.repository}: {exc}") from None
        except AcxError as exc:  # another history in the repository, another origin: not a network failure,
            raise RegistryError(f"the log's repository {self.options.repository}: {exc}") from None  # but no push
        self.served = done.size
        return done

    def log_lists(self, signed_lists: Sequence[dict[str, Any]], now: datetime, issuer: str) -> Logged:
        """Append one ``status-list`` entry per re-signed list (one checkpoint) and publish the log."""
        appended, proof = self.append([status_entry(sl, now, issuer) for sl in signed_lists])
        return self.logged(appended, proof)

    def logged(self, appended: Appended, proof: LogProof | None, *, push: bool = True) -> Logged:
        """Publish (unless ``push`` is False) and say what happened; a failed publication is reported, not raised."""
        size = parse_checkpoint_text(parse(appended.checkpoint).text).size
        error = None
        if push:
            try:
                self.publish()
            except AcxError as exc:
                error = str(exc)
        return Logged(proof, size, self.options.repository, appended.cosigned, appended.refused,
                      push and error is None, error, self.log.verifier.vkey())


def attempt_entry(*, time: datetime, issuer: str, cartridge_id: str, rom_digest: str, benchmark_digest: str,
                  capability: str, issued: bool, reasons: Sequence[str], record: bytes,
                  mu: float | None = None, sigma: float | None = None, level: int | None = None,
                  publisher: str | None = None) -> dict[str, Any]:
    """An ``attempt`` entry; ``recordDigest`` is the sha256 of the credential's (or attempt record's) exact bytes.
    ``publisher`` (the did:key the ROM signature verified with, as the record's count says) keeps the
    publisher-scoped cooldown and count rebuildable after the publisher deletes its records."""
    from acx_oci import reasons as rc

    entry: dict[str, Any] = {
        "kind": "attempt", "time": rfc3339(time), "issuer": issuer, "cartridgeId": cartridge_id,
        "romDigest": rom_digest, "benchmarkDigest": benchmark_digest, "capability": capability,
        "verdict": "issued" if issued else "not-issued",
        "reasons": sorted({code for code, _ in reason_pairs(reasons, rc.ERROR)}),
        "recordDigest": sha256_digest(record)}
    if mu is not None:
        entry["mu"] = mu
    if sigma is not None:
        entry["sigma"] = sigma
    if level is not None:
        entry["level"] = level
    if publisher is not None:
        entry["publisher"] = publisher
    return entry


def status_entry(signed_list: dict[str, Any], time: datetime, issuer: str) -> dict[str, Any]:
    """A ``status-list`` entry: the list's URL, its ``acx:sequence``, the sha256 of its RFC 8785 form (the same
    for the file and the registry copy, whatever their whitespace)."""
    subject = signed_list.get("credentialSubject") or {}
    seq = subject.get(SEQUENCE, 0) if isinstance(subject, dict) else 0
    return {"kind": "status-list", "time": rfc3339(time), "issuer": issuer,
            "url": str(signed_list.get("id")), "sequence": seq if isinstance(seq, int) else 0,
            "digest": sha256_digest(canonical(signed_list))}


def write_proof(out_dir: Path, logged: Logged) -> None:
    """Keep the proof in the run's folder (``attest --publish`` pushes these very bytes again) and note the
    entry's place in ``result.json`` (written before the append)."""
    if logged.proof is None:
        return
    (out_dir / PROOF_FILE).write_bytes(logged.proof.to_bytes())
    result = out_dir / "result.json"
    if result.is_file():
        doc = parse_json(result.read_bytes(), f"run result ({result})")
        if isinstance(doc, dict):
            doc["log"] = {k: v for k, v in logged.to_json().items() if k != "published"}
            result.write_text(json.dumps(doc, indent=2) + "\n")


def read_proof(out_dir: Path, record: bytes) -> bytes | None:
    """The folder's proof bytes (None: the run was not logged); its entry must name ``record``'s digest."""
    path = out_dir / PROOF_FILE
    if not path.is_file():
        return None
    raw = read_bytes(path, "log proof", 1 << 20)
    proof = parse_proof(raw, str(path))
    if proof.entry.get("recordDigest") != sha256_digest(record):
        raise UsageError(f"attest --publish: {path} is the proof of another record, not of this folder's")
    return raw
