"""Pull an image by digest, unpack it safely once, and keep it in a cache keyed by the manifest digest.

Layout: ``CACHE/<manifest hex>/rootfs`` (the unpacked root) and ``CACHE/<hex>/image.json`` (what was
unpacked, counts, packages). An entry is unpacked under ``CACHE/.tmp-*`` and renamed into place only when
every layer applied cleanly, so a half-unpacked tree is never used and a refusal leaves nothing behind.
``CACHE`` is ``$ACX_OCI_CACHE_DIR``, else ``/var/cache/acx-oci/images`` for root (the sandbox's unprivileged
uid must be able to reach it; root's home is 0700), else ``$XDG_CACHE_HOME/acx-oci/images`` (``~/.cache``).
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import stat
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acx_oci import safetree
from acx_oci.crypto import check_digest
from acx_oci.envimage.build import ANN_PACKAGES
from acx_oci.envimage.unpack import Limits, Unpacker, remove_tree
from acx_oci.errors import ImageUnsafe, UsageError
from acx_oci.jsonio import as_array, as_object, loads
from acx_oci.oci import (
    MAX_MANIFEST_BYTES,
    MEDIA_DOCKER_LIST,
    MEDIA_DOCKER_MANIFEST,
    MEDIA_INDEX,
    MEDIA_MANIFEST,
    Store,
    StoreOptions,
    open_store,
    parse_reference,
)

GZIP_LAYERS = ("application/vnd.oci.image.layer.v1.tar+gzip", "application/vnd.docker.image.rootfs.diff.tar.gzip")
TAR_LAYERS = ("application/vnd.oci.image.layer.v1.tar",)
DEFAULT_CACHE_MAX = 20 * 1024 * 1024 * 1024
INFO = "image.json"
_MACHINE = {"x86_64": "amd64", "aarch64": "arm64", "armv7l": "arm", "i686": "386", "ppc64le": "ppc64le",
            "s390x": "s390x", "riscv64": "riscv64"}


def default_cache_dir() -> Path:
    """``$ACX_OCI_CACHE_DIR``, else a system cache for root, else under ``$XDG_CACHE_HOME`` (or ``~/.cache``)."""
    env = os.environ.get("ACX_OCI_CACHE_DIR")
    if env:
        return Path(env)
    if os.geteuid() == 0:
        return Path("/var/cache/acx-oci/images")
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "acx-oci" / "images"


@dataclass
class Prepared:
    """An unpacked image: its root, its manifest digest, and whether this call unpacked it."""

    root: Path
    image_digest: str
    reference: str
    cache_hit: bool
    info: dict[str, Any] = field(default_factory=dict)
    seconds: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The ``env`` commands' ``--json`` document: the package count, not the list."""
        return {"imageDigest": self.image_digest, "reference": self.reference, "rootfs": str(self.root),
                "cacheHit": self.cache_hit, "seconds": round(self.seconds, 2),
                **{k: v for k, v in self.info.items() if k not in ("imageDigest", "reference", "packages")},
                "packages": len(self.info.get("packages") or [])}


@dataclass(frozen=True)
class ImageManifest:
    """An image manifest already checked to be one we can unpack: its digest, config and layer descriptors."""

    digest: str
    config: dict[str, Any]
    layers: list[dict[str, Any]]
    annotations: dict[str, str]


def _json(raw: bytes, what: str) -> dict[str, Any]:
    try:
        doc = loads(raw, what)
    except (ValueError, UnicodeDecodeError):
        raise UsageError(f"{what}: not JSON") from None
    if not isinstance(doc, dict):
        raise UsageError(f"{what}: expected a JSON object")
    return doc


def _platform_manifest(store: Store, doc: dict[str, Any], where: str) -> str:
    want = _MACHINE.get(platform.machine(), platform.machine())
    for m in as_array(doc.get("manifests")):
        p = as_object(m.get("platform")) if isinstance(m, dict) else {}
        if p.get("os") == "linux" and p.get("architecture") == want:
            return check_digest(str(m.get("digest")), f"{where} entry")
    raise UsageError(f"{where}: an image index with no linux/{want} image")


def load_manifest(store: Store, target: str) -> ImageManifest:
    """The image manifest ``target`` names (an index is resolved to this machine's platform), verified."""
    raw, media_type, digest = store.fetch_manifest_raw(target)
    doc = _json(raw, f"manifest {target}")
    mt = doc.get("mediaType", media_type)
    if mt in (MEDIA_INDEX, MEDIA_DOCKER_LIST) or "manifests" in doc:
        raw, media_type, digest = store.fetch_manifest_raw(_platform_manifest(store, doc, f"index {digest}"))
        doc = _json(raw, f"manifest {digest}")
        mt = doc.get("mediaType", media_type)
    if mt not in (MEDIA_MANIFEST, MEDIA_DOCKER_MANIFEST) or not isinstance(doc.get("layers"), list):
        raise UsageError(f"{target}: not an image manifest (mediaType {mt})")
    cfg_desc = as_object(doc.get("config"))
    config = _json(store.fetch_blob(check_digest(str(cfg_desc.get("digest")), "config digest"), MAX_MANIFEST_BYTES),
                   f"image config of {digest}")
    ann = as_object(doc.get("annotations"))
    return ImageManifest(digest, config, list(doc["layers"]), {str(k): str(v) for k, v in ann.items()})


