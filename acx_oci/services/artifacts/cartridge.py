"""Cartridges on disk and in a store: the directory form, pushing, loading and writing.

The ROM itself (manifest bytes, signature, status) is :mod:`acx_oci.model.rom`;
this module moves it between a directory and an OCI store, checking every
digest on the way in.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from acx_oci.crypto import Identity, canonical, envelope_payload, sha256_digest
from acx_oci.errors import AcxError, IntegrityError, TamperedError, UsageError, VerificationError
from acx_oci.files import load_yaml_or_json_inside, read_bytes_inside, read_file_tree
from acx_oci.jsonio import loads, parse_json, validate
from acx_oci.model import (
    ANN_ROM,
    MAX_ROM_BYTES,
    MAX_ROM_FILES,
    MAX_ROM_FILES_TOTAL,
    MAX_SAVE_BYTES,
    MEDIA_ROM,
    MEDIA_ROM_FILE,
    MEDIA_SAVE,
    STATUS_TAMPERED,
    CapabilityRecord,
    CartridgeSource,
    SignatureCheck,
    build_rom,
    check_signature,
    record_from_json,
    sign_rom,
    status_display,
)
from acx_oci.model.rom import ANN_ID, ANN_VERSION
from acx_oci.oci import (
    ANNOTATION_TITLE,
    ARTIFACT_CARTRIDGE,
    EMPTY_JSON,
    MEDIA_DSSE,
    Descriptor,
    Manifest,
    Store,
    build_manifest,
)
from acx_oci.services.artifacts.cosign_projection import sign_manifest
from acx_oci.trust import Trust, check_did

# ---------------------------------------------------------------- directory form

def default_skill(cap: CapabilityRecord) -> str:
    """A placeholder SKILL.md for ``cartridge init``; it is signed with the ROM, so the author edits it first."""
    return (
        f"# Skill: {cap.task_type}\n\n"
        f"Stack: {', '.join(cap.stack) or '(none)'}\n"
        f"Domain: {cap.domain or '(any)'}\n\n"
        "Describe here how the agent approaches this task. This file is part of the signed ROM.\n"
    )


def init_directory(
    directory: Path,
    cartridge_id: str,
    version: str,
    capabilities: list[CapabilityRecord],
    controller: str | None = None,
    runtime: dict[str, Any] | None = None,
) -> None:
    """Write ``cartridge.yaml``, ``skills/`` and ``save.json``; refuses a non-empty directory."""
    if directory.exists() and any(directory.iterdir()):
        raise UsageError(f"cartridge init: {directory} exists and is not empty")
    spec: dict[str, Any] = {
        "apiVersion": "acx.dev/cartridge/v1",
        "id": cartridge_id,
        "version": version,
        "capabilities": [c.to_json() for c in capabilities],
        "policy": {
            "verification": {
                "regression": {"heldInSuite": None, "heldOutSuite": None, "acceptIf": "no-regression",
                               "baseline": None}
            }
        },
    }
    if controller:
        check_did(controller, "--controller")
        spec["controller"] = controller
    if runtime is not None:
        spec["runtime"] = runtime
    validate(spec, "cartridge.schema.json", "cartridge")
    (directory / "skills").mkdir(parents=True, exist_ok=True)
    for cap in capabilities:
        skill_dir = directory / "skills" / cap.task_type.replace(":", "_")
        skill_dir.mkdir(parents=True, exist_ok=True)
        (skill_dir / "SKILL.md").write_text(default_skill(cap), "utf-8")
    (directory / "cartridge.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), "utf-8")
    (directory / "save.json").write_text('{\n  "notes": []\n}\n', "utf-8")


def read_directory(directory: Path) -> CartridgeSource:
    """Read and validate a cartridge directory (bounded; symlinks refused)."""
    if not directory.is_dir():
        raise UsageError(f"cartridge: {directory} is not a directory")
    spec = load_yaml_or_json_inside(directory, "cartridge.yaml", "cartridge.yaml")
    if spec is None:
        raise UsageError(f"cartridge.yaml: file not found: {directory / 'cartridge.yaml'}")
    validate(spec, "cartridge.schema.json", f"cartridge.yaml ({directory})")
    caps = tuple(
        record_from_json(c, f"cartridge.yaml capabilities[{i}]") for i, c in enumerate(spec.get("capabilities") or [])
    )
    tree = read_file_tree(directory, "skills", "cartridge skills", max_bytes=MAX_ROM_BYTES * 16,
                          max_files=MAX_ROM_FILES + 1, skip_pycache=False)
    files = [(f"skills/{rel}", data) for rel, data in sorted(tree.items())]
    if len(files) > MAX_ROM_FILES:
        raise UsageError(f"cartridge: {len(files)} files under skills/ (at most {MAX_ROM_FILES})")
    if sum(len(data) for _, data in files) > MAX_ROM_FILES_TOTAL:
        raise UsageError(f"cartridge: files under skills/ exceed {MAX_ROM_FILES_TOTAL} bytes in total")
    save = read_bytes_inside(directory, "save.json", "save.json", MAX_SAVE_BYTES)
    save = b"{}\n" if save is None else save
    parse_json(save, f"save.json ({directory})")
    return CartridgeSource(spec, caps, tuple(files), save)


# ---------------------------------------------------------------- OCI form

@dataclass(frozen=True)
class PushedCartridge:
    """What a push produced: the pinned reference and digests to attest, and who signed the ROM."""

    manifest_digest: str
    rom_digest: str
    reference: str
    controller: str
    signer: str


def push_directory(store: Store, directory: Path, signer: Identity, tag: str | None) -> PushedCartridge:
    """Build ROM + signature from a directory and push the cartridge artifact."""
    source = read_directory(directory)
    controller = source.spec.get("controller") or signer.did
    rom_bytes = build_rom(source, controller)
    rom = loads(rom_bytes, "ROM manifest")
    sig = sign_rom(rom_bytes, rom, signer)
    pushed = push_parts(store, rom_bytes, source.files, sig, source.save, tag)
    sign_manifest(store, pushed.manifest_digest, signer)  # cosign verify --key publisher.pub finds it
    return pushed


def push_parts(
    store: Store,
    rom_bytes: bytes,
    files: tuple[tuple[str, bytes], ...],
    signature: bytes | None,
    save: bytes,
    tag: str | None,
) -> PushedCartridge:
    """Push exact parts (also used by tests to build tampered cartridges)."""
    rom = loads(rom_bytes, "ROM manifest")
    store.push_blob(EMPTY_JSON, "application/vnd.oci.empty.v1+json")
    layers: list[Descriptor] = [store.push_blob(rom_bytes, MEDIA_ROM, {ANNOTATION_TITLE: "rom.json"})]
    for path, data in files:
        layers.append(store.push_blob(data, MEDIA_ROM_FILE, {ANNOTATION_TITLE: path}))
    if signature is not None:
        layers.append(store.push_blob(signature, MEDIA_DSSE, {ANNOTATION_TITLE: "rom.sig.dsse.json"}))
    layers.append(store.push_blob(save, MEDIA_SAVE, {ANNOTATION_TITLE: "save.json"}))
    rom_digest = sha256_digest(rom_bytes)
    raw = build_manifest(
        ARTIFACT_CARTRIDGE,
        layers,
        annotations={ANN_ID: rom["id"], ANN_VERSION: rom["version"], ANN_ROM: rom_digest},
    )
    desc = store.push_manifest(raw, "application/vnd.oci.image.manifest.v1+json", tag)
    signer = ""
    if signature is not None:
        try:
            _, payload = envelope_payload(loads(signature, "ROM signature"))
            signer = str(loads(payload, "ROM signature statement")["predicate"]["signer"])
        except (ValueError, KeyError, TypeError, AcxError):
            signer = ""
    ref = store.reference.with_tag(tag).with_digest(desc.digest) if tag else store.reference.with_digest(desc.digest)
    return PushedCartridge(desc.digest, rom_digest, str(ref), rom["controller"], signer)


@dataclass(frozen=True)
class LoadedCartridge:
    """A cartridge read from a store, every byte digest-checked, signature assessed."""

    manifest: Manifest
    rom_bytes: bytes
    rom: dict[str, Any]
    rom_digest: str
    controller: str
    signature: SignatureCheck
    capabilities: tuple[CapabilityRecord, ...]
    file_layers: tuple[Descriptor, ...]
    save_layer: Descriptor | None
    problems: tuple[str, ...]  # structural problems that make the cartridge tampered

    @property
    def signature_status(self) -> str:
        """The signature's status, except ``tampered`` whenever the cartridge has a structural problem."""
        return STATUS_TAMPERED if self.problems else self.signature.status

    @property
    def status_display(self) -> str:
        """How a status is shown to people (``intact, trusted`` / ``intact, untrusted`` / ``tampered`` ...)."""
        return status_display(self.signature_status)

    @property
    def signer(self) -> str | None:
        """The verified signer, if any (never a claimed one)."""
        return self.signature.signer

    @property
    def id(self) -> str:
        """The ROM's id: a baseline and a credential must be for the same one."""
        return str(self.rom.get("id"))

    @property
    def version(self) -> str:
        """The ROM's version, which a regression baseline must precede."""
        return str(self.rom.get("version"))


