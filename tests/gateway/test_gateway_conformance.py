"""The gateway answers as the OCI distribution spec says where its upstream does (issue 35): each test is one spec
of the official conformance suite (benchmarks/conformance.py) that passed on Distribution alone and failed through
the gateway, or one thing a conformant upstream adds that the gateway must pass on."""

from __future__ import annotations

import hashlib
import json
import threading
import uuid
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import ClassVar

import httpx
import pytest

from acx_oci.gateway import RunningGateway
from acx_oci.oci import EMPTY_DESCRIPTOR, EMPTY_JSON, MEDIA_INDEX, MEDIA_MANIFEST, Descriptor, build_manifest

from ..support.gateway_proc import minimal_gateway, minimal_policy_files
from ..support.httpserver import QuietHTTPServer

TYPE_A, TYPE_B = "application/vnd.example.sig.v1", "application/vnd.example.sbom.v1"


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    return minimal_policy_files(tmp_path_factory.mktemp("gwconformance"))


@pytest.fixture
def gw(registry: str, files: tuple[Path, Path]) -> Iterator[RunningGateway]:
    """The gateway in front of Distribution (no Referrers API: the gateway keeps the tag-schema index itself)."""
    with minimal_gateway(registry, files) as running:
        yield running


@pytest.fixture
def gw_any(any_registry: str, files: tuple[Path, Path]) -> Iterator[RunningGateway]:
    """The gateway in front of Distribution, then of ggcr (which has the Referrers API)."""
    with minimal_gateway(any_registry, files) as running:
        yield running


def _push_blob(base: str, repo: str, data: bytes) -> str:
    digest = "sha256:" + hashlib.sha256(data).hexdigest()
    start = httpx.post(f"{base}/v2/{repo}/blobs/uploads/")
    assert start.status_code == 202, start.text
    loc = httpx.URL(base).join(start.headers["location"])
    done = httpx.put(loc.copy_merge_params({"digest": digest}), content=data,
                     headers={"Content-Type": "application/octet-stream"})
    assert done.status_code == 201, done.text
    return digest


def _put(base: str, repo: str, ref: str, raw: bytes, media_type: str = MEDIA_MANIFEST) -> httpx.Response:
    return httpx.put(f"{base}/v2/{repo}/manifests/{ref}", content=raw, headers={"Content-Type": media_type})


def _digest(raw: bytes) -> str:
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def _subject() -> tuple[bytes, Descriptor]:
    raw = build_manifest("application/vnd.example.thing.v1", [], annotations={"n": uuid.uuid4().hex})
    return raw, Descriptor(MEDIA_MANIFEST, _digest(raw), len(raw))


@pytest.mark.parametrize("method", ["GET", "HEAD", "DELETE"])
def test_a_malformed_tag_is_an_unknown_manifest_and_never_forwarded(gw: RunningGateway, method: str) -> None:
    """The suite's ``.INVALID_MANIFEST_NAME``: no manifest can have that tag, so the spec's answer is 404 (it was
    400 TAG_INVALID); the JSON MANIFEST_UNKNOWN is the gateway's own (Distribution's router answers plain text)."""
    resp = httpx.request(method, f"http://{gw.address}/v2/lab/conf/manifests/.INVALID_MANIFEST_NAME")
    assert resp.status_code == 404
    if method != "HEAD":
        assert resp.json()["errors"][0]["code"] == "MANIFEST_UNKNOWN"
    # a PUT under it is still a bad request, not an unknown manifest
    put = _put(f"http://{gw.address}", "lab/conf", ".INVALID_MANIFEST_NAME", _subject()[0])
    assert put.status_code == 400 and put.json()["errors"][0]["code"] == "TAG_INVALID"


def test_a_mount_without_from_is_a_plain_upload_and_mounts_nothing(gw: RunningGateway, registry: str) -> None:
    """``POST ?mount=`` without ``from=``: the spec wants 202 and an upload session (it was 400 UNSUPPORTED); the
    blob sits in a covered repository and must not appear in the target repository."""
    digest = _push_blob(f"http://{registry}", "acx/secret", uuid.uuid4().bytes * 64)
    base = f"http://{gw.address}"
    for query in (f"mount={digest}", f"m%6Funt={digest}"):  # no spelling of the key is forwarded
        resp = httpx.post(f"{base}/v2/lab/mounted/blobs/uploads/?{query}")
        assert resp.status_code == 202, resp.text
        assert "/v2/lab/mounted/blobs/uploads/" in resp.headers["location"]
    assert httpx.head(f"http://{registry}/v2/lab/mounted/blobs/{digest}").status_code == 404
    # the session is a real one: the upload completes through it
    loc = httpx.URL(base).join(resp.headers["location"])
    data = uuid.uuid4().bytes
    done = httpx.put(loc.copy_merge_params({"digest": _digest(data)}), content=data)
    assert done.status_code == 201


