"""``vc sign|verify`` and ``status-list create|revoke|check``: parse, call, render."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import click

from acx_oci.cli.common import emit_json, json_option
from acx_oci.cli.main import main
from acx_oci.cli.referrers_cmd import no_log_option, status_cache_option
from acx_oci.crypto import Identity, check_digest, sha256_digest
from acx_oci.errors import RegistryError, UsageError, VerificationError
from acx_oci.evaluation import (
    LOG_CHECK,
    Expected,
    VerifyResult,
    accepting,
    base,
    ok,
    one_attestation,
    pinned_keys,
    proof_only,
    skip,
)
from acx_oci.files import load_json_file, read_bytes
from acx_oci.model import LevelCredential, LevelView, parse_capability, statuslist
from acx_oci.services.artifacts import fetch_status_list_https
from acx_oci.services.consumer import (
    DidFetcher,
    LogHistory,
    StatusHistory,
    answer_needs,
    credential_file,
    gather_logs,
    remember_logs,
)
from acx_oci.timeutil import parse_datetime
from acx_oci.trust import Trust, check_did, controller_of, load_identity, load_trust
from acx_oci.urls import without_fragment


def _now(value: str | None) -> datetime:
    if value is None:
        return datetime.now(UTC).replace(microsecond=0)
    parsed = parse_datetime(value)
    if parsed is None:
        raise UsageError(f"--now: expected an RFC 3339 date-time like 2026-07-01T00:00:00Z, found {value!r}")
    return parsed


def _json_object(path: Path, what: str) -> dict[str, Any]:
    doc = load_json_file(path, what)
    if not isinstance(doc, dict):
        raise UsageError(f"{what} ({path}): expected a JSON object")
    return doc


def _write_json(path: Path, doc: dict[str, Any]) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", "utf-8")
    tmp.replace(path)


@main.group()
def vc() -> None:
    """Sign and verify W3C Verifiable Credentials (Data Integrity eddsa-jcs-2022)."""


@vc.command("sign")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--key", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Signing key (PREFIX.key PEM or a Multikey key-pair JSON).")
@click.option("--verification-method", "method", metavar="DIDURL",
              help="Verification method id (default: the key's own, e.g. did:key:z6Mk...#z6Mk...).")
@click.option("--created", metavar="RFC3339", help="Proof creation time (default: now).")
@click.option("--proof-array", is_flag=True, help="Write `proof` as an array even for one proof (OB 3.0 form).")
def vc_sign(file: Path, key: Path, method: str | None, created: str | None, proof_array: bool) -> None:
    """Add an eddsa-jcs-2022 proof to the JSON document FILE; print the secured document.

    \b
    Example:
      acx-oci vc sign unsigned.json --key keys/verifier.key > signed.json
    """
    from acx_oci.crypto import sign

    doc = _json_object(file, "document")
    ident = load_identity(key)
    when = created or _now(None).strftime("%Y-%m-%dT%H:%M:%SZ")
    secured = sign(doc, ident, _method_for(ident, method), when, as_array=proof_array)
    click.echo(json.dumps(secured, indent=2, ensure_ascii=False))


def _render(result: VerifyResult, as_json: bool, mode: str) -> None:
    if as_json:
        emit_json({**result.to_json(), "mode": mode, "skipped": result.skipped})
        return
    for c in result.checks:
        if c.skipped and mode == "proof-only":
            continue
        tag = "skip" if c.skipped else ("ok  " if c.ok else "FAIL")
        code = "" if c.ok else f" [{c.code}]"
        click.echo(f"{tag} {c.name:<20}{code} {c.message}")
    if result.skipped:
        click.echo(f"skipped (not checked): {', '.join(result.skipped)}")
    if result.verified:
        click.echo("VERIFIED" + (" (proof only)" if mode == "proof-only" else ""))
    else:
        click.echo(f"REJECTED: {', '.join(dict.fromkeys(result.codes))}")


def _fetch_status_list(url: str) -> dict[str, Any] | None:
    """HTTPS fetch of a status list credential (only with --allow-network); None when unreachable (fails closed)."""
    try:
        return fetch_status_list_https(url)
    except RegistryError:
        return None


def _status_copies(credential: LevelView, status_file: Path | None, allow_network: bool) -> tuple[dict[str, Any], ...]:
    """The copies of the credential's status list this run has: ``--status-list``, then HTTPS when allowed."""
    found = [_json_object(status_file, "status list")] if status_file else []
    if not found and allow_network and credential.status_url is not None:
        remote = _fetch_status_list(credential.status_url)
        found += [remote] if remote is not None else []
    return tuple(found)


