"""Build an environment image: a minimal Debian root (mmdebstrap) as a plain, reproducible OCI image.

Pipeline (nothing large is held in memory; the layer streams through two hashers)::

    mmdebstrap (SOURCE_DATE_EPOCH) -> rootfs.tar -> repack: sorted entries, clamped mtimes, numeric owners,
    no ./dev, no pax/xattr records -> sha256 (diff_id) -> gzip (mtime 0, no name) -> sha256 (layer digest)

The image is an ordinary OCI image manifest (``application/vnd.oci.image.manifest.v1+json``, no
``artifactType``): one ``tar+gzip`` layer (three with a Python environment: :mod:`acx_oci.envimage.layers`) and
an image config with ``rootfs.diff_ids``, so ``skopeo inspect`` and ``skopeo copy`` treat it like any container
image. The installed-package list (dpkg status, ``name=version``
lines) travels as the manifest annotation :data:`ANN_PACKAGES`; the build writes ``/etc/acx-oci-image`` (suite
and requested packages), a file only such images contain.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from acx_oci.crypto import StreamDigest
from acx_oci.errors import UsageError
from acx_oci.oci import MEDIA_MANIFEST, Descriptor, Store, StoreOptions, dump, open_store, parse_reference

MEDIA_LAYER_GZIP = "application/vnd.oci.image.layer.v1.tar+gzip"
MEDIA_CONFIG = "application/vnd.oci.image.config.v1+json"
ANN_PACKAGES = "dev.acx.image.packages"
ANN_SUITE = "dev.acx.image.suite"
ANN_INCLUDE = "dev.acx.image.include"
ANN_CREATED = "org.opencontainers.image.created"
MARKER = "etc/acx-oci-image"
#: Used when neither ``--epoch`` nor ``$SOURCE_DATE_EPOCH`` is given: 2024-01-01T00:00:00Z.
DEFAULT_EPOCH = 1704067200
GZIP_LEVEL = 6
CHUNK = 1024 * 1024
MMDEBSTRAP_TIMEOUT = 1800.0
_ARCH = {"amd64": "amd64", "arm64": "arm64", "i386": "386", "armhf": "arm", "armel": "arm", "ppc64el": "ppc64le",
         "s390x": "s390x", "riscv64": "riscv64", "mips64el": "mips64le"}


@dataclass
class BuiltImage:
    """What a build pushed (or would push): digests, sizes, the package list and timings; the ``layer*`` fields
    describe the Debian root's layer (an image with a Python environment has two more, :attr:`layers`)."""

    reference: str
    manifest_digest: str
    config_digest: str
    layer_digest: str
    layer_size: int
    diff_id: str
    uncompressed_size: int
    entries: int
    packages: list[str]
    suite: str
    include: list[str]
    epoch: int
    seconds: dict[str, float] = field(default_factory=dict)
    #: With ``--spec``: what the Python environment left out (the package under test), its date and notes.
    python_env: dict[str, Any] = field(default_factory=dict)
    #: Every layer, the Debian root's first (the ``layer*`` fields above describe it): digest, size, diffId.
    layers: list[dict[str, Any]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The ``env build --json`` document: digests, sizes and timings (the package count, not the list)."""
        extra = {"pythonEnvironment": self.python_env} if self.python_env else {}
        return {**extra, "reference": self.reference, "imageDigest": self.manifest_digest,
                "configDigest": self.config_digest, "layerDigest": self.layer_digest, "layerSize": self.layer_size,
                "diffId": self.diff_id,
                "uncompressedSize": self.uncompressed_size, "entries": self.entries, "suite": self.suite,
                "include": self.include, "sourceDateEpoch": self.epoch, "packages": len(self.packages),
                "layers": self.layers, "seconds": self.seconds}


def resolve_epoch(epoch: int | None) -> int:
    """``epoch``, else ``$SOURCE_DATE_EPOCH``, else :data:`DEFAULT_EPOCH`."""
    if epoch is not None:
        return int(epoch)
    env = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    if env:
        if not env.isdigit():
            raise UsageError(f"SOURCE_DATE_EPOCH={env!r}: expected a number of seconds")
        return int(env)
    return DEFAULT_EPOCH


def oci_arch() -> str:
    """The host's Debian architecture in OCI spelling (what mmdebstrap builds by default)."""
    try:
        out = subprocess.run(["dpkg", "--print-architecture"], capture_output=True, timeout=10, check=True)
        deb = out.stdout.decode().strip()
    except (OSError, subprocess.SubprocessError):
        deb = "amd64"
    return _ARCH.get(deb, deb)


#: Debian byte-compiles Python's modules at install with hash randomisation on, so a frozenset constant's order
#: (and the .pyc) differed from build to build (bullseye's 3.9 stdlib: ~25 files). Every .pyc of the root is
#: compiled again from its own source with PYTHONHASHSEED=0, in one process, in sorted order: the same bytes
#: each build. The header holds the source's hash, not its mtime: the layer clamps mtimes, so a timestamp .pyc
#: read as stale and every grade compiled 73 stdlib modules again (0.47 s of pytest's 0.14 s start on the
#: attrs image). A root without python3 is left as it is.
PYC_RECOMPILE = (
    'import importlib.util as u, pathlib as p, py_compile as c\n'
    'for f in sorted(p.Path("/usr").rglob("*.pyc")):\n'
    '    try:\n'
    '        s = u.source_from_cache(str(f))\n'
    '    except ValueError:\n'
    '        continue\n'
    '    o = 1 if ".opt-1." in f.name else 2 if ".opt-2." in f.name else -1\n'
    '    if p.Path(s).is_file():\n'
    '        c.compile(s, cfile=str(f), doraise=False, optimize=o,'
    ' invalidation_mode=c.PycInvalidationMode.CHECKED_HASH)\n')
PYC_HOOK = ('if [ -x "$1/usr/bin/python3" ]; then chroot "$1" /usr/bin/env -i PYTHONHASHSEED=0 /usr/bin/python3 -c \''
            + PYC_RECOMPILE + '\'; fi')


def mmdebstrap_argv(suite: str, include: Sequence[str], out_tar: Path, *, mirror: str | None = None,
                    variant: str = "apt") -> list[str]:
    """The mmdebstrap command: no ./dev, the image marker written, host-copied resolv.conf/hostname removed."""
    exe = shutil.which("mmdebstrap")
    if exe is None:
        raise UsageError("mmdebstrap not found; install Debian 'mmdebstrap' (apt-get install mmdebstrap)")
    marker = dump({"suite": suite, "include": sorted(include)}).decode()
    hook = (f"printf '%s\\n' '{marker}' > \"$1/{MARKER}\"; "
            "rm -f \"$1/etc/resolv.conf\" \"$1/etc/hostname\"")
    argv = [exe, f"--variant={variant}", "--format=tar", "--skip=output/dev", "--customize-hook=" + hook,
            "--customize-hook=" + PYC_HOOK]
    if include:
        argv.append("--include=" + ",".join(include))
    argv += [suite, str(out_tar)]
    if mirror:
        argv.append(mirror)
    return argv


def run_mmdebstrap(suite: str, include: Sequence[str], out_tar: Path, *, epoch: int, mirror: str | None = None,
                   timeout: float = MMDEBSTRAP_TIMEOUT) -> None:
    """Build the root file system tar with ``SOURCE_DATE_EPOCH=epoch`` (mmdebstrap is then reproducible)."""
    for name in include:
        if not name or name.startswith("-") or any(c in name for c in " ,'\"$`\\;"):
            raise UsageError(f"--include: {name!r} is not a package name")
    argv = mmdebstrap_argv(suite, include, out_tar, mirror=mirror)
    env = {**os.environ, "SOURCE_DATE_EPOCH": str(epoch), "LC_ALL": "C.UTF-8"}
    try:
        res = subprocess.run(argv, capture_output=True, timeout=timeout, env=env, check=False)
    except subprocess.TimeoutExpired:
        raise UsageError(f"mmdebstrap did not finish within {timeout:g} s") from None
    if res.returncode != 0:
        tail = res.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise UsageError(f"mmdebstrap failed (exit {res.returncode}): {' | '.join(tail)}")


class _Tee(StreamDigest):
    """A write-only stream that hashes and counts what passes through to ``out``."""

    def __init__(self, out: IO[bytes]) -> None:
        super().__init__()
        self.out = out

    def write(self, data: bytes) -> int:
        self.update(data)
        self.out.write(data)
        return len(data)

    def flush(self) -> None:
        self.out.flush()


@dataclass(frozen=True)
class Layer:
    """The one reproducible layer a build writes: its gzip digest and size, its diff id and what it holds."""

    path: Path
    digest: str
    size: int
    diff_id: str
    uncompressed_size: int
    entries: int
    packages: list[str]


def _norm(name: str) -> str:
    while name.startswith("./"):
        name = name[2:]
    return name.rstrip("/")


def parse_dpkg_status(text: str) -> list[str]:
    """``name=version`` for every package dpkg says is installed, sorted."""
    out = []
    for para in text.split("\n\n"):
        fields: dict[str, str] = {}
        for line in para.splitlines():
            if line and not line[0].isspace() and ":" in line:
                k, v = line.split(":", 1)
                fields[k] = v.strip()
        if fields.get("Package") and fields.get("Status", "").endswith(" installed"):
            out.append(f"{fields['Package']}={fields.get('Version', '')}")
    return sorted(out)


def repack(src_tar: Path, out_gz: Path, *, epoch: int) -> Layer:
    """Re-pack a root file system tar reproducibly into one gzip layer; see the module docstring.

    Entries are sorted by path; in each hard-link group the name that sorts first carries the data and the
    others link to it (a tar link must follow its target). Owners stay numeric (names dropped), modes stay as they
    are (set-uid included: the image is faithful; unpacking strips them), mtimes are clamped to ``epoch``.
    """
    with tarfile.open(src_tar, "r:") as tf:
        members: dict[str, tarfile.TarInfo] = {}
        for m in tf.getmembers():
            name = _norm(m.name)
            if not name or name == "." or name == "dev" or name.startswith("dev/"):
                continue
            members[name] = m
        order = sorted(members)
        # Hard-link groups: the first name (in output order) holds the data, the rest link to it.
        group_of: dict[str, str] = {}
        for name in order:
            if members[name].islnk():
                target, hops = _norm(members[name].linkname), 0
                while target in members and members[target].islnk() and hops < 64:
                    target, hops = _norm(members[target].linkname), hops + 1
                group_of[name] = target
        roots = {r for r in group_of.values() if r in members and members[r].isreg()}
        holder: dict[str, str] = {}
        for name in order:
            root = group_of.get(name, name)
            if root in roots:
                holder.setdefault(root, name)
        packages: list[str] = []
        with out_gz.open("wb") as raw:
            outer = _Tee(raw)
            gz = gzip.GzipFile(filename="", mode="wb", compresslevel=GZIP_LEVEL, fileobj=outer,
                               mtime=0)
            inner = _Tee(gz)  # type: ignore[arg-type]
            with tarfile.open(fileobj=inner, mode="w|", format=tarfile.PAX_FORMAT) as out:  # type: ignore[call-overload]
                for name in order:
                    m = members[name]
                    root = group_of.get(name, name)
                    first = holder.get(root)
                    if first is not None:
                        m = members[root]  # every name of a link group shares the root's inode
                    info = tarfile.TarInfo(name)
                    info.uid, info.gid, info.uname, info.gname = m.uid, m.gid, "", ""
                    info.mode = m.mode
                    info.mtime = min(int(m.mtime), epoch)
                    if first is not None and first != name:
                        info.type, info.linkname = tarfile.LNKTYPE, first
                        out.addfile(info)
                        continue
                    if m.islnk():  # a link to something not in the tar: kept (the unpacker refuses it)
                        info.type, info.linkname = tarfile.LNKTYPE, _norm(m.linkname)
                        out.addfile(info)
                        continue
                    info.type = m.type if m.type != tarfile.AREGTYPE else tarfile.REGTYPE
                    info.linkname = m.linkname if m.issym() else ""
                    info.devmajor, info.devminor = m.devmajor, m.devminor
                    if m.isreg():
                        info.size = m.size
                        fh = tf.extractfile(m)
                        assert fh is not None
                        if name == "var/lib/dpkg/status":
                            body = fh.read()
                            packages = parse_dpkg_status(body.decode("utf-8", "replace"))
                            out.addfile(info, io.BytesIO(body))
                        else:
                            out.addfile(info, fh)
                    else:
                        out.addfile(info)
            gz.close()
    return Layer(out_gz, outer.digest, outer.size, inner.digest, inner.size, len(order), packages)


def image_config(layers: Sequence[Layer], *, epoch: int, suite: str, include: Sequence[str],
                 created_by: Sequence[str] = ()) -> bytes:
    """The OCI image config: architecture/os, ``rootfs.diff_ids`` (one per layer), a fixed ``created`` and
    history (``created_by``: one line per layer; default: the Debian root's)."""
    created = datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    said = list(created_by) or [f"mmdebstrap --variant=apt --include={','.join(include)} --skip=output/dev {suite} "
                                "(acx-oci env build)"]
    doc = {
        "architecture": oci_arch(), "os": "linux", "created": created,
        "config": {"Env": ["PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"], "Cmd": ["/bin/sh"]},
        "rootfs": {"type": "layers", "diff_ids": [layer.diff_id for layer in layers]},
        "history": [{"created": created, "created_by": line} for line in said],
    }
    return dump(doc)


def image_manifest(config: Descriptor, layers: Sequence[Descriptor], annotations: dict[str, str]) -> bytes:
    """A plain OCI image manifest (no ``artifactType``): what any container tool expects."""
    return dump({"schemaVersion": 2, "mediaType": MEDIA_MANIFEST, "config": config.to_json(),
                 "layers": [layer.to_json() for layer in layers], "annotations": annotations})


def push_image(store: Store, layers: Sequence[Layer], config: bytes, annotations: dict[str, str],
               tag: str | None) -> tuple[str, str]:
    """Push the layers (streamed from disk), config and manifest; returns (manifest digest, config digest)."""
    descs = []
    for layer in layers:
        desc = store.push_blob_file(layer.path, MEDIA_LAYER_GZIP)
        if desc.digest != layer.digest:
            raise UsageError(f"layer changed while pushing: {layer.digest} became {desc.digest}")
        descs.append(desc)
    config_desc = store.push_blob(config, MEDIA_CONFIG)
    raw = image_manifest(config_desc, descs, annotations)
    desc = store.push_manifest(raw, MEDIA_MANIFEST, tag)
    return desc.digest, config_desc.digest


def image_from_tar(src_tar: Path, ref: str, *, suite: str, include: Sequence[str], epoch: int,
                   store_options: StoreOptions | None = None, workdir: Path | None = None) -> BuiltImage:
    """Repack an mmdebstrap tar and push it to ``ref`` (registry or ``oci:`` layout) as a one-layer image."""
    t0 = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="acx-envimg-", dir=workdir) as tmp:
        layer = repack(src_tar, Path(tmp) / "layer.tar.gz", epoch=epoch)
        built = image_from_layers([layer], ref, suite=suite, include=include, epoch=epoch,
                                  store_options=store_options)
    built.seconds = {"repack": round(time.monotonic() - t0 - built.seconds["push"], 2), **built.seconds}
    return built


