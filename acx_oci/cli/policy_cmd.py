"""``policy check`` and ``gateway``: an organization's bar, checked locally or enforced registry-side."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import click

from acx_oci.cli.common import emit_json, json_option, registry_options, store_for
from acx_oci.cli.main import main
from acx_oci.cli.referrers_cmd import (
    NO_REPLAY_HELP,
    ResolveFlags,
    check_deadline,
    no_log_option,
    resolve_loaded_cli,
    status_cache_option,
)
from acx_oci.evaluation import RequirementResult, Verdict, evaluate, load_policy
from acx_oci.oci import parse_reference
from acx_oci.services.artifacts import load_cartridge
from acx_oci.trust import load_trust


@main.group()
def policy() -> None:
    """Policy files (apiVersion acx.dev/policy/v1): which repositories must meet which bar."""


def _render_requirement(req: RequirementResult, indent: str) -> None:
    mark = "✓" if req.met else "✗"
    codes = f"  [{', '.join(req.codes)}]" if req.codes else ""
    click.echo(f"{indent}{mark} {req.description}{codes}")
    if req.children:
        for child in req.children:
            _render_requirement(child, indent + "    ")
        return
    for reason in req.reasons if not req.met else req.reasons[:1]:
        click.echo(f"{indent}      {reason}")
    if not req.met:
        for c in req.considered:
            if c.messages:
                click.echo(f"{indent}        {c.attestation_digest[:19]}… {c.outcome}: {c.messages[0]}")


def render_verdict(ref: str, verdict: Verdict) -> None:
    """The human ``policy check`` verdict: the manifest and repository judged, then each rule met or not, and why."""
    click.echo(f"{ref}  (manifest {verdict.manifest_digest}, repository {verdict.repository})")
    if not verdict.requirements:
        click.echo("ALLOWED: " + (verdict.notes[0] if verdict.notes else "no requirement applies"))
        return
    click.echo(("ALLOWED" if verdict.allowed else "DENIED") + f" by rule(s) {', '.join(verdict.rules)}")
    unmet = verdict.unmet
    if unmet:
        click.echo(f"unmet requirements ({len(unmet)}):")
        for req in unmet:
            _render_requirement(req, "  ")
    met = [r for r in verdict.requirements if r.met]
    if met:
        click.echo(f"met requirements ({len(met)}):")
        for req in met:
            _render_requirement(req, "  ")
    for note in verdict.notes:
        click.echo(f"note: {note}")
    if verdict.partial:
        click.echo("PARTIAL: a bound was hit while resolving; the answer may be incomplete")


@policy.command("check")
@click.argument("ref")
@click.option("--policy", "policy_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Policy file (YAML or JSON).")
@click.option("--trust", "trust_path", required=True, type=click.Path(dir_okay=False, path_type=Path),
              help="Trust file: trusted publishers and verifiers, accepted benchmarks, gate.")
@click.option("--repository", help="Evaluate as if REF were in this repository (default: REF's own; "
                                   "needed for oci: layouts).")
@click.option("--status-list", "status_list_files", multiple=True, type=click.Path(dir_okay=False, path_type=Path),
              help="A signed status list file to use when the registry has none (offline); repeatable.")
@click.option("--allow-network", is_flag=True, help="Allow HTTPS: for status lists not found in the registry, and "
                                                   "for did:web documents the trust file does not pin.")
@click.option("--max-referrers", type=click.IntRange(1), default=1000, show_default=True)
@status_cache_option
@click.option("--no-replay", is_flag=True, help=NO_REPLAY_HELP)
@no_log_option
@registry_options
@json_option
def policy_check(ref: str, policy_path: Path, trust_path: Path, repository: str | None,
                 status_list_files: tuple[Path, ...], allow_network: bool, max_referrers: int,
                 status_cache_dir: Path | None, no_replay: bool, no_log: bool, plain_http: bool, insecure: bool,
                 timeout: float, as_json: bool) -> None:
    """Check REF against a policy: exit 0 if allowed, 1 if denied (unmet requirements are listed).

    Every attestation is verified first (the same checks as `resolve`, including
    the replay of the deciding credentials' game records unless --no-replay,
    which is weaker); revocation fails closed: a credential whose status list
    cannot be found does not count.

    \b
    Example:
      acx-oci policy check registry.example/acme/dag-agent:1.0.0 --policy policy.yaml --trust trust.yaml
    """
    pol = load_policy(policy_path)
    trust = load_trust(trust_path)
    parsed = parse_reference(ref)
    repo = repository or (parsed.repository if parsed.kind == "registry" else parsed.path)
    store = store_for(ref, plain_http, insecure, timeout)
    cart = load_cartridge(store, parsed.target, trust)
    # revocation fails closed under a policy: no --allow-unknown-status here
    flags = ResolveFlags(status_list_files, allow_unknown_status=False, allow_network=allow_network,
                         check_evidence=False, max_referrers=max_referrers, no_replay=no_replay, no_log=no_log,
                         status_cache_dir=status_cache_dir)
    resolution = resolve_loaded_cli(store, cart, ref, trust, flags)
    verdict = evaluate(pol, repo, resolution, datetime.now(UTC))
    if as_json:
        emit_json({**verdict.to_json(), "policyDefault": pol.default})
    else:
        render_verdict(ref, verdict)
        click.echo(f"  policy: {pol.describe_default()}")
    check_deadline(resolution, "policy check: no verdict")
    if not verdict.allowed:
        raise SystemExit(1)


def _check_bindable(listen: str) -> None:
    """Bind ``--listen`` once (with SO_REUSEADDR, as the server does), or fail with exit 3 before any banner."""
    import socket

    from acx_oci.errors import RegistryError
    from acx_oci.gateway import parse_listen

    host, port = parse_listen(listen)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
        family, _, _, _, address = infos[0]
        with socket.socket(family, socket.SOCK_STREAM) as sock:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
    except OSError as exc:
        raise RegistryError(f"gateway: cannot listen on {listen}: {exc.strerror or exc}") from None


@main.command()
@click.option("--upstream", required=True, help="The registry to front, e.g. http://127.0.0.1:5000 or "
                                               "https://registry.example.")
@click.option("--listen", default="127.0.0.1:5080", show_default=True, help="HOST:PORT to serve on.")
@click.option("--policy", "policy_path", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--trust", "trust_path", required=True, type=click.Path(dir_okay=False, path_type=Path))
@click.option("--fresh", "fresh_seconds", type=click.FloatRange(0), default=2.0, show_default=True,
              help="Seconds a verdict is reused without re-listing referrers and status lists.")
@click.option("--max-verdict-age", type=click.FloatRange(1), default=300.0, show_default=True,
              help="Seconds after which a verdict is recomputed even if nothing changed (time-dependent checks).")
@click.option("--timeout", type=float, default=30.0, show_default=True, help="Seconds per upstream request.")
@click.option("--insecure", is_flag=True, help="Skip TLS verification towards the upstream.")
@click.option("--ca-file", type=click.Path(exists=True, dir_okay=False), metavar="FILE",
              help="PEM file of CA certificates the upstream's certificate is verified with (default: "
                   "/etc/docker/certs.d/HOST:PORT/ca.crt when present, else the system store).")
@click.option("--graceful", type=click.FloatRange(0), default=30.0, show_default=True,
              help="Seconds in-flight requests get to finish on SIGTERM/SIGINT.")
@click.option("--status-cache", "status_cache_dir", type=click.Path(file_okay=False, path_type=Path), metavar="DIR",
              help="Where the highest status-list sequences seen are remembered (default: $ACX_OCI_CACHE_DIR, "
                   "else $XDG_CACHE_HOME/acx-oci, else ~/.cache/acx-oci).")
@click.option("--no-replay", is_flag=True, help=NO_REPLAY_HELP + " Applies to pulls and to attestation pushes.")
@no_log_option
@click.option("--header-timeout", type=click.FloatRange(0.1), default=10.0, show_default=True,
              help="Seconds a client has to send a request line and all its headers (else 408 and close).")
@click.option("--idle-timeout", type=click.FloatRange(0.1), default=5.0, show_default=True,
              help="Seconds an idle keep-alive connection is kept.")
@click.option("--manifest-body-timeout", type=click.FloatRange(0.1), default=30.0, show_default=True,
              help="Seconds a manifest PUT's whole body may take to arrive (else 408 and close); blob uploads are "
                   "bounded by the 30 s idle timeout per read only.")
@click.option("--max-connections", type=click.IntRange(1), default=None,
              help="Client connections at once; past it, connections still sending headers or idle are dropped, "
                   "oldest first (default: from the file-descriptor limit, raised to its hard limit at start).")
@click.option("--evaluation-threads", type=click.IntRange(1), default=8, show_default=True,
              help="Threads for policy evaluations and push checks; a flood of new manifests queues here while "
                   "cached verdicts are still revalidated on the other threads.")
@click.option("--tls-cert", type=click.Path(dir_okay=False, path_type=Path), metavar="PEM",
              help="Serve HTTPS with this certificate chain (PEM; with --tls-key).")
@click.option("--tls-key", type=click.Path(dir_okay=False, path_type=Path), metavar="PEM",
              help="The private key of --tls-cert (PEM, unencrypted).")
@click.option("--tls-client-ca", type=click.Path(dir_okay=False, path_type=Path), metavar="PEM",
              help="Mutual TLS: clients must present a certificate issued by this CA (refused in the handshake).")
def gateway(upstream: str, listen: str, policy_path: Path, trust_path: Path, fresh_seconds: float,
            max_verdict_age: float, timeout: float, insecure: bool, ca_file: str | None, graceful: float,
            status_cache_dir: Path | None, no_replay: bool, no_log: bool, header_timeout: float, idle_timeout: float,
            manifest_body_timeout: float, max_connections: int | None, evaluation_threads: int,
            tls_cert: Path | None, tls_key: Path | None, tls_client_ca: Path | None) -> None:
    """Serve a policy-enforcing proxy of the OCI distribution API in front of UPSTREAM.

    \b
    - pulls of cartridge manifests in covered repositories must meet the policy (403 DENIED otherwise)
    - pushes of level attestations must verify against the trust file (403 DENIED otherwise)
    - pushes of status lists (acx-status-<uuid>) must be newer (higher acx:sequence) than upstream's
    - GET /v2/<name>/referrers/<digest> is served natively, even when UPSTREAM lacks the API
    - everything else is proxied untouched; /healthz, /readyz, /metrics (Prometheus); JSON-lines access log on stderr
    - --tls-cert/--tls-key serve HTTPS; --tls-client-ca also requires a client certificate (mutual TLS)

    Stateless apart from a verdict cache and the status-list sequences it has seen (--status-cache):
    run as many replicas as you like behind a load balancer.

    \b
    Example:
      acx-oci gateway --upstream http://127.0.0.1:5000 --listen 127.0.0.1:5080 --policy policy.yaml --trust trust.yaml
      acx-oci gateway --upstream https://registry.internal:5443 --ca-file internal-ca.pem --policy policy.yaml \\
          --trust trust.yaml
    """
    from acx_oci.gateway import GatewayConfig, ServerLimits, check_options, parse_listen, serve, server_context
    from acx_oci.net import client_context

    parse_listen(listen)  # a bad --listen is a usage error before anything starts
    tls_files = check_options(tls_cert, tls_key, tls_client_ca)
    tls = server_context(tls_files) if tls_files is not None else None
    config = GatewayConfig(upstream=upstream.rstrip("/"), policy=load_policy(policy_path),
                           trust=load_trust(trust_path), timeout=timeout, insecure=insecure, ca_file=ca_file,
                           fresh_seconds=fresh_seconds, max_age_seconds=max_verdict_age,
                           status_cache_dir=status_cache_dir, replay=not no_replay, log=not no_log,
                           manifest_body_seconds=manifest_body_timeout, evaluation_threads=evaluation_threads)
    _ = config.upstream_origin  # validate the URL before binding
    client_context(config.upstream_host, insecure=insecure, ca_file=ca_file)  # and a --ca-file that is not PEM
    _check_bindable(listen)  # a taken port fails here, before the banner a readiness loop would believe
    mode = "" if tls is None else ("  (mutual TLS)" if tls_client_ca else "")
    click.echo(f"acx-oci gateway: {'https' if tls else 'http'}://{listen} -> {config.upstream_origin}{mode}"
               + ("  (replay OFF: weaker)" if no_replay else "")
               + ("  (log checking OFF: weaker)" if not config.log else ""), err=True)
    click.echo(f"acx-oci gateway: {config.policy.describe_default()}", err=True)
    serve(config, listen, graceful, ServerLimits(header_seconds=header_timeout, idle_seconds=idle_timeout,
                                                 max_connections=max_connections), tls)