def _judge_file(raw: bytes, expected: Expected, trust: Trust, now: datetime, *, status: tuple[dict[str, Any], ...],
                evidence: dict[str, bytes] | None, proof: bytes | None, allow_unknown_status: bool,
                dids: DidFetcher | None, no_log: bool, status_cache_dir: Path | None) -> VerifyResult:
    """The credential file through the judge, as resolve judges an attestation carrying ``evidence``.

    The status list is judged against what this consumer remembers of it (a lower sequence is a rollback);
    a credential of a verifier whose log the trust file pins must be in that log (unless ``--no-log``).
    """
    item = credential_file(raw, evidence, proof)
    view = item.credential.view if item.credential is not None else LevelView.of(None)
    history = StatusHistory(status_cache_dir)
    url, issuer = view.status_url, view.issuer
    floor = history.highest(url, issuer) if url and issuer else 0
    kept = history.newest(url, issuer) if url and issuer else None
    pinned = trust.log_for(issuer or "") is not None
    material = one_attestation(item, status, floor, kept, None if no_log else {})
    logs = None
    if pinned and not no_log:
        material = replace(material, log_keys=pinned_keys(trust))
        logs = gather_logs(material, trust, LogHistory(history.directory))
        material = replace(material, logs=logs.views)
    # the judge asks for a did:web document beyond the trust file (with --allow-network we fetch it)
    verdict = answer_needs(accepting(material, expected, trust, now, allow_unknown_status=allow_unknown_status,
                                     ask_dids=dids is not None), dids=dids)
    if logs is not None:
        remember_logs(LogHistory(history.directory), logs, now)
    checks = list(verdict.checks)
    if pinned and no_log:
        checks.append(skip("transparency_log", "--no-log: not checked against the issuer's transparency log (weaker)"))
    elif pinned and not any(c.name == LOG_CHECK for c in checks):
        checks.append(ok("transparency_log", "the credential is in its issuer's log, consistent with what this "
                                             "consumer saw"))
    return VerifyResult(checks)


@vc.command("verify")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--trust", "trust_file", type=click.Path(dir_okay=False, path_type=Path),
              help="Trust file; without it only the proof is checked (did:key methods).")
@click.option("--rom-digest", metavar="DIGEST", help="Expected cartridge ROM digest.")
@click.option("--manifest-digest", metavar="DIGEST", help="Expected cartridge manifest digest (the referrer subject).")
@click.option("--controller", metavar="DID", help="The cartridge's controller DID (self-issuance check).")
@click.option("--rom-signer", metavar="DID", help="The DID that signed the ROM (self-issuance check).")
@click.option("--capability", "capabilities", multiple=True, metavar="CAP",
              help="A capability the cartridge claims (display form); repeatable. A credential for another is "
                   "capability_not_claimed, as resolve says.")
@click.option("--status-list", "status_file", type=click.Path(dir_okay=False, path_type=Path),
              help="The signed BitstringStatusListCredential the credential points to.")
@click.option("--allow-unknown-status", is_flag=True, help="Accept when no status list can be found.")
@click.option("--evidence", "evidence_files", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="A game-record envelope file referenced by the credential; repeatable.")
@click.option("--allow-network", is_flag=True,
              help="Resolve did:web and fetch the status list over HTTPS when the trust file lacks them.")
