"""Hand-made image layers for the unpacker's tests: tar entries in an ``oci:`` layout, nothing else."""

from __future__ import annotations

import gzip
import hashlib
import io
import tarfile
from pathlib import Path
from typing import Any

from acx_oci.envimage.build import MEDIA_CONFIG, MEDIA_LAYER_GZIP
from acx_oci.oci import MEDIA_MANIFEST, dump, open_store


def tar_layer(entries: list[tuple[Any, ...]]) -> bytes:
    """(name, kind, arg[, mode[, mtime]]): kind file (bytes), dir, sym (target), link (target), chr, fifo,
    setuid (bytes), sparse (the size a GNU sparse entry claims, with no data)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tf:
        for name, kind, arg, *opts in entries:
            info = tarfile.TarInfo(name)
            info.mtime = opts[1] if len(opts) > 1 else 1700000000
            if kind in ("file", "setuid"):
                info.size = len(arg)
                info.mode = 0o4755 if kind == "setuid" else (opts[0] if opts else 0o644)
                tf.addfile(info, io.BytesIO(arg))
                continue
            if kind == "dir":
                info.type, info.mode = tarfile.DIRTYPE, opts[0] if opts else 0o755
            elif kind == "sym":
                info.type, info.linkname = tarfile.SYMTYPE, arg
            elif kind == "link":
                info.type, info.linkname = tarfile.LNKTYPE, arg
            elif kind == "chr":
                info.type, info.devmajor, info.devminor, info.mode = tarfile.CHRTYPE, 1, 3, 0o666
            elif kind == "fifo":
                info.type = tarfile.FIFOTYPE
            elif kind == "sparse":  # PAX GNU sparse 0.1: the map says no data, the real size is ``arg``
                info.pax_headers = {"GNU.sparse.size": str(arg), "GNU.sparse.map": "0,0",
                                    "GNU.sparse.major": "0", "GNU.sparse.minor": "1", "GNU.sparse.name": name}
            tf.addfile(info)
    return buf.getvalue()


def push_layers(layout: Path, tag: str, layers: list[bytes]) -> str:
    """An OCI image of gzip ``layers`` (config with their diff_ids) in ``layout``; returns REF@digest."""
    store = open_store(f"oci:{layout}")
    descs = [store.push_blob(gzip.compress(t, mtime=0, compresslevel=1), MEDIA_LAYER_GZIP) for t in layers]
    diff_ids = ["sha256:" + hashlib.sha256(t).hexdigest() for t in layers]
    config = dump({"architecture": "amd64", "os": "linux", "rootfs": {"type": "layers", "diff_ids": diff_ids}})
    cdesc = store.push_blob(config, MEDIA_CONFIG)
    raw = dump({"schemaVersion": 2, "mediaType": MEDIA_MANIFEST, "config": cdesc.to_json(),
                "layers": [d.to_json() for d in descs]})
    digest = store.push_manifest(raw, MEDIA_MANIFEST, tag).digest
    return f"oci:{layout}:{tag}@{digest}"
