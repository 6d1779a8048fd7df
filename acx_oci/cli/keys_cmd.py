"""``acx-oci keygen``."""

from __future__ import annotations

import os
from pathlib import Path

import click
from cryptography.hazmat.primitives import serialization

from acx_oci.cli.common import emit_json, json_option
from acx_oci.cli.main import main
from acx_oci.crypto import generate_identity
from acx_oci.errors import UsageError
from acx_oci.trust import check_did, load_identity, write_identity


@main.command()
@click.argument("prefix")
@click.option("--did", "did_web", metavar="did:web:HOST", help="Publish under a did:web instead of did:key.")
@json_option
def keygen(prefix: str, did_web: str | None, as_json: bool) -> None:
    """Create an Ed25519 identity: PREFIX.key (PKCS#8 PEM, 0600) and PREFIX.did.json.

    The DID document lists the Ed25519 key (assertionMethod) and the X25519 key
    derived from it (keyAgreement, used to seal benchmark slices to you).
    Prints the DID.

    \b
    Example:
      acx-oci keygen keys/publisher
      acx-oci keygen keys/verifier --did did:web:verifier.example.com
    """
    if did_web is not None and (not did_web.startswith("did:web:") or not check_did(did_web, "--did")):
        raise UsageError(f"--did: expected did:web:HOST[:PATH...], found {did_web!r}")
    if not prefix or prefix.endswith(("/", os.sep)) or Path(prefix).is_dir() or Path(prefix).name in (".", ".."):
        raise UsageError(f"keygen: PREFIX must name a file prefix (e.g. keys/publisher), found {prefix!r}")
    ident = generate_identity(did_web)
    key_path, doc_path = write_identity(prefix, ident)
    if as_json:
        emit_json({"did": ident.did, "verificationMethod": ident.verification_method,
                   "key": str(key_path), "didDocument": str(doc_path)})
    else:
        click.echo(ident.did)


@main.group()
def keys() -> None:
    """Key formats other tools read (cosign, Kyverno, Ratify)."""


@keys.command("export-pem")
@click.argument("key", type=click.Path(dir_okay=False))
@click.option("-o", "--output", "output", type=click.Path(dir_okay=False), default="-", show_default=True,
              help="Where to write the PEM public key ('-': stdout).")
def export_pem(key: str, output: str) -> None:
    """Write KEY's public key as PEM (PKIX SubjectPublicKeyInfo, Ed25519).

    This is the file ``cosign verify --key`` and ``cosign verify-attestation
    --key`` take: the verifier's for levels, the publisher's for cartridges.
    cosign 3 also needs a trusted root: with no transparency log, the empty
    one below (and --allow-http-registry for a plain-HTTP registry).

    \b
    Example:
      acx-oci keys export-pem keys/verifier.key -o verifier.pub
      echo '{"mediaType":"application/vnd.dev.sigstore.trustedroot+json;version=0.1"}' > root.json
      # cosign 3
      cosign verify-attestation --key verifier.pub --type https://acx.dev/attestation/level/v1 \\
        --trusted-root root.json --insecure-ignore-tlog --allow-http-registry REF
      # cosign 2.5
      cosign verify-attestation --key verifier.pub --insecure-ignore-tlog \\
        --type https://acx.dev/attestation/level/v1 REF
    """
    pem = load_identity(key).private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    if output == "-":
        click.echo(pem.decode("ascii"), nl=False)
        return
    try:
        Path(output).write_bytes(pem)
    except OSError as exc:
        raise UsageError(f"keys export-pem: cannot write {output}: {exc.strerror}") from None