@click.option("--did-web-base-url", metavar="URL", help="Serve did:web documents from this base URL (tests).")
@click.option("--log-proof", "log_proof_file", type=click.Path(dir_okay=False, path_type=Path),
              help="The credential's log proof (the attestation's application/vnd.acx.log-proof.v1+json layer); "
                   "needed when the trust file pins the issuer's transparency log.")
@no_log_option
@status_cache_option
@click.option("--now", "now_value", metavar="RFC3339", hidden=True, help="Evaluate validity at this time.")
@json_option
def vc_verify(file: Path, trust_file: Path | None, rom_digest: str | None, manifest_digest: str | None,
              controller: str | None, rom_signer: str | None, capabilities: tuple[str, ...], status_file: Path | None,
              allow_unknown_status: bool, evidence_files: tuple[Path, ...], allow_network: bool,
              did_web_base_url: str | None, log_proof_file: Path | None, no_log: bool,
              status_cache_dir: Path | None, now_value: str | None, as_json: bool) -> None:
    """Verify a credential. Exit 0 verified, 1 rejected, 2 bad input.

    With --trust every level rule runs (proof, issuer, self-issuance, gates,
    bindings, benchmark, validity, revocation, evidence) and all failures are
    reported; without it only the Data Integrity proof is checked.

    \b
    Example:
      acx-oci vc verify credential.json
      acx-oci vc verify credential.json --trust trust.yaml --rom-digest sha256:<hex> --status-list list.json --json
    """
    credential = LevelCredential.document(_json_object(file, "credential"))  # the door: a file
    for value, what in ((rom_digest, "--rom-digest"), (manifest_digest, "--manifest-digest")):
        if value is not None:
            check_digest(value, what)
    claims = tuple(parse_capability(c) for c in capabilities) or None
    trust = load_trust(trust_file) if trust_file else None
    now = _now(now_value)
    dids = DidFetcher(trust, did_web_base_url) if allow_network else None
    if trust is None:  # the proof's did:web documents fetched beforehand (with --allow-network): a pure check
        methods = [p.get("verificationMethod") for p in credential.proofs if isinstance(p, dict)]
        documents = dids.documents(b for b in map(base, methods) if b) if dids is not None else None
        result, mode = proof_only(credential, now, documents.keys if documents else None), "proof-only"
    else:
        evidence = {sha256_digest(b): b for b in (read_bytes(p, "evidence") for p in evidence_files)} or None
        proof = read_bytes(log_proof_file, "log proof") if log_proof_file is not None else None
        status = _status_copies(credential.view, status_file, allow_network)
        result = _judge_file(read_bytes(file, "credential"), Expected(manifest_digest, rom_digest, controller,
                                                                      rom_signer, None, claims),
                             trust, now, status=status, evidence=evidence, proof=proof,
                             allow_unknown_status=allow_unknown_status, dids=dids,
                             no_log=no_log, status_cache_dir=status_cache_dir)
        mode = "level"
    _render(result, as_json, mode)
    if not result.verified:
        raise SystemExit(VerificationError.exit_code)


@main.group("status-list")
def status_list_group() -> None:
    """Bitstring Status Lists: create, revoke an index, check an index."""


def _method_for(ident: Identity, method: str | None) -> str:
    """The verification method to sign as: well-formed, and for a did:key, this key's own."""
    if method is None:
        return ident.verification_method
    base = without_fragment(method)
    check_did(base, "--verification-method")
    if "#" not in method:
        raise UsageError(f"--verification-method: expected a DID URL with a #fragment, found {method!r}")
    if base.startswith("did:key:") and base != ident.did_key:
        raise UsageError(f"--verification-method {method} is not this key's (the key is {ident.did_key})")
    return method


def _signer(key: Path, method: str | None) -> tuple[Any, str]:
    ident = load_identity(key)
    return ident, _method_for(ident, method)