def image_from_layers(layers: Sequence[Layer], ref: str, *, suite: str, include: Sequence[str], epoch: int,
                      store_options: StoreOptions | None = None, annotations: dict[str, str] | None = None,
                      created_by: Sequence[str] = (), also: str | None = None) -> BuiltImage:
    """Push ``layers`` (the first the Debian root, whose package list is annotated) as one image to ``ref``;
    ``annotations`` join the manifest's (the Python environment's, :mod:`acx_oci.envimage.pyenv`); ``also``: a
    second tag (:func:`also_tag`)."""
    reference = parse_reference(ref)
    if reference.digest:
        raise UsageError(f"{ref}: push to a tag or a bare repository, not a digest")
    t1 = time.monotonic()
    base = layers[0]
    config = image_config(layers, epoch=epoch, suite=suite, include=include, created_by=created_by)
    created = datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    notes = {ANN_SUITE: suite, ANN_INCLUDE: ",".join(include), ANN_CREATED: created,
             ANN_PACKAGES: "\n".join(base.packages), **(annotations or {})}
    with open_store(reference, store_options) as store:
        digest, config_digest = push_image(store, layers, config, notes, reference.tag)
    t2 = time.monotonic()
    if also:
        also_tag(ref, also, digest, store_options)
    pinned = str(reference.with_digest(digest)) if not reference.tag else f"{reference}@{digest}"
    return BuiltImage(pinned, digest, config_digest, base.digest, base.size, base.diff_id,
                      base.uncompressed_size, base.entries, base.packages, suite, list(include), epoch,
                      {"push": round(t2 - t1, 2)},
                      layers=[{"digest": x.digest, "size": x.size, "diffId": x.diff_id} for x in layers])


