"""``acx-oci revoke`` and ``status-refresh``: re-sign the state's status lists and republish (and log) them."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from acx_oci import reasons
from acx_oci.cli.attest_cmd import render_logged
from acx_oci.cli.common import emit_json, json_option, registry_options, verifier_state_options
from acx_oci.cli.log_opts import log_from_options, producer_log_options
from acx_oci.cli.main import main
from acx_oci.oci import StoreOptions
from acx_oci.services.verifier import VerifierLog
from acx_oci.trust import load_identity


@main.command("revoke")
@click.argument("name", metavar="CREDENTIAL_OR_ATTESTATION_DIGEST")
@verifier_state_options("The verifier's key: re-signs the status list.", "Verifier state that issued the credential.")
@click.option("--reason", default=reasons.REVOKED, show_default=True, help="Recorded in the ledger.")
@producer_log_options
@registry_options
@json_option
def revoke_command(name: str, key: Path, issuer: str | None, state_dir: Path, reason: str, plain_http: bool,
                   insecure: bool, timeout: float, as_json: bool, **log_opts: Any) -> None:
    """Revoke a credential: set its status bit, re-sign the list, republish it everywhere.

    NAME is the credential's digest, its attestation's digest, or its urn:uuid id.
    Every place the ledger recorded the list (cartridge repositories, files) is
    updated; resolvers then see the revocation. With a log (--log or the
    state's config.json), the re-signed list is appended as a status-list
    entry and the log published first. Exit 3 if any place (or the log's
    repository) failed.

    \b
    Example:
      acx-oci revoke sha256:<attestation digest> --key keys/verifier.key --state ./state
    """
    from datetime import UTC, datetime

    from acx_oci.services.verifier.revoke import revoke

    ident = load_identity(key, did=issuer)
    options = StoreOptions(plain_http=plain_http, insecure=insecure, timeout=timeout)
    log = log_from_options(state_dir, log_opts, options)
    vlog = VerifierLog(log, state_dir, ident) if log is not None else None
    outcome = revoke(state_dir, name, ident, datetime.now(UTC), reason, options, vlog)
    if as_json:
        emit_json(outcome.to_json())
    else:
        click.echo(f"REVOKED {outcome.credential_id}: bit {outcome.index} of {outcome.list_url}")
        for loc in outcome.published:
            click.echo(f"  republished {loc}")
        if outcome.logged is not None:
            render_logged(outcome.logged)
        for fail in outcome.failed:
            click.echo(f"  FAILED {fail}", err=True)
    if outcome.failed:
        sys.exit(3)


@main.command("status-refresh")
@verifier_state_options("The verifier's key: re-signs the status lists.", "Verifier state.")
@producer_log_options
@registry_options
@json_option
def status_refresh_command(key: Path, issuer: str | None, state_dir: Path, plain_http: bool, insecure: bool,
                           timeout: float, as_json: bool, **log_opts: Any) -> None:
    """Re-sign the state's status lists (validFrom = now, next acx:sequence) and republish them everywhere.

    Lists are valid for one day: run it as a scheduled job (hourly; docs/operations.md
    has a systemd timer and a cron line), and more often than your consumers'
    trust-file status.maxAge. Without it every credential of the state fails
    closed a day after the last re-sign. With a log, each re-signed list is
    appended as a status-list entry and the log published first. Exit 3 if
    any place (or the log's repository) could not be updated.

    \b
    Example:
      acx-oci status-refresh --key keys/verifier.key --state ./state
    """
    from datetime import UTC, datetime

    from acx_oci.services.verifier import refresh

    ident = load_identity(key, did=issuer)
    options = StoreOptions(plain_http=plain_http, insecure=insecure, timeout=timeout)
    log = log_from_options(state_dir, log_opts, options)
    vlog = VerifierLog(log, state_dir, ident) if log is not None else None
    results = refresh(state_dir, ident, datetime.now(UTC), options, vlog)
    failed = [f for r in results for f in r.failed]
    if as_json:
        emit_json({"lists": [{"statusList": r.list_url, "published": r.published, "failed": r.failed,
                              "skipped": r.skipped, **({"log": r.logged.to_json()} if r.logged else {})}
                             for r in results]})
    else:
        for r in results:
            if r.skipped:
                click.echo(f"{r.list_url}: skipped, {r.skipped}")
            else:
                click.echo(f"{r.list_url}: republished to {len(r.published)} place(s)"
                           + (f", {len(r.failed)} FAILED" if r.failed else ""))
                if r.logged is not None:
                    render_logged(r.logged)
        for fail in failed:
            click.echo(f"  FAILED {fail}", err=True)
    if failed:
        sys.exit(3)
