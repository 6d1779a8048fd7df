"""``acx-oci doctor``: tells CNCF Distribution (no Referrers API) from go-containerregistry's registry
(Referrers API, config media type as artifactType, no filter, no OCI-Subject), on the real registries."""

from __future__ import annotations

import base64
import http.server
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import requests

from acx_oci.oci import (
    ARTIFACT_ATTESTATION,
    ARTIFACT_CARTRIDGE,
    MEDIA_MANIFEST,
    Descriptor,
    RegistryStore,
    StoreOptions,
    build_manifest,
    parse_reference,
)
from acx_oci.oci.registry import client as registry_client
from acx_oci.services.tools import CAPABILITIES, run_doctor

from .oci.test_store_registry import auth_registry  # noqa: F401  (the htpasswd registry fixture)
from .support.cli import cli, ok
from .support.httpserver import QuietHTTPServer


def test_doctor_tells_distribution_from_ggcr(registry: str, ggcr: str) -> None:
    dist = ok(cli("doctor", registry, "--json"))
    gg = ok(cli("doctor", ggcr, "--json"))
    assert set(CAPABILITIES) <= set(dist) and set(CAPABILITIES) <= set(gg)
    # Distribution 2.8: no Referrers API (404), so the tag-schema fallback; it refuses manifests over 4 MiB
    assert dist["referrersApi"] is False and dist["referrersFalse200"] is False
    assert dist["mode"] == "tag-schema" and dist["ociSubjectHeader"] is False
    assert dist["manifest4MiB"] is True and dist["manifestOver4MiB"] is False
    # ggcr: the API, but its listing reports the config media type, it ignores the filter, sends no OCI-Subject
    assert gg["referrersApi"] is True and gg["mode"] == "referrers-api"
    assert gg["artifactTypeFilter"] is False and gg["ociSubjectHeader"] is False
    assert gg["referrersArtifactType"] is False
    assert gg["details"]["listedArtifactType"] == "application/vnd.oci.empty.v1+json"
    assert gg["tagListLimit"] is True and gg["tagPagination"] is False  # n honoured, no Link
    for doc in (dist, gg):
        assert doc["tagList"] is True and doc["authRequired"] is False and doc["authScheme"] == "none"
        assert doc["manifestDelete"] is True and doc["repository"].startswith("acx-doctor/")
    human = ok(cli("doctor", ggcr, "--no-size-probe"))
    assert "mode: native Referrers API" in human and "classifies such referrers" in human
    assert "mode: tag-schema fallback" in ok(cli("doctor", registry, "--no-size-probe"))


def test_doctor_reads_the_auth_scheme(auth_registry: str, tmp_path: Path,  # noqa: F811
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    conf = tmp_path / "dockercfg"
    conf.mkdir()
    monkeypatch.setenv("DOCKER_CONFIG", str(conf))
    refused = cli("doctor", auth_registry, "--json", "--no-size-probe")
    assert refused.exit_code == 3 and "authentication required" in refused.output  # cannot push, says why
    token = base64.b64encode(b"alice:s3cret").decode()
    (conf / "config.json").write_text(json.dumps({"auths": {auth_registry: {"auth": token}}}))
    report = run_doctor(auth_registry, StoreOptions(), size_probe=False)
    assert report.capabilities["authRequired"] is True and report.auth_scheme == "basic"
    assert 'realm="acx-test"' in report.details["authChallenge"]


def test_tag_listing_pages_with_last_when_the_registry_sends_no_link(ggcr: str,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """ggcr honours ``n`` but sends no ``Link``: the client asks for the next page with ``last=``."""
    s = RegistryStore(parse_reference(f"{ggcr}/doctor/paging"), StoreOptions())
    d = s.push_manifest(build_manifest(ARTIFACT_CARTRIDGE, [s.push_blob(b"p", "text/plain")]), MEDIA_MANIFEST)
    names = [f"t{i:02d}" for i in range(7)]
    for t in names:
        s.tag(d.digest, t)
    monkeypatch.setattr(registry_client, "TAGS_PAGE", 2)
    assert s.list_tags() == names
    assert s.list_tags_bounded(3) == (names[:3], True)


@contextmanager
def _false_200_front(upstream: str) -> Iterator[str]:
    """A reverse proxy in front of real Distribution whose referrers endpoint answers 200 with an HTML page
    (what some CDNs and single-page-app hosts do for unknown paths)."""

    class Front(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def _relay(self) -> None:
            if "/referrers/" in self.path:
                body = b"<html><body>Welcome</body></html>"
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)
                return
            length = int(self.headers.get("Content-Length") or 0)
            data = self.rfile.read(length) if length else None
            headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "content-length")}
            resp = requests.request(self.command, f"http://{upstream}{self.path}", data=data, headers=headers,
                                    allow_redirects=False, timeout=30)
            self.send_response(resp.status_code)
            for k, v in resp.headers.items():
                if k.lower() in ("content-length", "transfer-encoding", "connection", "content-encoding"):
                    continue
                self.send_header(k, v.replace(f"http://{upstream}", f"http://{self.headers['Host']}"))
            self.send_header("Content-Length", str(len(resp.content)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(resp.content)

        do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = _relay

        def log_message(self, *a: object) -> None:
            pass

    srv = QuietHTTPServer(("127.0.0.1", 0), Front)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    try:
        yield f"127.0.0.1:{srv.server_address[1]}"
    finally:
        srv.shutdown()
        srv.server_close()


def test_doctor_spots_a_false_200(registry: str) -> None:
    with _false_200_front(registry) as front:
        doc = ok(cli("doctor", front, "--json", "--no-size-probe"))
        # and the client treats it as no API: the tag-schema fallback still lists the referrer
        s = RegistryStore(parse_reference(f"{front}/doctor/false200"), StoreOptions())
        d = s.push_manifest(build_manifest(ARTIFACT_CARTRIDGE, [s.push_blob(b"f", "text/plain")]), MEDIA_MANIFEST)
        subject = Descriptor(MEDIA_MANIFEST, d.digest, d.size)
        att = s.push_referrer(build_manifest(ARTIFACT_ATTESTATION, [], subject=subject), d.digest)
        listing = RegistryStore(parse_reference(f"{front}/doctor/false200"), StoreOptions()).referrers(d.digest)
        assert listing.source == "fallback" and [x.digest for x in listing.descriptors] == [att.digest]
    assert doc["referrersFalse200"] is True and doc["referrersApi"] is False and doc["mode"] == "tag-schema"
    assert doc["referrersArtifactType"] is None and doc["artifactTypeFilter"] is None
    assert any("not an image index" in n for n in doc["notes"])