def _entry(cache: Path, digest: str) -> Path:
    return cache / check_digest(digest, "image digest").split(":", 1)[1]


def _cached(cache: Path, digest: str) -> dict[str, Any] | None:
    entry = _entry(cache, digest)
    try:
        info = loads((entry / INFO).read_bytes(), INFO)
    except (OSError, ValueError):
        return None
    if not (entry / "rootfs").is_dir() or info.get("imageDigest") != digest:
        return None
    with contextlib.suppress(OSError):
        os.utime(entry / INFO)  # last use, for prune
    return dict(info)


def _mount_points(root: Path) -> None:
    """bwrap mounts the sandbox's own /etc/passwd and /etc/group over the image's: they must be files.

    Through descriptors only: an image whose ``etc`` is a link (to a host directory) is refused, never
    followed — ``.exists()`` and ``.touch()`` on ``root/etc/passwd`` would create files on the host.
    """
    fd = safetree.open_root(root)
    try:
        st = safetree.lstat_at(fd, "etc")
        if st is None:
            os.mkdir("etc", 0o755, dir_fd=fd)
        elif not stat.S_ISDIR(st.st_mode):
            raise ImageUnsafe(f"image: /etc is a {'symlink' if stat.S_ISLNK(st.st_mode) else 'file'}, "
                              "not a directory")
        with safetree.dir_at(fd, ["etc"]) as etc:
            assert etc is not None
            for name in ("passwd", "group"):
                est = safetree.lstat_at(etc, name)
                if est is not None and not stat.S_ISREG(est.st_mode):
                    raise ImageUnsafe(f"image: /etc/{name} is not a regular file")
                if est is None:
                    os.close(os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                                     0o644, dir_fd=etc))
    finally:
        os.close(fd)


def _apply_layers(store: Store, image: ImageManifest, unpacker: Unpacker, tmp: Path, limits: Limits,
                  diff_ids: list[Any]) -> None:
    """Fetch each layer (digest-verified, bounded) into ``tmp`` and apply it, in order."""
    for i, layer in enumerate(image.layers, 1):
        ldigest = check_digest(str(layer.get("digest")), "layer digest")
        where = f"image {image.digest[:19]}… layer {i}/{len(image.layers)} ({ldigest[:19]}…)"
        mt = str(layer.get("mediaType"))
        if mt not in GZIP_LAYERS + TAR_LAYERS:
            raise ImageUnsafe(f"{where}: unsupported layer media type {mt}")
        lsize = int(layer.get("size") or 0)
        if lsize > limits.max_bytes:
            raise ImageUnsafe(f"{where}: {layer.get('size')} bytes, over the {limits.max_bytes}-byte bound")
        blob = tmp / "layer.blob"
        # digest-verified before it is used; the read stops at the size the manifest gives
        store.fetch_blob_to_file(ldigest, blob, size=lsize, max_bytes=limits.max_bytes)
        with blob.open("rb") as fh:
            unpacker.layer(fh, gzipped=mt in GZIP_LAYERS, where=where, diff_id=str(diff_ids[i - 1]))
        blob.unlink()


def unpack_image(store: Store, image: ImageManifest, cache: Path, *, limits: Limits | None = None) -> dict[str, Any]:
    """Unpack every layer of ``image`` into a fresh temporary entry and rename it into place; the info."""
    limits = limits or Limits()
    diff_ids = (image.config.get("rootfs") or {}).get("diff_ids") or []
    if len(diff_ids) != len(image.layers):
        raise ImageUnsafe(f"image {image.digest}: {len(image.layers)} layers but {len(diff_ids)} diff_ids")
    cache.mkdir(parents=True, exist_ok=True, mode=0o755)
    tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{image.digest[7:23]}-", dir=cache))
    try:
        tmp.chmod(0o755)
        root = tmp / "rootfs"
        root.mkdir(mode=0o755)
        unpacker = Unpacker(root, limits)
        try:
            _apply_layers(store, image, unpacker, tmp, limits, diff_ids)
            stats = unpacker.finish()
        finally:
            unpacker.close()
        _mount_points(root)
        root.chmod(0o755)
        packages = [p for p in image.annotations.get(ANN_PACKAGES, "").splitlines() if p]
        info = {"imageDigest": image.digest, "layers": len(image.layers),
                "architecture": image.config.get("architecture"), "os": image.config.get("os"),
                **stats.to_json(), "packages": packages, "unpackedAt": int(time.time())}
        (tmp / INFO).write_text(json.dumps(info, indent=1), "utf-8")
        entry = _entry(cache, image.digest)
        try:
            os.rename(tmp, entry)
        except OSError:
            if _cached(cache, image.digest) is None:
                raise
            remove_tree(tmp)  # another run unpacked the same image meanwhile: use theirs
        return info
    except BaseException:
        with contextlib.suppress(OSError):
            remove_tree(tmp)
        raise


