"""Attacks on the gateway through bytes its reader and the registry's read differently, and through headers
(attack review of the raw-byte header forwarding). Each test is one attack, on a real Distribution registry."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator

import httpx
import pytest

from acx_oci.evaluation import load_policy
from acx_oci.gateway import GatewayConfig, RunningGateway, start_in_thread
from acx_oci.gateway.proxy import DENIED_HEADER
from acx_oci.oci import (
    ARTIFACT_ATTESTATION,
    ARTIFACT_CARTRIDGE,
    EMPTY_DIGEST,
    MANIFEST_ACCEPT,
    MEDIA_MANIFEST,
    Descriptor,
    build_manifest,
)
from acx_oci.trust import load_trust

from ..support.gateway_proc import minimal_gateway, minimal_policy_files
from ..support.policy_world import World, build_world


@pytest.fixture(scope="module")
def gw(registry: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    with minimal_gateway(registry, minimal_policy_files(tmp_path_factory.mktemp("gwheaders"))) as running:
        yield running


def _empty_config(registry: str, repository: str) -> None:
    start = httpx.post(f"http://{registry}/v2/{repository}/blobs/uploads/")
    location = httpx.URL(f"http://{registry}").join(start.headers["location"])
    up = httpx.put(location.copy_merge_params({"digest": EMPTY_DIGEST}), content=b"{}",
                   headers={"Content-Type": "application/octet-stream"})
    assert up.status_code == 201, up.text


def _forged_attestation(note: bytes) -> bytes:
    """A level attestation (no credential at all: the gateway's check refuses it) with ``note`` spliced into an
    annotation value as raw bytes."""
    subject = Descriptor(MEDIA_MANIFEST, "sha256:" + "ab" * 32, 2)
    raw = build_manifest(ARTIFACT_ATTESTATION, [], subject=subject, annotations={"n": "NOTE"})
    assert raw.count(b"NOTE") == 1
    return raw.replace(b"NOTE", note)


@pytest.mark.parametrize("note", [b"\xff", b"\\ud800", b"\xed\xa0\x80"], ids=["bad-utf8", "lone-surrogate-escape",
                                                                              "utf8-surrogate"])
def test_an_attestation_the_gateway_cannot_read_is_not_forwarded_unverified(
        registry: str, gw: RunningGateway, note: bytes) -> None:
    """Go's decoder reads invalid UTF-8 (and lone surrogates) as U+FFFD; Python's refuses it, and the gateway
    forwarded what it could not read without verifying it: a forged attestation stored upstream through it."""
    _empty_config(registry, "acx/unreadable")
    assert json.loads(_forged_attestation(b"x"))["artifactType"] == ARTIFACT_ATTESTATION
    plain = httpx.put(f"http://{gw.address}/v2/acx/unreadable/manifests/plain", content=_forged_attestation(b"x"),
                      headers={"Content-Type": MEDIA_MANIFEST})
    assert plain.status_code == 403, plain.text  # readable: verified, and refused
    tag = f"t-{note.hex()}"
    resp = httpx.put(f"http://{gw.address}/v2/acx/unreadable/manifests/{tag}", content=_forged_attestation(note),
                     headers={"Content-Type": MEDIA_MANIFEST})
    assert resp.status_code == 400, resp.text
    assert resp.json()["errors"][0]["detail"]["codes"] == ["schema_invalid"]
    stored = httpx.get(f"http://{registry}/v2/acx/unreadable/manifests/{tag}", headers={"Accept": MEDIA_MANIFEST})
    assert stored.status_code == 404, stored.text


@pytest.mark.parametrize("splice", [b'"n":"\xff"', b'"n":"\\udc00"', b'"n":' + b"[" * 200 + b"]" * 200,
                                    b'"artifactType":"x"'], ids=["bad-utf8", "lone-surrogate", "deep", "duplicate"])
def test_a_cartridge_manifest_the_gateway_cannot_read_is_not_served_unjudged(
        registry: str, gw: RunningGateway, splice: bytes) -> None:
    """Stored upstream directly (the registry, Go, reads all of these: invalid UTF-8 and lone surrogates as U+FFFD,
    a duplicate member as its last value), such a manifest is a cartridge to a Go client. The gateway read none of
    them, called the type "none" and served them (200) without a verdict (and a readable wrapper manifest naming
    the same layers would have got its layers out too: the ledger never learnt that a cartridge names them)."""
    _empty_config(registry, "acx/unjudged")
    raw = build_manifest(ARTIFACT_CARTRIDGE, [], annotations={"m": "1"})
    raw = raw[:-1] + b"," + splice + b"}"
    if splice.startswith(b'"artifactType"'):  # the last member wins in Go: the cartridge type goes last
        raw = raw.replace(b'"artifactType":"' + ARTIFACT_CARTRIDGE.encode() + b'"', b'"artifactType":"x"', 1)
        raw = raw[:-1].rsplit(b",", 1)[0] + b',"artifactType":"' + ARTIFACT_CARTRIDGE.encode() + b'"}'
    tag = f"t-{hashlib.sha256(splice).hexdigest()[:12]}"
    put = httpx.put(f"http://{registry}/v2/acx/unjudged/manifests/{tag}", content=raw,
                    headers={"Content-Type": MEDIA_MANIFEST})
    assert put.status_code == 201, put.text
    for method in ("GET", "HEAD"):
        resp = httpx.request(method, f"http://{gw.address}/v2/acx/unjudged/manifests/{tag}",
                             headers={"Accept": MEDIA_MANIFEST})
        assert resp.status_code == 403, (method, resp.status_code)
        assert resp.headers.get(DENIED_HEADER)


@pytest.fixture(scope="module")
def policy_gw(registry: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[World, RunningGateway]]:
    w = build_world(registry, tmp_path_factory.mktemp("world"))
    running = start_in_thread(GatewayConfig(upstream=f"http://{registry}", policy=load_policy(w.policy),
                                            trust=load_trust(w.trust)))
    try:
        yield w, running
    finally:
        running.stop()


@pytest.mark.parametrize("header", ["If-None-Match", "If-Modified-Since"])
def test_a_conditional_request_cannot_revalidate_a_denied_manifest(
        policy_gw: tuple[World, RunningGateway], header: str) -> None:
    """Forwarded as sent, ``If-None-Match: <digest>`` got the registry's 304 relayed unjudged: a client holding a
    cached copy of a cartridge that has since been revoked (or a policy tightened) was told it is still good."""
    w, gw = policy_gw
    digest = w.digests["unattested"]
    value = {"If-None-Match": f'"{digest}"', "If-Modified-Since": "Mon, 01 Jan 2001 00:00:00 GMT"}[header]
    for method in ("GET", "HEAD"):
        plain = httpx.request(method, f"http://{gw.address}/v2/acx/unattested/manifests/1",
                              headers={"Accept": MANIFEST_ACCEPT})
        assert plain.status_code == 403, (method, plain.status_code)
        resp = httpx.request(method, f"http://{gw.address}/v2/acx/unattested/manifests/1",
                             headers={"Accept": MANIFEST_ACCEPT, header: value})
        assert resp.status_code == 403, (method, resp.status_code)
        assert resp.headers.get(DENIED_HEADER)
    allowed = httpx.get(f"http://{gw.address}/v2/acx/strong/manifests/1",
                        headers={"Accept": MANIFEST_ACCEPT, "If-None-Match": f'"{w.digests["strong"]}"'})
    assert allowed.status_code == 200 and allowed.content  # judged, then served whole


@pytest.mark.parametrize("body", [b"{}", b"null", b'{"schemaVersion":1}', b'{"schemaVersion":"2"}', b"[]", b"2"])
@pytest.mark.parametrize("repository", ["acx/shapes", "plain/shapes"])
def test_a_manifest_put_that_is_no_oci_manifest_is_400_not_the_registrys_500(
        gw: RunningGateway, body: bytes, repository: str) -> None:
    """Distribution answers ``{}``, ``null`` and ``schemaVersion: 1`` under an OCI media type with a 500 (UNKNOWN);
    the gateway relayed it, so any client could make the gateway answer 5xx."""
    resp = httpx.put(f"http://{gw.address}/v2/{repository}/manifests/t", content=body,
                     headers={"Content-Type": MEDIA_MANIFEST})
    assert resp.status_code == 400, resp.text
    assert resp.json()["errors"][0]["code"] == "MANIFEST_INVALID"
