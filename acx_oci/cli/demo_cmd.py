"""``acx-oci demo``: the whole story on an embedded OCI layout (or a registry)."""

from __future__ import annotations

import functools
from pathlib import Path

import click

from acx_oci.cli.common import ca_file_option
from acx_oci.cli.main import main
from acx_oci.errors import UsageError


@main.command()
@click.option("--registry", metavar="HOST:PORT", help="Use this registry instead of an on-disk OCI image layout.")
@click.option("--workdir", type=click.Path(file_okay=False, path_type=Path),
              help="Where keys, cartridges, the layout and the verifier state go (default: a new temp dir).")
@click.option("--plain-http", is_flag=True, help="Use HTTP for --registry (automatic for loopback hosts).")
@click.option("--insecure", is_flag=True, help="Skip TLS verification for --registry.")
@functools.partial(ca_file_option, help="PEM file of CA certificates to trust for --registry (default: "
                   "/etc/docker/certs.d/HOST:PORT/ca.crt when present). With it, a loopback registry is spoken "
                   "to over HTTPS.")
@click.option("--keep", is_flag=True, help="Keep the temporary folder (without --workdir it is removed at the end).")
def demo(registry: str | None, workdir: Path | None, plain_http: bool, insecure: bool, keep: bool) -> None:
    """Earn a level, then try to fake it: the whole story, no server needed.

    Creates keys, the demo benchmark (sealed to an independent verifier), a
    weak and a strong cartridge; attests both (the weak one is refused by the
    sigma gate, the strong one issued and pushed as an OCI referrer); resolves
    the claim to VERIFIED; then shows a self-issued credential, a credential
    copied onto a SAVE-edited cartridge, and a revoked one all rejected.
    Exit 0 when every step behaved as it must, 1 otherwise.

    \b
    Example:
      acx-oci demo
      acx-oci demo --keep
      acx-oci demo --registry 127.0.0.1:5000 --workdir ./demo
    """
    import shutil
    import tempfile

    from acx_oci.oci import StoreOptions
    from acx_oci.services.tools import run_demo

    base = workdir or Path(tempfile.mkdtemp(prefix="acx-demo-"))
    if base.exists() and any(base.iterdir()):
        raise UsageError(f"demo: --workdir {base} is not empty")
    temporary = workdir is None and not keep
    try:
        result = run_demo(base, registry, StoreOptions(plain_http=plain_http, insecure=insecure), say=click.echo)
    finally:
        if temporary:
            shutil.rmtree(base, ignore_errors=True)
    click.echo(f"(files in {base})" if not temporary else "(temporary files removed; --keep keeps them)")
    if not result.ok:
        raise SystemExit(1)
