"""The gateway over TLS (and mutual TLS) to real clients — skopeo, curl, the ORAS CLI — trusting a CA the test
makes, and its ``/metrics`` and ``/healthz`` on the same listener."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from acx_oci.errors import UsageError
from acx_oci.evaluation import load_policy
from acx_oci.gateway import GatewayConfig, RunningGateway, ServerLimits, check_options, server_context, start_in_thread
from acx_oci.gateway.tls import TlsFiles
from acx_oci.oci import MANIFEST_ACCEPT
from acx_oci.trust import load_trust

from ..support.cli import cli_expect as cli
from ..support.gateway_proc import free_port, minimal_policy_files
from ..support.oras_cli import oras_binary
from ..support.policy_world import World, build_world
from ..support.tls_ca import Issued, ScratchCA

SKOPEO_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent"}


@pytest.fixture(scope="module")
def world(registry: str, tmp_path_factory: pytest.TempPathFactory) -> World:
    return build_world(registry, tmp_path_factory.mktemp("world-tls"))


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> tuple[ScratchCA, Issued, ScratchCA, Issued]:
    d = tmp_path_factory.mktemp("pki")
    ca = ScratchCA(d, "server CA")
    client_ca = ScratchCA(d, "client CA")
    return ca, ca.issue("server", server=True), client_ca, client_ca.issue("client", server=False)


def _gateway(world: World, tls: ssl.SSLContext) -> RunningGateway:
    config = GatewayConfig(upstream=f"http://{world.registry}", policy=load_policy(world.policy),
                           trust=load_trust(world.trust), fresh_seconds=0.3)
    return start_in_thread(config, tls=tls)


@pytest.fixture(scope="module")
def gw(world: World, pki: tuple[ScratchCA, Issued, ScratchCA, Issued]) -> Iterator[RunningGateway]:
    running = _gateway(world, server_context(TlsFiles(pki[1].cert, pki[1].key)))
    try:
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def mtls(world: World, pki: tuple[ScratchCA, Issued, ScratchCA, Issued]) -> Iterator[RunningGateway]:
    running = _gateway(world, server_context(TlsFiles(pki[1].cert, pki[1].key, pki[2].pem)))
    try:
        yield running
    finally:
        running.stop()


def _cert_dir(tmp_path: Path, ca: ScratchCA, client: Issued | None = None) -> Path:
    """skopeo's --cert-dir layout: ``*.crt`` are CAs, ``NAME.cert`` + ``NAME.key`` a client certificate."""
    d = tmp_path / "certs"
    d.mkdir(parents=True)
    shutil.copy(ca.pem, d / "ca.crt")
    if client is not None:
        shutil.copy(client.cert, d / "client.cert")
        shutil.copy(client.key, d / "client.key")
    return d


def skopeo(cert_dir: Path, ref: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["skopeo", "inspect", "--raw", "--cert-dir", str(cert_dir), f"docker://{ref}"],
                          capture_output=True, timeout=60, env=SKOPEO_ENV)