def prepare(ref_or_digest: str, store_options: StoreOptions | None = None, *, cache_dir: Path | None = None,
            limits: Limits | None = None) -> Prepared:
    """The unpacked root of an image: from the cache when this manifest digest was unpacked before.

    ``ref_or_digest`` is ``REF@sha256:…``, ``REF:tag`` (resolved to its digest first) or a bare
    ``sha256:…`` (only from the cache: there is nowhere to pull it from).
    """
    t0 = time.monotonic()
    cache = cache_dir or default_cache_dir()
    if ref_or_digest.startswith("sha256:"):
        digest = check_digest(ref_or_digest, "image digest")
        info = _cached(cache, digest)
        if info is None:
            raise UsageError(f"image {digest} is not in the cache {cache}; give a reference to pull it from")
        return Prepared(_entry(cache, digest) / "rootfs", digest, digest, True, info, time.monotonic() - t0)
    ref = parse_reference(ref_or_digest)
    if ref.digest:  # a pinned image already unpacked needs no registry at all
        info = _cached(cache, ref.digest)
        if info is not None:
            return Prepared(_entry(cache, ref.digest) / "rootfs", ref.digest, str(ref), True, info,
                            time.monotonic() - t0)
    with open_store(ref, store_options) as store:
        image = load_manifest(store, ref.target)
        info = _cached(cache, image.digest)
        hit = info is not None
        if info is None:
            info = unpack_image(store, image, cache, limits=limits)
    if not hit:
        prune(cache, DEFAULT_CACHE_MAX, keep=image.digest)
    return Prepared(_entry(cache, image.digest) / "rootfs", image.digest, str(ref.with_digest(image.digest)), hit,
                    info, time.monotonic() - t0)


def prepare_image(ref_or_digest: str, store_options: StoreOptions | None = None) -> tuple[Path, str]:
    """``(rootfs, image manifest digest)``: the hook exam certification (promotion) calls."""
    p = prepare(ref_or_digest, store_options)
    return p.root, p.image_digest


def _entry_size(entry: Path) -> int:
    try:
        return int(loads((entry / INFO).read_bytes(), INFO).get("bytes", 0))
    except (OSError, ValueError, AttributeError):
        return 0


def prune(cache: Path | None = None, max_bytes: int = 0, *, keep: str | None = None,
          stale_tmp_seconds: float = 3600.0) -> dict[str, Any]:
    """Remove least recently used entries until the cache holds at most ``max_bytes`` (0: remove all).

    Leftover ``.tmp-*`` directories older than ``stale_tmp_seconds`` (a killed unpack) go too.
    """
    cache = cache or default_cache_dir()
    removed: list[str] = []
    if not cache.is_dir():
        return {"cache": str(cache), "removed": removed, "kept": 0, "bytes": 0}
    now = time.time()
    entries = []
    for p in cache.iterdir():
        if p.name.startswith(".tmp-"):
            if now - p.stat().st_mtime > stale_tmp_seconds:
                remove_tree(p)
            continue
        if len(p.name) == 64 and p.is_dir():
            try:
                used = (p / INFO).stat().st_mtime
            except OSError:
                used = 0.0
            entries.append((used, p))
    entries.sort()
    total = sum(_entry_size(p) for _, p in entries)
    for _, p in entries:
        if total <= max_bytes and max_bytes > 0:
            break
        if keep and p.name == keep.split(":", 1)[-1]:
            continue
        total -= _entry_size(p)
        remove_tree(p)
        removed.append("sha256:" + p.name)
    return {"cache": str(cache), "removed": removed, "kept": len(entries) - len(removed), "bytes": total}


def cache_listing(cache: Path | None = None) -> list[dict[str, Any]]:
    """Cached images by digest with their size on disk, for ``env cache``; entries lacking an info file are skipped."""
    cache = cache or default_cache_dir()
    out = []
    if cache.is_dir():
        for p in sorted(cache.iterdir()):
            if len(p.name) == 64 and (p / INFO).is_file():
                out.append({"imageDigest": "sha256:" + p.name, "bytes": _entry_size(p)})
    return out


__all__ = ["Prepared", "cache_listing", "default_cache_dir", "prepare", "prepare_image", "prune"]
