"""``agent-card [show] REF`` (emit, optionally sign and write under .well-known/) and ``agent-card verify FILE``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import click

from acx_oci.cli.common import emit_json, json_option, registry_options, store_for
from acx_oci.cli.main import main
from acx_oci.cli.referrers_cmd import ResolveFlags, resolve_options, run_resolution
from acx_oci.errors import DidError, UsageError
from acx_oci.files import load_json_file
from acx_oci.model import build_agent_card, card_signers, sign_agent_card, verify_signed_by
from acx_oci.trust import Trust, load_identity, load_trust
from acx_oci.urls import without_fragment

WELL_KNOWN = Path(".well-known") / "agent-card.json"  # A2A's discovery path


class _DefaultToShow(click.Group):
    """``agent-card REF`` stays what it was (``show``); ``agent-card verify FILE`` is the other subcommand."""

    def parse_args(self, ctx: click.Context, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("-h", "--help"):
            args = ["show", *args]
        return super().parse_args(ctx, args)


@main.group("agent-card", cls=_DefaultToShow)
def agent_card_group() -> None:
    """Emit an A2A AgentCard for a cartridge (`agent-card REF`), or verify a signed one (`agent-card verify`)."""


@agent_card_group.command("show")
@click.argument("ref")
@click.option("--trust", "trust_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Trust file: trusted verifiers and accepted benchmarks.")
@click.option("--sign", "sign_key", type=click.Path(dir_okay=False, path_type=Path),
              help="Sign the card (JWS, EdDSA) with this key.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Write the card to DIR/.well-known/agent-card.json (A2A's discovery path) instead of stdout.")
@click.option("--url", metavar="URL",
              help="The agent's A2A endpoint (https://, or http:// on loopback), the card's url. Without it the "
                   "card has no url and says why: a registry reference is not an A2A endpoint.")
@resolve_options
@registry_options
@json_option
def agent_card(ref: str, trust_path: Path, sign_key: Path | None, out_dir: Path | None, url: str | None,
               flags: ResolveFlags, plain_http: bool, insecure: bool, timeout: float, as_json: bool) -> None:
    """Emit an A2A AgentCard: one skill per claim, resolved proficiency in the acx extension.

    \b
    Example:
      acx-oci agent-card registry.example/acme/dag-agent:1.0.0 --trust trust.yaml --sign keys/publisher.key
      acx-oci agent-card registry.example/acme/dag-agent:1.0.0 --trust trust.yaml --sign keys/publisher.key \\
          --out ./site      # writes ./site/.well-known/agent-card.json
    """
    if url is not None:
        _check_url(url)
    trust = load_trust(trust_path)
    store = store_for(ref, plain_http, insecure, timeout)
    resolution, rom = run_resolution(store, ref, trust, flags)
    card = build_agent_card(resolution, rom, ref, url)
    if sign_key is not None:
        card = sign_agent_card(card, load_identity(sign_key))
    if out_dir is None:
        emit_json(card)
        return
    path = out_dir / WELL_KNOWN
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(card, indent=2) + "\n", "utf-8")
    if as_json:
        emit_json({"path": str(path), "signed": sign_key is not None})
    else:
        click.echo(f"wrote {path}" + (" (signed)" if sign_key is not None else " (unsigned)"))


def _check_url(url: str) -> None:
    """An A2A endpoint: https, or http on a loopback host (a local test server), with a host."""
    parts = urlsplit(url)
    loopback = parts.hostname in ("localhost", "127.0.0.1", "::1")
    if not parts.hostname or not (parts.scheme == "https" or (parts.scheme == "http" and loopback)) \
            or any(c in url for c in " \n\r\t"):
        raise UsageError(f"--url {url[:120]!r}: expected the agent's A2A endpoint, https://HOST/... (http:// only "
                         "on localhost)")


def _keys_for(kid: str, trust: Trust | None, did_documents: tuple[Path, ...], allow_network: bool) -> list[bytes]:
    from acx_oci.net import https
    from acx_oci.trust import did

    docs = {}
    for p in did_documents:
        doc = load_json_file(p, "--did-document")
        if isinstance(doc, dict) and isinstance(doc.get("id"), str):
            docs[doc["id"]] = doc

    class _Source:
        def did_document_for(self, did_value: str) -> dict[str, Any] | None:
            return docs.get(did_value) or (trust.did_document_for(did_value) if trust else None)

    fetch = https.fetcher(max_bytes=did.MAX_DID_DOCUMENT_BYTES, accept="application/did+json, application/json") \
        if allow_network else None
    return [key for _, key in did.assertion_keys(kid, _Source(), fetch)]


@agent_card_group.command("verify")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@click.option("--trust", "trust_path", type=click.Path(dir_okay=False, path_type=Path),
              help="Also require the signer to be a trusted publisher or verifier (and resolve did:web from it).")
@click.option("--did-document", "did_documents", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="The signer's DID document (keygen's PREFIX.did.json) for a did:web signer, offline.")
@click.option("--allow-network", is_flag=True, help="Resolve a did:web signer over HTTPS.")
@json_option
def agent_card_verify(file: Path, trust_path: Path | None, did_documents: tuple[Path, ...], allow_network: bool,
                      as_json: bool) -> None:
    """Check FILE's JWS signature(s): exit 0 if one verifies under its kid's key, 1 otherwise.

    FILE is a card from `agent-card --sign` (or DIR/.well-known/agent-card.json).
    The signer is the kid of the protected header (a DID URL): did:key
    resolves offline, did:web from --did-document, the trust file or HTTPS.

    \b
    Example:
      acx-oci agent-card verify ./site/.well-known/agent-card.json --trust trust.yaml
    """
    card = load_json_file(file, "agent card")
    if not isinstance(card, dict):
        raise UsageError(f"agent card ({file}): expected a JSON object")
    trust = load_trust(trust_path) if trust_path else None
    kids = card_signers(card)
    verified: list[str] = []
    problems: list[str] = [] if kids else ["no EdDSA signature with a kid (sign it with agent-card --sign KEY)"]
    for kid in kids:
        try:
            keys = _keys_for(kid, trust, did_documents, allow_network)
        except DidError as exc:
            problems.append(f"{kid}: {exc}")
            continue
        if not verify_signed_by(card, kid, keys):
            problems.append(f"{kid}: the signature does not verify (the card was changed after signing, "
                            "or signed by another key)")
        elif trust is not None and not any(without_fragment(kid) == p.id for p in [*trust.publishers,
                                                                                  *trust.verifiers]):
            problems.append(f"{kid}: the signature verifies, but the signer is not in the trust file")
        else:
            verified.append(kid)
    ok = bool(verified)
    if as_json:
        emit_json({"verified": ok, "signers": verified, "problems": problems})
    else:
        click.echo(f"VERIFIED agent card signed by {', '.join(verified)}" if ok else "NOT VERIFIED agent card")
        for problem in problems:
            click.echo(f"  {problem}")
    if not ok:
        sys.exit(1)