def curl(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(["curl", "-sS", "-o", "-", "-w", "\n%{http_code}", *args], capture_output=True, timeout=60)


def _status(res: subprocess.CompletedProcess[bytes]) -> int:
    return int(res.stdout.rsplit(b"\n", 1)[-1] or 0)


def _denials(gw: RunningGateway, ca: ScratchCA) -> dict[str, float]:
    text = httpx.get(f"{gw.url}/metrics", verify=ssl.create_default_context(cafile=ca.pem)).text
    return {s.labels["reason"]: s.value for f in text_string_to_metric_families(text)
            if f.name == "acx_gateway_denials" for s in f.samples if s.name.endswith("_total")}


def test_skopeo_over_tls_compliant_passes_denied_is_403(world: World, gw: RunningGateway, tmp_path: Path,
                                                       pki: tuple[ScratchCA, Issued, ScratchCA, Issued]) -> None:
    certs = _cert_dir(tmp_path, pki[0])
    through = skopeo(certs, f"{gw.address}/acx/strong:1")
    assert through.returncode == 0, through.stderr.decode()
    direct = subprocess.run(["skopeo", "inspect", "--raw", "--tls-verify=false", f"docker://{world.ref('strong')}"],
                            capture_output=True, timeout=60, env=SKOPEO_ENV)
    assert through.stdout == direct.stdout
    before = _denials(gw, pki[0]).get("no_attestation", 0)
    denied = skopeo(certs, f"{gw.address}/acx/unattested:1")
    assert denied.returncode != 0 and "denied" in denied.stderr.decode().lower(), denied.stderr.decode()
    assert _denials(gw, pki[0])["no_attestation"] > before  # counted under its reason code
    # and a client that does not trust the CA does not get through
    untrusting = subprocess.run(["skopeo", "inspect", "--raw", f"docker://{gw.address}/acx/strong:1"],
                                capture_output=True, timeout=60, env=SKOPEO_ENV)
    assert untrusting.returncode != 0 and b"certificate" in untrusting.stderr


def test_curl_over_tls_and_metrics_count_the_denial(world: World, gw: RunningGateway,
                                                    pki: tuple[ScratchCA, Issued, ScratchCA, Issued]) -> None:
    ca = str(pki[0].pem)
    ok = curl("--cacert", ca, "-H", f"Accept: {MANIFEST_ACCEPT}", f"{gw.url}/v2/acx/strong/manifests/1")
    assert _status(ok) == 200, ok.stderr
    before = _denials(gw, pki[0]).get("revoked", 0)
    no = curl("--cacert", ca, "-H", f"Accept: {MANIFEST_ACCEPT}", f"{gw.url}/v2/acx/revoked/manifests/1")
    assert _status(no) == 403 and b'"DENIED"' in no.stdout
    assert _denials(gw, pki[0])["revoked"] == before + 1
    health = curl("--cacert", ca, f"{gw.url}/healthz")
    assert _status(health) == 200 and health.stdout.split(b"\n")[0] == b'{"status":"ok"}'
    assert world.registry.encode() not in health.stdout  # the upstream (maybe with credentials) is not shown
    metrics = curl("--cacert", ca, f"{gw.url}/metrics")
    assert _status(metrics) == 200
    text = metrics.stdout.decode()
    for name in ("acx_gateway_requests_total{", "acx_gateway_verdict_cache_hits_total{",
                 "acx_gateway_upstream_seconds_bucket{", "acx_gateway_open_connections "):
        assert name in text, name
    assert world.registry not in text and "acx/revoked" not in text  # no upstream, no repository names
    plain = curl(f"http://{gw.address}/healthz")  # plain HTTP to the TLS port gets no answer from the gateway
    assert _status(plain) != 200


def test_oras_cli_over_tls(gw: RunningGateway, pki: tuple[ScratchCA, Issued, ScratchCA, Issued],
                           tmp_path: Path) -> None:
    binary = oras_binary()
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    base = [binary, "manifest", "fetch", "--ca-file", str(pki[0].pem)]
    ok = subprocess.run([*base, f"{gw.address}/acx/strong:1"], capture_output=True, timeout=60, env=env)
    assert ok.returncode == 0 and b"application/vnd.oci.image.manifest.v1+json" in ok.stdout, ok.stderr
    before = _denials(gw, pki[0]).get("self_issued", 0)
    no = subprocess.run([*base, f"{gw.address}/acx/selfissued:1"], capture_output=True, timeout=60, env=env)
    assert no.returncode != 0 and b"denied:" in no.stderr and b"self_issued" in no.stderr, no.stderr
    assert _denials(gw, pki[0])["self_issued"] == before + 1  # the 403, counted


def test_mutual_tls_refuses_a_client_without_a_certificate(mtls: RunningGateway, tmp_path: Path,
                                                           pki: tuple[ScratchCA, Issued, ScratchCA, Issued]) -> None:
    ca, _, _, client = pki
    bare = curl("--cacert", str(ca.pem), f"{mtls.url}/healthz")
    assert bare.returncode != 0 and _status(bare) == 0  # refused in the handshake: no HTTP status at all
    # a certificate from another CA (the server CA's, not the client CA's) is refused too
    stranger = ca.issue("stranger", server=False)
    other = curl("--cacert", str(ca.pem), "--cert", str(stranger.cert), "--key", str(stranger.key),
                 f"{mtls.url}/healthz")
    assert other.returncode != 0 and _status(other) == 0
    good = curl("--cacert", str(ca.pem), "--cert", str(client.cert), "--key", str(client.key), f"{mtls.url}/healthz")
    assert _status(good) == 200, good.stderr
    assert skopeo(_cert_dir(tmp_path, ca, client), f"{mtls.address}/acx/strong:1").returncode == 0
    no_cert = skopeo(_cert_dir(tmp_path / "bare", ca), f"{mtls.address}/acx/strong:1")
    assert no_cert.returncode != 0


def test_tls_options_are_checked_before_binding(tmp_path: Path, pki: tuple[ScratchCA, Issued, ScratchCA, Issued],
                                                world: World) -> None:
    server, other = pki[1], pki[3]
    assert check_options(None, None, None) is None
    for args in ((server.cert, None, None), (None, server.key, None), (None, None, pki[2].pem)):
        with pytest.raises(UsageError):
            check_options(*args)
    with pytest.raises(UsageError, match="no such file"):
        server_context(TlsFiles(tmp_path / "missing.crt", server.key))
    with pytest.raises(UsageError, match="matching private key"):
        server_context(TlsFiles(server.cert, other.key))  # a key that is not the certificate's
    res = cli("gateway", "--upstream", f"http://{world.registry}", "--policy", world.policy, "--trust", world.trust,
              "--listen", "127.0.0.1:0", "--tls-cert", server.cert, ok=(2,))
    assert "--tls-cert and --tls-key go together" in res.output and "Traceback" not in res.output


def test_the_cli_serves_https_and_stops_cleanly(world: World, pki: tuple[ScratchCA, Issued, ScratchCA, Issued],
                                                tmp_path: Path) -> None:
    """``acx-oci gateway --tls-cert --tls-key`` as an operator runs it: HTTPS answers, SIGTERM exits 0."""
    ca, server = pki[0], pki[1]
    address = f"127.0.0.1:{free_port()}"
    with (tmp_path / "log").open("w+b") as log:
        proc = subprocess.Popen([sys.executable, "-m", "acx_oci", "gateway", "--upstream", f"http://{world.registry}",
                                 "--listen", address, "--policy", str(world.policy), "--trust", str(world.trust),
                                 "--tls-cert", str(server.cert), "--tls-key", str(server.key)],
                                stdout=subprocess.DEVNULL, stderr=log)
        try:
            verify = ssl.create_default_context(cafile=ca.pem)
            deadline = time.monotonic() + 30
            while True:
                try:
                    if httpx.get(f"https://{address}/healthz", verify=verify, timeout=2).status_code == 200:
                        break
                except httpx.TransportError:
                    pass
                assert proc.poll() is None and time.monotonic() < deadline, log.read().decode()
                time.sleep(0.1)
            resp = httpx.get(f"https://{address}/v2/acx/unattested/manifests/1", verify=verify,
                             headers={"Accept": MANIFEST_ACCEPT})
            assert resp.status_code == 403
            assert 'acx_gateway_denials_total{reason="no_attestation"} 1.0' in \
                httpx.get(f"https://{address}/metrics", verify=verify).text
        finally:
            proc.send_signal(signal.SIGTERM)
            code = proc.wait(timeout=30)
        log.seek(0)
        assert code == 0 and f"https://{address}" in log.read().decode()


def test_a_client_that_never_handshakes_is_closed_by_the_header_deadline(
        world: World, pki: tuple[ScratchCA, Issued, ScratchCA, Issued]) -> None:
    """A connection still in its TLS handshake is not yet counted by the connection guard, so the handshake
    itself is bounded (by the header deadline, not asyncio's 60 s)."""
    config = GatewayConfig(upstream=f"http://{world.registry}", policy=load_policy(world.policy),
                           trust=load_trust(world.trust))
    running = start_in_thread(config, limits=ServerLimits(header_seconds=1.0),
                              tls=server_context(TlsFiles(pki[1].cert, pki[1].key)))
    try:
        with socket.create_connection((running.host, running.port), timeout=10) as sock:
            started = time.monotonic()
            assert sock.recv(1) == b""  # closed by the server (the 10 s socket timeout would raise), no byte sent
            assert time.monotonic() - started < 9  # a backstop, under the socket's own timeout
    finally:
        running.stop()


def test_acx_oci_pull_and_resolve_through_the_tls_gateway(world: World, gw: RunningGateway, tmp_path: Path,
                                                          pki: tuple[ScratchCA, Issued, ScratchCA, Issued],
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """Our own client over TLS on 127.0.0.1: ``--ca-file`` (or a certs.d entry) switches loopback to HTTPS."""
    ref, ca, stranger = world.ref("strong", gw.address), str(pki[0].pem), str(pki[2].pem)
    monkeypatch.setenv("ACX_CERTS_D", str(tmp_path / "certs.d"))  # none for this host, until made below
    resolved = json.loads(cli("resolve", ref, "--trust", world.trust, "--ca-file", ca, "--json").output)
    assert resolved["ok"] and resolved["capabilities"], resolved
    cli("pull", ref, "-o", tmp_path / "agent", "--trust", world.trust, "--ca-file", ca)
    assert (tmp_path / "agent" / "verified-capabilities.json").is_file()
    # without a CA, loopback means plain HTTP: the gateway answers in TLS, and the one line says what to pass
    plain = cli("resolve", ref, "--trust", world.trust, ok=(3,))
    assert plain.output.strip().splitlines() == [
        f"error: registry {gw.address} speaks TLS: pass --ca-file FILE or --insecure"], plain.output
    # a CA that did not sign its certificate: a TLS error, saying so, on one line
    wrong = cli("pull", ref, "-o", tmp_path / "no", "--trust", world.trust, "--ca-file", stranger, ok=(3,))
    assert len(wrong.output.strip().splitlines()) == 1 and "TLS error (certificate verify failed" in wrong.output
    # --insecure wins over a CA bundle from the environment that would refuse the certificate
    for var in ("REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE"):
        monkeypatch.setenv(var, stranger)
    insecure = json.loads(cli("resolve", ref, "--trust", world.trust, "--insecure", "--json").output)
    assert insecure["ok"] and insecure["capabilities"] == resolved["capabilities"]
    # docker's convention: certs.d/HOST:PORT/ca.crt is trusted, and asks for TLS, with no flag at all
    (tmp_path / "certs.d" / gw.address).mkdir(parents=True)
    shutil.copy(ca, tmp_path / "certs.d" / gw.address / "ca.crt")
    monkeypatch.delenv("REQUESTS_CA_BUNDLE")
    monkeypatch.delenv("CURL_CA_BUNDLE")
    by_certs_d = json.loads(cli("resolve", ref, "--trust", world.trust, "--json").output)
    assert by_certs_d["capabilities"] == resolved["capabilities"]


def test_the_gateways_upstream_connection_trusts_its_ca_file_and_certs_d(
        world: World, gw: RunningGateway, tmp_path: Path, pki: tuple[ScratchCA, Issued, ScratchCA, Issued],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A second gateway fronting the TLS gateway (upstream ``https://127.0.0.1:PORT``): its proxied requests and its
    own reads for the policy verify the upstream's certificate with ``--ca-file`` or the upstream's certs.d entry,
    as our client does (net/tls.py). Before, the upstream was verified against the system store only."""
    monkeypatch.setenv("ACX_CERTS_D", str(tmp_path / "certs.d"))  # no entry for the upstream until made below
    ca, stranger = str(pki[0].pem), str(pki[2].pem)

    def through(ca_file: str | None, name: str) -> httpx.Response:
        config = GatewayConfig(upstream=f"https://{gw.address}", policy=load_policy(world.policy),
                               trust=load_trust(world.trust), ca_file=ca_file, fresh_seconds=0.3, timeout=10.0)
        front = start_in_thread(config)
        try:
            return httpx.get(f"{front.url}/v2/acx/{name}/manifests/1", headers={"Accept": MANIFEST_ACCEPT},
                             timeout=60)
        finally:
            front.stop()

    direct = httpx.get(f"{gw.url}/v2/acx/strong/manifests/1", headers={"Accept": MANIFEST_ACCEPT},
                       verify=ssl.create_default_context(cafile=ca))
    assert direct.status_code == 200
    trusted = through(ca, "strong")  # proxied, and evaluated on what the gateway read over TLS itself
    assert trusted.status_code == 200 and trusted.content == direct.content, trusted.text
    denied = through(ca, "unattested")
    assert denied.status_code == 403 and "no_attestation" in denied.text, denied.text
    for wrong in (None, stranger):  # the system store, or a CA that did not sign it: never an unverified answer
        refused = through(wrong, "strong")
        assert refused.status_code >= 500 and refused.content != direct.content, (wrong, refused.text)
    (tmp_path / "certs.d" / gw.address).mkdir(parents=True)  # docker's convention, with no flag at all
    shutil.copy(ca, tmp_path / "certs.d" / gw.address / "ca.crt")
    by_certs_d = through(None, "strong")
    assert by_certs_d.status_code == 200 and by_certs_d.content == direct.content, by_certs_d.text


def test_the_gateway_cli_refuses_a_ca_file_that_is_not_pem(tmp_path: Path) -> None:
    """``--ca-file`` holding no certificate is one line naming the file, exit 2, before anything binds."""
    from acx_oci.net import client_context

    bad = tmp_path / "ca.pem"
    bad.write_text("not a certificate\n")
    policy, trust = minimal_policy_files(tmp_path)
    res = cli("gateway", "--upstream", "https://127.0.0.1:5443", "--listen", f"127.0.0.1:{free_port()}",
              "--ca-file", bad, "--policy", policy, "--trust", trust, ok=(2,))
    (line,) = res.output.strip().splitlines()
    assert line.startswith(f"error: CA file {bad}: expected PEM CA certificates, could not load it"), line
    assert "acx-oci gateway:" not in res.output  # no banner: nothing was served
    assert client_context("registry.example:443", insecure=False, ca_file=None) is None
    insecure = client_context("registry.example:443", insecure=True, ca_file=str(bad))
    assert insecure is not None and insecure.verify_mode == ssl.CERT_NONE  # --insecure wins, as in the client
