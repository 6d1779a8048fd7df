"""Exam certification travels with the benchmark: a signed Referrer of the benchmark manifest.

``benchmark push`` checks a suite in exam form against the sealed certification records (each record's
digest, ``certified``, and its freeze hash recomputed from the suite now: an exam that changed since it was
certified counts as uncertified) and refuses any uncertified exam unless ``--allow-uncertified``. The
certifier signs the summary — every exam's record digest, freeze hash and verdict — as a DSSE envelope over
an in-toto Statement whose subject is the benchmark manifest, pushed as a referrer
(``artifactType: application/vnd.acx.exam-certification.v1``) with the records as layers.

``attest`` reads that referrer before running, verifies it (signature by the certifier DID it names, subject =
the benchmark manifest, every exam of the suite certified) and names it in the credential
(``acx:examCertificationDigest``, ``acx:examCertifier``); consumers may require certifiers per benchmark.
Anyone who can push to the repository can add a referrer, so only certifications by a certifier the reader
trusts count (the verifier's own key and ``attest --certifier``; ``exam verify``: the trust file's
``certifiedBy``), never simply the first one listed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acx_oci.crypto import (
    PAYLOAD_TYPE_INTOTO,
    Identity,
    canonical,
    envelope_payload,
    sha256_digest,
    sign_envelope,
    statement,
    statement_bytes,
    subject_for_digest,
    verify_envelope,
)
from acx_oci.errors import AcxError, UsageError, VerificationError
from acx_oci.jsonio import as_array, as_object, parse_json
from acx_oci.model import CertificationRecord, classification_of, summarize
from acx_oci.model import exam as exam_model
from acx_oci.oci import (
    ANNOTATION_TITLE,
    EMPTY_JSON,
    MEDIA_DSSE,
    MEDIA_EMPTY,
    MEDIA_MANIFEST,
    Descriptor,
    Store,
    build_manifest,
    referrer_tag,
)
from acx_oci.services.exams import load_records, suite_freeze_hashes
from acx_oci.trust import Trust, assertion_keys
from acx_oci.urls import without_fragment

ARTIFACT_EXAM_CERTIFICATION = "application/vnd.acx.exam-certification.v1"
PREDICATE_EXAM_CERTIFICATION = "https://acx.dev/attestation/exam-certification/v1"
MEDIA_RECORD = "application/vnd.acx.exam-certification-record.v1+json"
MAX_CERTIFICATION_BYTES = 4 * 1024 * 1024
MAX_CERTIFICATIONS = 16  # referrers fetched and verified at most (those naming an untrusted certifier: none)
ANN_CERTIFIER = "dev.acx.exam-certification.certifier"  # a hint only: the signature decides


@dataclass(frozen=True)
class SuiteCheck:
    """Which exams of a suite are certified now; ``exam_form`` False for suites not in exam form."""

    exam_form: bool
    records: dict[str, CertificationRecord]
    problems: list[str]

    @property
    def certified(self) -> bool:
        """Certified only in exam form with no problem: a suite not in exam form is never certified."""
        return self.exam_form and not self.problems


#: The problem of an exam never certified (``benchmark push`` lists those exams together).
NO_RECORD = "no certification record (run: acx-oci exam certify)"


def check_suite(directory: Path, records_dir: Path) -> SuiteCheck:
    """Every exam of the suite has a sealed record that is certified and whose freeze hash still matches."""
    if not ((directory / "exam.yaml").is_file() or any((directory / "tasks").glob("*/exam.yaml"))):
        return SuiteCheck(False, {}, [])
    hashes = suite_freeze_hashes(directory)
    try:
        records = load_records(records_dir) if records_dir.is_dir() else {}
    except AcxError as exc:
        return SuiteCheck(True, {}, [f"certification records in {records_dir}: {exc}"])
    problems: list[str] = []
    chosen: dict[str, CertificationRecord] = {}
    for exam_id, freeze in sorted(hashes.items()):
        rec = records.get(exam_id)
        if rec is None:
            problems.append(f"exam {exam_id}: {NO_RECORD}")
            continue
        if rec.freeze_hash != freeze:
            problems.append(f"exam {exam_id}: its files changed since it was certified (freeze hash differs)")
            continue
        if not rec.certified:
            failed = ", ".join(f"{stage}.{fact}" for stage, fact in rec.failures()) or "not certified"
            problems.append(f"exam {exam_id}: not certified ({failed})")
            continue
        chosen[exam_id] = rec
    return SuiteCheck(True, chosen, problems)


def relaxations_of(record: Mapping[str, Any]) -> list[str]:
    """The relaxations an exam certified under, as its stages name them (``relaxations``, e.g. the grader
    stage's ``controlsNotDistinguished``): the certification and credentials carry them, a consumer may refuse."""
    stages = record.get("stages")
    return sorted({str(r) for s in (stages.values() if isinstance(stages, dict) else ()) if isinstance(s, dict)
                   for r in s.get("relaxations") or ()})


def summary_predicate(bench_id: str, version: str, benchmark_digest: str, certifier: str,
                      records: dict[str, dict[str, Any]]) -> dict[str, Any]:
    """The certification predicate: per exam its record digest and freeze hash, so later edits show, and
    whether the evaluation ran through the ROM solver (``evaluated``; a first-shape record never did)."""
    exams = {eid: {"recordDigest": rec["digest"], "freezeHash": rec["stages"]["freeze"]["freezeHash"],
                   "certified": bool(rec.get("certified")), "impossible": bool(rec.get("impossible")),
                   "promoted": bool(rec["stages"].get("promotion", {}).get("ok")),
                   "imported": bool(rec["stages"]["freeze"].get("parentCommit")),
                   "evaluated": bool(rec["stages"].get("eval", {}).get("ok")), "allOk": bool(rec.get("allOk")),
                   "classification": classification_of(rec),
                   "relaxations": relaxations_of(rec)}
             for eid, rec in sorted(records.items())}
    return {"certifier": certifier, "benchmark": {"id": bench_id, "version": version,
                                                  "benchmarkDigest": benchmark_digest},
            "exams": exams, "summary": summarize(records)}


def push_certification(store: Store, bench_manifest: Descriptor, predicate: dict[str, Any],
                       records: dict[str, dict[str, Any]], certifier: Identity) -> Descriptor:
    """Sign the summary (subject: the benchmark manifest) and push it, with the records, as a referrer."""
    st = statement([subject_for_digest("benchmark", bench_manifest.digest)], PREDICATE_EXAM_CERTIFICATION,
                   predicate)
    envelope = canonical(sign_envelope(statement_bytes(st), PAYLOAD_TYPE_INTOTO, certifier))
    store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    layers = [store.push_blob(envelope, MEDIA_DSSE, {ANNOTATION_TITLE: "certification.dsse.json"})]
    for eid, rec in sorted(records.items()):
        layers.append(store.push_blob(canonical(rec), MEDIA_RECORD, {ANNOTATION_TITLE: f"{eid}.record.json"}))
    subject = Descriptor(MEDIA_MANIFEST, bench_manifest.digest, bench_manifest.size)
    raw = build_manifest(ARTIFACT_EXAM_CERTIFICATION, layers, subject=subject,
                         annotations={ANN_CERTIFIER: certifier.did,
                                      "dev.acx.exam-certification.exams": str(len(records))})
    return store.push_referrer(raw, bench_manifest.digest, referrer_tag(sha256_digest(raw), bench_manifest.digest))


@dataclass(frozen=True)
class Certification:
    """A verified certification referrer: who certified, which exams, and the manifest digest that names it."""

    digest: str
    certifier: str
    predicate: dict[str, Any]


def verify_envelope_for(envelope_bytes: bytes, bench_manifest_digest: str, benchmark_digest: str,
                        trust: Trust | None = None) -> tuple[str, dict[str, Any]]:
    """Check a certification envelope: signed by the certifier it names, about this benchmark manifest."""
    env = parse_json(envelope_bytes, "exam certification")
    _, payload = envelope_payload(env)
    st = parse_json(payload, "exam certification statement")
    if not isinstance(st, dict) or st.get("predicateType") != PREDICATE_EXAM_CERTIFICATION:
        raise VerificationError("exam certification: not an exam-certification statement")
    subjects = {"sha256:" + str(as_object(s.get("digest")).get("sha256")) for s in as_array(st.get("subject"))
                if isinstance(s, dict)}
    pred = st.get("predicate") if isinstance(st.get("predicate"), dict) else {}
    assert isinstance(pred, dict)
    if bench_manifest_digest not in subjects:
        raise VerificationError("exam certification: it certifies another benchmark manifest")
    if as_object(pred.get("benchmark")).get("benchmarkDigest") != benchmark_digest:
        raise VerificationError("exam certification: its benchmarkDigest is not this benchmark's")
    certifier = pred.get("certifier")
    if not isinstance(certifier, str):
        raise VerificationError("exam certification: names no certifier")
    keys = [k for _, k in assertion_keys(certifier, trust)]
    verify_envelope(env, keys)
    return certifier, pred


def find_certification(store: Store, bench_manifest_digest: str, benchmark_digest: str,
                       held_out_ids: list[str] | None = None, trust: Trust | None = None,
                       certifiers: Sequence[str] | None = None) -> tuple[Certification | None, list[str]]:
    """The certification to believe: among referrers that verify and cover every exam (``held_out_ids``),
    only those signed by one of ``certifiers`` (None: anyone), the first certifier in that order winning and
    then the smallest digest, so the registry's listing order never decides and a certification by anyone
    else (a self-made did:key pushed first) can neither shadow nor replace a trusted one."""
    problems: list[str] = []
    wanted = None if certifiers is None else [without_fragment(c) for c in certifiers]
    listing = store.referrers(bench_manifest_digest, ARTIFACT_EXAM_CERTIFICATION)
    found: list[Certification] = []
    tried = 0
    for desc in sorted(listing.descriptors, key=lambda d: d.digest):
        named = desc.annotations.get(ANN_CERTIFIER)
        if wanted is not None and named is not None and without_fragment(named) not in wanted:
            problems.append(f"{desc.digest}: certified by {named}, not a certifier trusted here")
            continue  # skipped unfetched: untrusted referrers never use up the bound below
        if tried >= MAX_CERTIFICATIONS:
            problems.append(f"{desc.digest}: not checked (more than {MAX_CERTIFICATIONS} candidates)")
            continue
        tried += 1
        try:
            cert = _verified(store, desc, bench_manifest_digest, benchmark_digest, held_out_ids, trust)
        except AcxError as exc:
            problems.append(f"{desc.digest}: {exc}")
            continue
        if wanted is not None and without_fragment(cert.certifier) not in wanted:
            problems.append(f"{desc.digest}: certified by {cert.certifier}, not a certifier trusted here")
            continue
        found.append(cert)
    if not found:
        return None, problems
    order = wanted or []
    return min(found, key=lambda c: (order.index(without_fragment(c.certifier)) if order else 0, c.digest)), problems


def _verified(store: Store, desc: Descriptor, bench_manifest_digest: str, benchmark_digest: str,
              held_out_ids: list[str] | None, trust: Trust | None) -> Certification:
    """One referrer checked: one DSSE layer, signed by the certifier it names, every held-out exam certified."""
    manifest = store.fetch_manifest(desc.digest)
    dsse = [layer for layer in manifest.layers if layer.media_type == MEDIA_DSSE]
    if len(dsse) != 1:
        raise UsageError("expected one DSSE layer")
    envelope = store.fetch_blob(dsse[0].digest, MAX_CERTIFICATION_BYTES, size=dsse[0].size)
    certifier, pred = verify_envelope_for(envelope, bench_manifest_digest, benchmark_digest, trust)
    exams = as_object(pred.get("exams"))
    missing = [i for i in held_out_ids or [] if not as_object(exams.get(i)).get("certified")]
    if missing:
        raise VerificationError(f"exam(s) not certified: {', '.join(sorted(missing)[:5])}")
    return Certification(desc.digest, certifier, pred)


def classification_claim(predicate: dict[str, Any], exam_keys: list[str]) -> str:
    """``acx:examClassification``: ``stated`` when the certification says every one of these exams carries a
    classification its author stated, else ``not stated`` (a certification from before it said so, too)."""
    exams = as_object(predicate.get("exams"))
    stated = bool(exam_keys) and all(isinstance(as_object(exams.get(k)).get("classification"), dict)
                                     for k in exam_keys)
    return "stated" if stated else exam_model.NOT_STATED


def relaxations_claim(predicate: dict[str, Any], exam_keys: list[str]) -> list[str]:
    """``acx:examRelaxations``: every relaxation these exams were certified under (none named: none)."""
    exams = as_object(predicate.get("exams"))
    return sorted({str(r) for k in exam_keys for r in as_array(as_object(exams.get(k)).get("relaxations") or [])})


def promotion_claim(predicate: dict[str, Any], exam_keys: list[str]) -> dict[str, int]:
    """``acx:examPromotion``: how many of these exams were promoted (graded in a pinned image), and of the
    imported ones (from a repository's history: they always have an image) how many were not."""
    exams = [as_object(as_object(predicate.get("exams")).get(k)) for k in exam_keys]
    imported = [e for e in exams if e.get("imported") is True]
    return {"exams": len(exams), "promoted": sum(e.get("promoted") is True for e in exams),
            "imported": len(imported), "importedUnpromoted": sum(e.get("promoted") is not True for e in imported)}


def render(cert: Certification) -> str:
    """The certification as JSON for people, its digest and certifier first."""
    return json.dumps({"digest": cert.digest, "certifier": cert.certifier, **cert.predicate}, indent=2)
