"""Pulling a cartridge: refuse what must be refused, then write everything or nothing.

Everything goes into a sibling temporary directory that is renamed into place
at the end, so a digest mismatch or a missing blob halfway through leaves
nothing behind, and a requirement that is not met writes nothing at all.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

from acx_oci.errors import IntegrityError, NotFoundError, UsageError, VerificationError
from acx_oci.model import STATUS_TAMPERED, STATUS_UNSIGNED, Resolution
from acx_oci.oci import Store
from acx_oci.services.artifacts import LoadedCartridge, write_directory


def check_output_dir(out: Path) -> None:
    """Refuse a non-empty output directory before anything is downloaded."""
    if out.exists() and any(out.iterdir()):
        raise UsageError(f"pull: output directory {out} is not empty")


def check_pullable(loaded: LoadedCartridge, ref: str, allow_unsigned: bool) -> None:
    """A tampered ROM is never pulled; an unsigned one only when the user says so."""
    if loaded.signature_status == STATUS_TAMPERED:
        raise VerificationError(f"pull: {ref} is tampered: {'; '.join(loaded.problems) or loaded.signature.reason}")
    if loaded.signature_status == STATUS_UNSIGNED and not allow_unsigned:
        raise VerificationError(f"pull: {ref} has no ROM signature (use --allow-unsigned to accept it)")


def write_pull(store: Store, loaded: LoadedCartridge, resolution: Resolution, out: Path) -> list[Path]:
    """Write the cartridge, ``verified-capabilities.json`` and ``credentials/``; atomically; the files written."""
    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}.partial-", dir=out.parent))
    try:
        write_directory(store, loaded, staging)
        (staging / "verified-capabilities.json").write_text(json.dumps(resolution.to_json(), indent=2) + "\n",
                                                            "utf-8")
        relied = [c.best for c in resolution.capabilities if c.best is not None]
        if relied:
            (staging / "credentials").mkdir(exist_ok=True)
        for acc in relied:
            dest = staging / "credentials" / (acc.credential_digest.replace(":", "-") + ".json")
            dest.write_text(json.dumps(acc.credential.to_json(), indent=2) + "\n", "utf-8")
        if out.exists():
            out.rmdir()  # checked empty before anything was downloaded
        staging.rename(out)
    except NotFoundError as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise IntegrityError(f"pull: the cartridge is incomplete in the store ({exc})") from None
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return sorted(p for p in out.rglob("*") if p.is_file())
