"""The Debian root of an environment image: made once per suite (mmdebstrap), kept for a week, unpacked for the
sandbox that installs a venv into it.

mmdebstrap is most of a first build's time, and a harvest meets a new spec at nearly every change of a
repository's dependencies: the root's tar is kept in the image cache (:func:`cached_root`) and its layer beside
it (:mod:`acx_oci.envimage.layers`).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.envimage.build import run_mmdebstrap
from acx_oci.envimage.cache import default_cache_dir
from acx_oci.envimage.unpack import Unpacker
from acx_oci.errors import MachineUnfit, UsageError
from acx_oci.sandbox import staging_dir

#: How long a Debian root made for one spec is reused by the next spec of its suite. A root older than this is
#: made again, so the suite's security updates reach new images within a week.
ROOT_MAX_AGE = 7 * 86400.0


def cached_root(suite: str, include: Sequence[str], epoch: int, mirror: str | None) -> Path:
    """Where the Debian root of these inputs is kept between builds (``ACX_OCI_CACHE_DIR``'s ``debian-roots``),
    made anew when older than :data:`ROOT_MAX_AGE`: the path :class:`DebianRoot` reuses, or builds into
    atomically."""
    key = sha256_digest(canonical({"suite": suite, "include": sorted(include), "epoch": epoch, "mirror": mirror,
                                   "pyc": "checked-hash"}))  # a root kept with timestamp .pyc is not reused
    folder = default_cache_dir() / "debian-roots"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    path = folder / f"{suite}-{key[7:39]}.tar"
    with contextlib.suppress(FileNotFoundError):
        if not path.is_file() or path.is_symlink() or time.time() - path.stat().st_mtime > ROOT_MAX_AGE:
            path.unlink()  # stale, or not a plain file we wrote: made again
    return path


class DebianRoot:
    """The image's Debian root, made (mmdebstrap) and unpacked for the sandbox once, when first needed;
    ``mount``: the directory made in the unpacked root for the venv's bind."""

    def __init__(self, suite: str, work: Path, epoch: int, mirror: str | None, keep_tar: Path | None,
                 include: Sequence[str], on_step: Callable[[str], None], mount: str) -> None:
        self.suite, self.work, self.epoch, self.mirror, self.include = suite, work, epoch, mirror, list(include)
        self.tar = keep_tar or work / "rootfs.tar"
        self.root: Path | None = None
        self.on_step, self.mount = on_step, mount

    def made(self) -> Path:
        """The root's tar, made (mmdebstrap) if it is not there yet."""
        if not self.tar.exists():
            self.on_step(f"Debian root {self.suite} (mmdebstrap)")
            partial = self.tar.with_name(self.tar.name + f".partial{os.getpid()}")
            try:
                run_mmdebstrap(self.suite, self.include, partial, epoch=self.epoch, mirror=self.mirror)
                os.replace(partial, self.tar)
            except UsageError as exc:  # the mirror, the network, the machine's mmdebstrap: never the spec's
                raise MachineUnfit(f"the Debian root: {exc}") from None
            finally:
                partial.unlink(missing_ok=True)
        return self.tar

    def unpacked(self) -> Path:
        """The root unpacked into a scratch directory under ``work`` (once)."""
        if self.root is None:
            self.made()
            self.root = staging_dir("acx-pyenv-root-", self.work)
            unpacker = Unpacker(self.root)
            try:
                with self.tar.open("rb") as fh:
                    unpacker.layer(fh, gzipped=False, where="root file system")
                unpacker.finish()
            finally:
                unpacker.close()
            (self.root / self.mount.lstrip("/")).mkdir(parents=True, exist_ok=True)
        return self.root
