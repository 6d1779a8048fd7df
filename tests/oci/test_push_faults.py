"""Issue 14 item 6: a push that fails mid-way leaves no partial artifact visible, and a retry completes.

The fault proxy sits in front of the real Distribution registry and resets the connection
in the middle of a blob upload, or answers 5xx to it, or resets the manifest PUT. After
each: no manifest is visible whose blobs are missing (checked directly against the
registry, not through the proxy), and pushing again succeeds.
"""

from __future__ import annotations

import secrets
from pathlib import Path

import pytest

from acx_oci.crypto import sha256_digest
from acx_oci.errors import NotFoundError, RegistryError
from acx_oci.oci import MEDIA_MANIFEST, StoreOptions, build_manifest, fallback_tag, open_store

from ..support.cli import cli, ok
from ..support.faultproxy import FaultProxy
from ..support.registry import Registry

CAP = "build-dag[snowflake+airflow+dbt]@data-engineering"
UPLOAD_PUT = "/blobs/uploads/"


@pytest.fixture(scope="module")
def key(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tmp = tmp_path_factory.mktemp("pushkeys")
    ok(cli("keygen", tmp / "publisher"))
    return tmp / "publisher.key"


def cartridge(tmp: Path, name: str) -> Path:
    """A cartridge with a 2 MiB skill file (fresh bytes: nothing of it is in the registry yet)."""
    d = tmp / name
    ok(cli("cartridge", "init", d, "--id", f"io.example/{name}", "--version", "1.0.0", "--capability", CAP))
    (d / "skills" / "big.md").write_text(secrets.token_hex(1024 * 1024) + "\n")
    return d


def visible_and_complete(registry: str, repo: str, tag: str) -> bool | None:
    """None if no manifest is visible under ``tag``; else whether every blob it names is present."""
    store = open_store(f"{registry}/{repo}:{tag}", StoreOptions(retries=0))
    try:
        manifest = store.fetch_manifest(tag)
    except NotFoundError:
        return None
    return all(store.blob_exists(d.digest) for d in (manifest.config, *manifest.layers))


def test_reset_mid_upload_is_retried_and_the_push_completes(own_registry: Registry, proxy: FaultProxy, key: Path,
                                                            tmp_path: Path) -> None:
    d = cartridge(tmp_path, "reset1")
    proxy.add("reset", method="PUT", path=UPLOAD_PUT, nth=1, after=256 * 1024)
    out = ok(cli("cartridge", "push", d, f"{proxy.host}/acx/reset1:1.0.0", "--key", key, "--json"))
    assert ("PUT", next(p for m, p, a in proxy.log if a == "reset"), "reset") in proxy.log
    assert out["manifestDigest"].startswith("sha256:")
    assert visible_and_complete(own_registry.host, "acx/reset1", "1.0.0") is True


def test_upload_failing_every_time_leaves_no_manifest_then_retry_succeeds(own_registry: Registry,
                                                                          proxy: FaultProxy, key: Path,
                                                                          tmp_path: Path) -> None:
    d = cartridge(tmp_path, "reset2")
    proxy.add("reset", method="PUT", path=UPLOAD_PUT, after=256 * 1024)
    res = cli("cartridge", "push", d, f"{proxy.host}/acx/reset2:1.0.0", "--key", key)
    assert res.exit_code == 3, res.output
    assert "connection lost" in res.output
    assert visible_and_complete(own_registry.host, "acx/reset2", "1.0.0") is None
    assert not any(m == "PUT" and "/manifests/" in p for m, p, _ in proxy.log)
    proxy.clear()
    ok(cli("cartridge", "push", d, f"{proxy.host}/acx/reset2:1.0.0", "--key", key))
    assert visible_and_complete(own_registry.host, "acx/reset2", "1.0.0") is True


def test_5xx_on_upload_retried_with_backoff(own_registry: Registry, proxy: FaultProxy, key: Path,
                                            tmp_path: Path) -> None:
    d = cartridge(tmp_path, "busy")
    proxy.add("status", method="PUT", path=UPLOAD_PUT, nth=1, status=503)
    proxy.add("status", method="PUT", path=UPLOAD_PUT, nth=2, status=502)
    ok(cli("cartridge", "push", d, f"{proxy.host}/acx/busy:1.0.0", "--key", key))
    assert [a for _, _, a in proxy.log].count("status") == 2
    assert visible_and_complete(own_registry.host, "acx/busy", "1.0.0") is True


def test_5xx_persisting_fails_with_no_manifest(own_registry: Registry, proxy: FaultProxy, key: Path,
                                               tmp_path: Path) -> None:
    d = cartridge(tmp_path, "down")
    proxy.add("status", method="PUT", path=UPLOAD_PUT, status=500)
    res = cli("cartridge", "push", d, f"{proxy.host}/acx/down:1.0.0", "--key", key)
    assert res.exit_code == 3, res.output
    assert "HTTP 500" in res.output
    assert visible_and_complete(own_registry.host, "acx/down", "1.0.0") is None


def test_reset_on_the_manifest_put_then_retry(own_registry: Registry, proxy: FaultProxy, key: Path,
                                              tmp_path: Path) -> None:
    """The manifest goes last; a reset on it is retried (a manifest PUT is idempotent) and completes."""
    d = cartridge(tmp_path, "manifest")
    proxy.add("reset", method="PUT", path="/manifests/", nth=1)
    ok(cli("cartridge", "push", d, f"{proxy.host}/acx/manifest:1.0.0", "--key", key))
    assert any(a == "reset" for _, _, a in proxy.log)
    assert visible_and_complete(own_registry.host, "acx/manifest", "1.0.0") is True


def test_an_upload_the_registry_only_claims_is_caught_before_the_manifest(own_registry: Registry,
                                                                          proxy: FaultProxy, key: Path,
                                                                          tmp_path: Path) -> None:
    """A 201 for an upload that stored nothing: the HEAD check before the manifest refuses to push it."""
    d = cartridge(tmp_path, "liar")
    proxy.add("status", method="PUT", path=UPLOAD_PUT, nth=2, status=201)
    res = cli("cartridge", "push", d, f"{proxy.host}/acx/liar:1.0.0", "--key", key)
    assert res.exit_code == 3, res.output
    assert "refusing to push a manifest whose blob" in res.output
    assert not any(m == "PUT" and "/manifests/" in p for m, p, _ in proxy.log)
    assert visible_and_complete(own_registry.host, "acx/liar", "1.0.0") is None
    proxy.clear()
    ok(cli("cartridge", "push", d, f"{proxy.host}/acx/liar:1.0.0", "--key", key))
    assert visible_and_complete(own_registry.host, "acx/liar", "1.0.0") is True


def test_referrer_push_with_faults_never_lists_an_incomplete_referrer(own_registry: Registry,
                                                                       proxy: FaultProxy) -> None:
    """A referrer (as attestations are pushed): its layer upload is reset once, the fallback index write
    fails for good; the referrer manifest is complete wherever it is visible, and a re-push lists it."""
    repo = "acx/referrer"
    direct = open_store(f"{own_registry.host}/{repo}:subject", StoreOptions())
    layer = direct.push_blob(secrets.token_bytes(1024), "application/octet-stream")
    subject = direct.push_manifest(build_manifest("application/vnd.example.subject", [layer]),
                                   MEDIA_MANIFEST, "subject")
    via = open_store(f"{proxy.host}/{repo}:subject", StoreOptions())
    proxy.add("reset", method="PUT", path=UPLOAD_PUT, nth=1, after=64 * 1024)
    proxy.add("status", method="PUT", path=f"/manifests/{fallback_tag(subject.digest)}", status=503)
    payload = via.push_blob(secrets.token_bytes(512 * 1024), "application/vnd.example.payload")
    assert [a for _, _, a in proxy.log].count("reset") == 1
    raw = build_manifest("application/vnd.example.referrer", [payload], subject=subject)
    with pytest.raises(RegistryError, match="HTTP 503"):
        via.push_referrer(raw, subject.digest)
    referrer = direct.fetch_manifest(sha256_digest(raw))  # the manifest went up: its blobs are all there
    assert all(direct.blob_exists(d.digest) for d in (referrer.config, *referrer.layers))
    assert sha256_digest(raw) not in {d.digest for d in direct.referrers(subject.digest).descriptors}
    proxy.clear()
    via.push_referrer(raw, subject.digest)
    assert sha256_digest(raw) in {d.digest for d in direct.referrers(subject.digest).descriptors}