def test_referrers_of_a_subject_not_pushed_yet_are_listed(gw_any: RunningGateway) -> None:
    """A referrer may go up before its subject; the gateway answered its PUT with OCI-Subject, so the listing must
    show it (it answered an empty index whenever the subject itself was 404)."""
    base, repo = f"http://{gw_any.address}", f"lab/early{uuid.uuid4().hex[:8]}"
    _, subject = _subject()
    _push_blob(base, repo, EMPTY_JSON)
    ref = build_manifest(TYPE_A, [EMPTY_DESCRIPTOR], subject=subject, annotations={"k": "early"})
    put = _put(base, repo, _digest(ref), ref)
    assert put.status_code == 201 and put.headers.get_list("oci-subject") == [subject.digest]
    listing = httpx.get(f"{base}/v2/{repo}/referrers/{subject.digest}")
    assert listing.status_code == 200 and listing.headers["content-type"] == MEDIA_INDEX
    listed = [(m["digest"], m.get("annotations")) for m in listing.json()["manifests"]]
    assert listed == [(_digest(ref), {"k": "early"})]
    # a subject nobody referred to, in a repository that does not exist: empty, not 404
    empty = httpx.get(f"{base}/v2/lab/none{uuid.uuid4().hex[:8]}/referrers/sha256:{'0' * 64}")
    assert empty.status_code == 200 and empty.json()["manifests"] == []


def test_an_image_index_referrer_is_recorded_and_filtered(gw_any: RunningGateway) -> None:
    """An index with a subject was answered 201 with OCI-Subject but never written to the fallback index (only image
    manifests were parsed), so it could not be discovered; listed, it keeps its artifactType and annotations (ggcr's
    API lists neither for it, nor annotations for a manifest), and ``?artifactType=`` narrows the listing and says
    so."""
    base, repo = f"http://{gw_any.address}", f"lab/idx{uuid.uuid4().hex[:8]}"
    subject_raw, subject = _subject()
    _push_blob(base, repo, EMPTY_JSON)
    assert _put(base, repo, "v1", subject_raw).status_code == 201
    # typed by its config, as the suite's "config.mediaType = artifactType" referrer: ggcr lists it with that
    # type and no annotations, which the gateway reads from the manifest
    sig = build_manifest(TYPE_A, [EMPTY_DESCRIPTOR], subject=subject, annotations={"k": "manifest"},
                         config=Descriptor(TYPE_A, EMPTY_DESCRIPTOR.digest, EMPTY_DESCRIPTOR.size))
    assert _put(base, repo, _digest(sig), sig).status_code == 201
    index = json.dumps({"schemaVersion": 2, "mediaType": MEDIA_INDEX, "artifactType": TYPE_B,
                        "manifests": [{"mediaType": MEDIA_MANIFEST, "digest": subject.digest, "size": subject.size}],
                        "subject": subject.to_json(), "annotations": {"k": "index"}}).encode()
    put = _put(base, repo, _digest(index), index, MEDIA_INDEX)
    assert put.status_code == 201 and put.headers.get_list("oci-subject") == [subject.digest]
    listing = httpx.get(f"{base}/v2/{repo}/referrers/{subject.digest}").json()["manifests"]
    assert sorted((m["digest"], m["mediaType"], m.get("artifactType"), m.get("annotations")) for m in listing) == \
        sorted([(_digest(sig), MEDIA_MANIFEST, TYPE_A, {"k": "manifest"}),
                (_digest(index), MEDIA_INDEX, TYPE_B, {"k": "index"})])
    only = httpx.get(f"{base}/v2/{repo}/referrers/{subject.digest}", params={"artifactType": TYPE_B})
    assert only.headers["oci-filters-applied"] == "artifactType"
    assert [m["digest"] for m in only.json()["manifests"]] == [_digest(index)]


def test_a_proxied_answer_has_one_date_header(gw_any: RunningGateway) -> None:
    """The upstream's Date was relayed and the gateway's server added its own: two Date headers on every
    proxied response (streamed, small, judged and the gateway's own)."""
    base = f"http://{gw_any.address}"
    subject_raw, subject = _subject()
    _push_blob(base, "lab/date", EMPTY_JSON)
    for resp in (httpx.get(f"{base}/v2/"), _put(base, "lab/date", "v1", subject_raw),
                 httpx.get(f"{base}/v2/lab/date/manifests/v1", headers={"Accept": MEDIA_MANIFEST}),
                 httpx.get(f"{base}/v2/lab/date/blobs/{EMPTY_DESCRIPTOR.digest}"),
                 httpx.get(f"{base}/v2/lab/date/referrers/{subject.digest}"),
                 httpx.get(f"{base}/v2/lab/date/manifests/nothere")):
        assert len(resp.headers.get_list("date")) == 1, (resp.request.url, resp.headers)