def _role_layers(manifest: Manifest, media_type: str) -> list[Descriptor]:
    return [layer for layer in manifest.layers if layer.media_type == media_type]


def load_cartridge(store: Store, target: str, trust: Trust | None) -> LoadedCartridge:
    """Fetch manifest, ROM and signature; check bindings; never trust stored booleans."""
    manifest = store.fetch_manifest(target)
    if manifest.artifact_type != ARTIFACT_CARTRIDGE:
        raise UsageError(
            f"{store.reference}: expected artifactType {ARTIFACT_CARTRIDGE}, found {manifest.artifact_type}"
        )
    roms = _role_layers(manifest, MEDIA_ROM)
    if len(roms) != 1:
        raise UsageError(f"{store.reference}: expected exactly one ROM layer ({MEDIA_ROM}), found {len(roms)}")
    if roms[0].size > MAX_ROM_BYTES:
        raise UsageError(f"{store.reference}: ROM layer is {roms[0].size} bytes (at most {MAX_ROM_BYTES})")
    rom_bytes = store.fetch_blob(roms[0].digest, MAX_ROM_BYTES, size=roms[0].size)
    sigs = _role_layers(manifest, MEDIA_DSSE)
    sig_bytes = store.fetch_blob(sigs[0].digest, 1024 * 1024, size=sigs[0].size) if sigs else None
    # Integrity before content: the signature's digest binding is checked on the raw bytes first, so a
    # ROM edited after signing is reported as tampered even when the edit also broke its schema.
    signature = check_signature(rom_bytes, sig_bytes, trust)
    try:
        rom = parse_json(rom_bytes, "ROM manifest")
        validate(rom, "rom.schema.json", f"ROM manifest of {store.reference}")
        caps = tuple(
            record_from_json(c, f"ROM capabilities[{i}]", stored=True)
            for i, c in enumerate(rom.get("capabilities") or [])
        )
    except AcxError as exc:
        if signature.status == STATUS_TAMPERED:
            raise TamperedError(f"{store.reference}: the ROM is tampered ({signature.reason}); its content is "
                                f"invalid too: {exc}") from None
        raise
    problems: list[str] = []
    if canonical(rom) != rom_bytes:
        problems.append("ROM layer is not RFC 8785 canonical JSON")
    rom_digest = roms[0].digest
    if manifest.annotations.get(ANN_ROM, rom_digest) != rom_digest:
        problems.append("manifest annotation names a different ROM digest")
    file_layers = tuple(_role_layers(manifest, MEDIA_ROM_FILE))
    listed = {(f["path"], f["digest"]) for f in rom["files"]}
    present = {(layer.annotations.get(ANNOTATION_TITLE, ""), layer.digest) for layer in file_layers}
    if listed != present:
        problems.append("ROM file layers do not match the files the ROM lists")
    if len(sigs) > 1:
        problems.append("more than one ROM signature layer")
    saves = _role_layers(manifest, MEDIA_SAVE)
    # A reader never trusts a stored 'verified: true': it is shown as a claim only.
    caps = tuple(CapabilityRecord(c.task_type, c.stack, c.domain, c.score, False, ()) for c in caps)
    return LoadedCartridge(
        manifest=manifest,
        rom_bytes=rom_bytes,
        rom=rom,
        rom_digest=rom_digest,
        controller=str(rom["controller"]),
        signature=signature,
        capabilities=caps,
        file_layers=file_layers,
        save_layer=saves[0] if saves else None,
        problems=tuple(problems),
    )


