"""``acx-oci doctor``: tells CNCF Distribution (no Referrers API) from go-containerregistry's registry
(Referrers API, config media type as artifactType, no filter, no OCI-Subject), on the real registries."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from acx_oci.oci.model import ARTIFACT_CARTRIDGE, MEDIA_MANIFEST, build_manifest
from acx_oci.oci.ref import parse_reference
from acx_oci.oci.registry import RegistryStore
from acx_oci.oci.registry import client as registry_client
from acx_oci.oci.store import StoreOptions
from acx_oci.services.doctor import CAPABILITIES, run_doctor

from .support.cli import cli, ok
from .test_store_registry import auth_registry  # noqa: F401  (the htpasswd registry fixture)


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
