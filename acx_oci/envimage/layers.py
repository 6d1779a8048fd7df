"""An environment image in three layers, each packed once: the Debian root, the locked venv, the spec's report.

A harvest meets a new spec at nearly every change of a repository's dependencies (every fix's date is a spec
of its own), and most of them resolve to a lock seen before. With one layer per image every spec paid for
repacking the whole root (13–18 s of a 31–35 s build) and for installing its lock again. Now:

* the root's layer is packed once per Debian root and kept beside its tar (:func:`root_layer`);
* the venv's layer (``/opt/acx-venv`` with ``acx-lock.txt``) once per lock on that root, kept in the image
  cache's ``env-layers/`` with what its Python reported (:func:`venv_key`, :func:`cached_venv`);
* a spec adds only its report layer (``acx-env.json``: its digest and inputs, what certification records).

Every layer is the same reproducible repack (:func:`acx_oci.envimage.build.repack`), so a build from scratch
(``env build --twice``) and a build from these caches push the same digests. The caches are the user's own
(``ACX_OCI_CACHE_DIR``, mode 0700); a cached layer is checked again by its digest when it is pushed.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import tarfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.envimage.build import Layer, repack

#: What the cache keeps of a layer besides its file (the file's own path is where it is found again).
_FIELDS = ("digest", "size", "diff_id", "uncompressed_size", "entries", "packages")


def _layer_json(layer: Layer, **extra: Any) -> bytes:
    return json.dumps({**{k: getattr(layer, k) for k in _FIELDS}, **extra}, sort_keys=True).encode("utf-8")


def _read(meta: Path, gz: Path) -> tuple[Layer, dict[str, Any]] | None:
    """A kept layer and its notes, or None when either file is missing, a link, or not what we wrote."""
    try:
        if meta.is_symlink() or gz.is_symlink() or not gz.is_file():
            return None
        doc = json.loads(meta.read_bytes())
        layer = Layer(gz, *(doc[k] for k in _FIELDS))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return (layer, doc) if gz.stat().st_size == layer.size else None


def _keep(make: Callable[[Path], Layer], gz: Path, meta: Path, **extra: Any) -> Layer:
    """``make`` the layer into a partial file, then move it and its notes into place (atomic for readers)."""
    partial = gz.with_name(gz.name + f".partial{os.getpid()}")
    try:
        layer = make(partial)
        os.replace(partial, gz)
        tmp = meta.with_name(meta.name + f".partial{os.getpid()}")
        tmp.write_bytes(_layer_json(layer, **extra))
        os.replace(tmp, meta)
    finally:
        partial.unlink(missing_ok=True)
    return Layer(gz, layer.digest, layer.size, layer.diff_id, layer.uncompressed_size, layer.entries,
                 layer.packages)


def root_layer(tar: Path, epoch: int, work: Path, *, keep: bool) -> Layer:
    """The Debian root's layer; ``keep``: packed once and kept beside ``tar`` for as long as that tar is the
    same file (its size and mtime are in the notes: a root made again is packed again)."""
    if not keep:
        return repack(tar, work / "root.tar.gz", epoch=epoch)
    st = tar.stat()
    stamp = {"tarSize": st.st_size, "tarMtimeNs": st.st_mtime_ns, "epoch": epoch}
    gz, meta = tar.with_name(f"{tar.name}.layer-{epoch}.tar.gz"), tar.with_name(f"{tar.name}.layer-{epoch}.json")
    found = _read(meta, gz)
    if found is not None and all(found[1].get(k) == v for k, v in stamp.items()):
        return found[0]
    return _keep(lambda out: repack(tar, out, epoch=epoch), gz, meta, **stamp)


def venv_key(lock: str, installer: str, root: Layer, epoch: int, recipe: int) -> str:
    """What a venv's layer depends on: the lock, pip's own wheel, the root it was installed on, the mtime clamp
    and the builder's recipe."""
    return sha256_digest(canonical({"lock": lock, "installer": installer, "root": root.diff_id, "epoch": epoch,
                                    "recipe": recipe}))


def _venv_paths(cache: Path, key: str) -> tuple[Path, Path]:
    folder = cache / "env-layers"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder / f"venv-{key[7:39]}.tar.gz", folder / f"venv-{key[7:39]}.json"


def cached_venv(cache: Path, key: str) -> tuple[Layer, dict[str, Any]] | None:
    """The venv layer kept for ``key`` and the install report its Python gave, or None."""
    gz, meta = _venv_paths(cache, key)
    found = _read(meta, gz)
    if found is None or found[1].get("key") != key or not isinstance(found[1].get("report"), dict):
        return None
    return found[0], found[1]["report"]


def _owned_by_root(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info


def venv_layer(venv: Path, arcname: str, work: Path, epoch: int, *, cache: Path | None, key: str,
               report: dict[str, Any]) -> Layer:
    """The venv directory as a layer at ``arcname``; kept under ``key`` with its install ``report`` when
    ``cache`` is given (a build from scratch keeps nothing)."""
    tar = work / "venv.tar"
    with tarfile.open(tar, "w", format=tarfile.PAX_FORMAT) as tf:
        tf.add(venv, arcname=arcname, filter=_owned_by_root)

    def make(out: Path) -> Layer:
        return repack(tar, out, epoch=epoch)

    try:
        if cache is None:
            return make(work / "venv.tar.gz")
        gz, meta = _venv_paths(cache, key)
        return _keep(make, gz, meta, key=key, report=report)
    finally:
        with contextlib.suppress(OSError):
            tar.unlink()


def report_layer(path: str, body: bytes, work: Path, epoch: int) -> Layer:
    """One file (the spec's ``acx-env.json``) at ``path`` in a layer of its own, root-owned, mode 0644."""
    tar = work / "report.tar"
    with tarfile.open(tar, "w", format=tarfile.PAX_FORMAT) as tf:
        info = tarfile.TarInfo(path)
        info.size, info.mode, info.mtime = len(body), 0o644, epoch
        tf.addfile(info, io.BytesIO(body))
    return repack(tar, work / "report.tar.gz", epoch=epoch)