def safe_relative_path(title: str) -> str:
    """Refuse absolute paths, ``..``, backslashes and anything outside ``skills/``."""
    norm = posixpath.normpath(title)
    if (
        not title
        or title.startswith("/")
        or "\\" in title
        or "\x00" in title
        or norm != title
        or norm.startswith("..")
        or not norm.startswith("skills/")
    ):
        raise UsageError(f"refusing unsafe layer path {title!r} (must be a normalized relative path under skills/)")
    return norm


def write_directory(store: Store, loaded: LoadedCartridge, out: Path) -> list[Path]:
    """Write the cartridge directory form back (files digest-verified by the store)."""
    paths = [safe_relative_path(layer.annotations.get(ANNOTATION_TITLE, "")) for layer in loaded.file_layers]
    dirs = {"/".join(p.split("/")[:i]) for p in paths for i in range(1, p.count("/") + 1)}
    clash = sorted(set(paths) & dirs) or sorted(p for p in set(paths) if paths.count(p) > 1)
    if clash:
        raise UsageError(f"refusing layer paths that clash (a file and a directory, or twice): {clash[0]!r}")
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    spec: dict[str, Any] = {
        "apiVersion": "acx.dev/cartridge/v1",
        "id": loaded.rom["id"],
        "version": loaded.rom["version"],
        "controller": loaded.controller,
        "capabilities": loaded.rom.get("capabilities") or [],
        "policy": loaded.rom.get("policy") or {},
        **({"runtime": loaded.rom["runtime"]} if loaded.rom.get("runtime") is not None else {}),
    }
    (out / "cartridge.yaml").write_text(yaml.safe_dump(spec, sort_keys=False), "utf-8")
    written.append(out / "cartridge.yaml")
    for rel, layer in zip(paths, loaded.file_layers, strict=True):
        dest = out / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        store.fetch_blob_to_file(layer.digest, dest, size=layer.size)
        written.append(dest)
    if loaded.save_layer is not None:
        save = store.fetch_blob(loaded.save_layer.digest, MAX_SAVE_BYTES, size=loaded.save_layer.size)
        (out / "save.json").write_bytes(save)
        written.append(out / "save.json")
    (out / "rom.json").write_bytes(loaded.rom_bytes)
    written.append(out / "rom.json")
    return written


def rom_files(store: Store, loaded: LoadedCartridge) -> dict[str, bytes]:
    """The ROM's files by the paths and digests the signed ROM lists (each download digest-verified).

    This is what a verifier runs: the ROM manifest is the signed truth, layer titles are not consulted.
    """
    if loaded.signature_status == STATUS_TAMPERED:
        raise VerificationError("refusing to materialise a tampered ROM")
    entries = loaded.rom.get("files") or []
    # Each file is capped, but a signed ROM may list 10,000 entries (all one 64 MiB blob): bound the total
    # by the declared sizes (each checked against its bytes below) before fetching anything into memory.
    declared = sum(int(e.get("size") or 0) for e in entries)
    if declared > MAX_ROM_FILES_TOTAL:
        raise UsageError(f"ROM files total {declared} bytes (at most {MAX_ROM_FILES_TOTAL})")
    out: dict[str, bytes] = {}
    for entry in entries:
        rel = safe_relative_path(str(entry["path"]))
        data = store.fetch_blob(str(entry["digest"]), MAX_ROM_BYTES * 16)
        if len(data) != int(entry["size"]):
            raise IntegrityError(f"ROM file {rel}: {len(data)} bytes, the ROM lists {entry['size']}")
        out[rel] = data
    return out