class _Conformant(BaseHTTPRequestHandler):
    """What a fully conformant registry adds, on top of the real ggcr registry (no registry packaged here does it
    all): ``OCI-Subject`` on a manifest PUT with a subject, and a referrers listing with the listed manifests'
    annotations, narrowed by ``?artifactType=`` with ``OCI-Filters-Applied``. Everything else is relayed as is."""

    upstream: ClassVar[str] = ""
    protocol_version = "HTTP/1.1"

    def _relay(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        url = httpx.URL(f"http://{self.upstream}{self.path}")
        resp = httpx.request(self.command, url, content=body or None, headers={
            k: v for k, v in self.headers.items() if k.lower() in ("content-type", "accept")})
        out, headers = resp.content, {k: v for k, v in resp.headers.items()
                                      if k.lower() not in ("content-length", "transfer-encoding", "date")}
        if self.command == "PUT" and resp.status_code == 201 and b'"subject"' in body:
            headers["OCI-Subject"] = json.loads(body)["subject"]["digest"]
        if "/referrers/" in url.path and resp.status_code == 200:
            repo = url.path[len("/v2/"):url.path.index("/referrers/")]
            wanted = url.params.get("artifactType")
            doc = json.loads(out)
            for m in doc["manifests"]:
                raw = httpx.get(f"http://{self.upstream}/v2/{repo}/manifests/{m['digest']}",
                                headers={"Accept": m["mediaType"]}).content
                m["annotations"] = json.loads(raw).get("annotations", {})
            if wanted:
                doc["manifests"] = [m for m in doc["manifests"] if m.get("artifactType") == wanted]
                headers["OCI-Filters-Applied"] = "artifactType"
            out = json.dumps(doc).encode()
        self.send_response(resp.status_code)
        for k, v in headers.items():
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(out)

    do_GET = do_HEAD = do_PUT = do_POST = do_PATCH = do_DELETE = _relay

    def log_message(self, *args: object) -> None:
        pass


def test_what_a_conformant_upstream_adds_is_passed_on(ggcr: str, files: tuple[Path, Path]) -> None:
    """Its ``OCI-Subject`` once (and then no fallback index of the gateway's own), its annotations, and a filtered
    listing that says it is filtered."""
    _Conformant.upstream = ggcr
    server = QuietHTTPServer(("127.0.0.1", 0), _Conformant)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        with minimal_gateway(f"127.0.0.1:{server.server_address[1]}", files) as running:
            base, repo = f"http://{running.address}", f"lab/conformant{uuid.uuid4().hex[:8]}"
            subject_raw, subject = _subject()
            _push_blob(base, repo, EMPTY_JSON)
            assert _put(base, repo, "v1", subject_raw).status_code == 201
            digests = {}
            for at, note in ((TYPE_A, "a"), (TYPE_B, "b")):
                cfg = Descriptor(at, EMPTY_DESCRIPTOR.digest, EMPTY_DESCRIPTOR.size)  # ggcr lists config's type
                raw = build_manifest(at, [EMPTY_DESCRIPTOR], subject=subject, annotations={"k": note}, config=cfg)
                put = _put(base, repo, _digest(raw), raw)
                assert put.status_code == 201 and put.headers.get_list("oci-subject") == [subject.digest]
                digests[at] = _digest(raw)
            fallback = subject.digest.replace(":", "-")
            assert httpx.head(f"http://{ggcr}/v2/{repo}/manifests/{fallback}").status_code == 404
            only = httpx.get(f"{base}/v2/{repo}/referrers/{subject.digest}", params={"artifactType": TYPE_B})
            assert only.headers.get_list("oci-filters-applied") == ["artifactType"]
            assert [(m["digest"], m["annotations"]) for m in only.json()["manifests"]] == [(digests[TYPE_B],
                                                                                            {"k": "b"})]
            every = httpx.get(f"{base}/v2/{repo}/referrers/{subject.digest}").json()["manifests"]
            assert sorted((m["digest"], m["annotations"]["k"]) for m in every) == \
                sorted([(digests[TYPE_A], "a"), (digests[TYPE_B], "b")])
    finally:
        server.shutdown()