@status_list_group.command("create")
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--key", required=True, type=click.Path(dir_okay=False, path_type=Path), help="Issuer key.")
@click.option("--verification-method", "method", metavar="DIDURL", help="Verification method id (default: the key's).")
@click.option("--id", "list_id", required=True, metavar="URL",
              help="The list's URL; ending in '/' appends a random UUID as the last path segment.")
@click.option("--size", type=int, default=statuslist.MIN_ENTRIES, show_default=True, help="Number of entries.")
@click.option("--purpose", type=click.Choice(list(statuslist.PURPOSES)), default="revocation", show_default=True)
@click.option("--force", is_flag=True, help="Overwrite OUT if it exists.")
@click.option("--now", "now_value", metavar="RFC3339", hidden=True)
@json_option
def status_list_create(out: Path, key: Path, method: str | None, list_id: str, size: int, purpose: str,
                       force: bool, now_value: str | None, as_json: bool) -> None:
    """Write a signed, all-clear BitstringStatusListCredential to OUT.

    \b
    Example:
      acx-oci status-list create list.json --key keys/verifier.key --id https://verifier.example.com/status/
    """
    if out.exists() and not force:
        raise UsageError(f"refusing to overwrite existing {out} (use --force)")
    ident, vm = _signer(key, method)
    url = statuslist.new_list_url(list_id) if list_id.endswith("/") else list_id
    now = _now(now_value)
    cred = statuslist.new_status_list(list_url=url, issuer=controller_of(vm), valid_from=now, size=size,
                                      purpose=purpose)
    signed = statuslist.sign_status_list(cred, ident, vm, now)
    _write_json(out, signed)
    if as_json:
        emit_json({"id": url, "size": size, "purpose": purpose, "issuer": controller_of(vm), "path": str(out)})
    else:
        click.echo(f"wrote {out}: status list {url} ({size} entries, {purpose}), issuer {controller_of(vm)}")


@status_list_group.command("revoke")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("index", type=int)
@click.option("--key", required=True, type=click.Path(dir_okay=False, path_type=Path), help="The list issuer's key.")
@click.option("--verification-method", "method", metavar="DIDURL", help="Verification method id (default: the key's).")
@click.option("--now", "now_value", metavar="RFC3339", hidden=True)
@json_option
def status_list_revoke(file: Path, index: int, key: Path, method: str | None, now_value: str | None,
                       as_json: bool) -> None:
    """Set bit INDEX of the list in FILE, refresh validFrom, re-sign, rewrite FILE.

    \b
    Example:
      acx-oci status-list revoke list.json 4711 --key keys/verifier.key
    """
    doc = _json_object(file, "status list")
    ident, vm = _signer(key, method)
    issuer = doc.get("issuer")
    issuer = issuer.get("id") if isinstance(issuer, dict) else issuer
    if issuer != controller_of(vm):
        raise UsageError(f"status list {file}: issued by {issuer}, but the key signs as {controller_of(vm)}")
    now = _now(now_value)
    was = statuslist.get_bit(statuslist.list_bits(doc), index)
    signed = statuslist.sign_status_list(statuslist.with_bit(doc, index, True, valid_from=now), ident, vm, now)
    _write_json(file, signed)
    if as_json:
        emit_json({"index": index, "set": True, "wasSet": was, "id": doc.get("id")})
    else:
        click.echo(f"revoked index {index} of {doc.get('id')}" + (" (it was already set)" if was else ""))


@status_list_group.command("check")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.argument("index", type=int)
@json_option
def status_list_check(file: Path, index: int, as_json: bool) -> None:
    """Decode the list in FILE and report bit INDEX (no proof or age check: that is `vc verify`).

    \b
    Example:
      acx-oci status-list check list.json 4711 --json
    """
    doc = _json_object(file, "status list")
    bits = statuslist.list_bits(doc)
    is_set = statuslist.get_bit(bits, index)
    if as_json:
        emit_json({"index": index, "set": is_set, "size": len(bits) * 8, "id": doc.get("id")})
    else:
        click.echo(f"index {index}: {'SET' if is_set else 'clear'} ({len(bits) * 8} entries)")