def build_image(ref: str, *, suite: str, include: Sequence[str], epoch: int | None = None,
                mirror: str | None = None, store_options: StoreOptions | None = None,
                workdir: Path | None = None, keep_tar: Path | None = None) -> BuiltImage:
    """mmdebstrap + :func:`image_from_tar`; ``keep_tar`` keeps (or reuses, if present) the raw tar there."""
    sde = resolve_epoch(epoch)
    with tempfile.TemporaryDirectory(prefix="acx-mmdebstrap-", dir=workdir) as tmp:
        tar = keep_tar or Path(tmp) / "rootfs.tar"
        t0 = time.monotonic()
        if keep_tar is None or not keep_tar.exists():
            partial = tar.with_name(tar.name + ".partial")
            try:
                run_mmdebstrap(suite, include, partial, epoch=sde, mirror=mirror)
                os.replace(partial, tar)
            finally:
                with contextlib.suppress(FileNotFoundError):
                    partial.unlink()
        t_build = time.monotonic() - t0
        built = image_from_tar(tar, ref, suite=suite, include=include, epoch=sde, store_options=store_options,
                               workdir=workdir)
    built.seconds = {"mmdebstrap": round(t_build, 2), **built.seconds}
    return built


def also_tag(ref: str, tag: str, digest: str, store_options: StoreOptions | None = None) -> None:
    """Tag ``digest`` as ``tag`` too in ``ref``'s repository (unless ``ref`` is that tag): ``env build REPO:TAG
    --spec`` tags its image ``spec-<digest>``, where ``exam certify --env-store REPO`` looks it up instead of
    building it again."""
    reference = parse_reference(ref)
    if reference.tag != tag:
        with open_store(reference, store_options) as st:
            st.tag(digest, tag)
