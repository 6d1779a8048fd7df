"""``doctor HOST[:PORT]``: what a registry really does, and which referrers mode acx-oci uses there."""

from __future__ import annotations

import click

from acx_oci.cli.common import emit_json, json_option, registry_options
from acx_oci.cli.main import main
from acx_oci.oci import StoreOptions
from acx_oci.services.tools import CAPABILITIES, run_doctor

_LABELS = {
    "referrersApi": "OCI 1.1 Referrers API",
    "referrersFalse200": "referrers endpoint answers 200 with no image index (a false 200)",
    "referrersArtifactType": "referrers listing carries each manifest's own artifactType",
    "artifactTypeFilter": "artifactType filter applied (OCI-Filters-Applied)",
    "ociSubjectHeader": "OCI-Subject header on a manifest PUT with a subject",
    "tagList": "tag listing",
    "tagListLimit": "tag listing honours n (n=1 gives one tag)",
    "tagPagination": "tag listing paginates with Link (n=1)",
    "manifest4MiB": "accepts a 4 MiB manifest",
    "manifestOver4MiB": "accepts a manifest over 4 MiB",
    "manifestDelete": "deletes manifests",
    "authRequired": "asks for credentials (401 on /v2/)",
}


@main.command()
@click.argument("host")
@click.option("--repository", metavar="REPO", help="Scratch repository to probe in (default: acx-doctor/<random>).")
@click.option("--no-size-probe", is_flag=True, help="Skip pushing a 4 MiB manifest (slow links, metered registries).")
@registry_options
@json_option
def doctor(host: str, repository: str | None, no_size_probe: bool, plain_http: bool, insecure: bool, timeout: float,
           as_json: bool) -> None:
    """Probe what the registry HOST[:PORT] really does, and say how acx-oci will use it.

    Pushes tiny artifacts into a scratch repository (acx-doctor/<random>; deleted afterwards
    where the registry allows) and tries: the Referrers API (and a false 200), whether its
    listing carries the real artifactType, the artifactType filter, the OCI-Subject header,
    tag listing and Link pagination, the 4 MiB manifest limit, deletes and the auth scheme.
    Needs push rights (credentials as for every other command). Exit 3 if the registry
    cannot be reached or refuses the pushes.

    \b
    Example:
      acx-oci doctor registry.example
      acx-oci doctor localhost:5000 --json
    """
    report = run_doctor(host, StoreOptions(plain_http=plain_http, insecure=insecure, timeout=timeout),
                        repository=repository, size_probe=not no_size_probe)
    if as_json:
        emit_json(report.to_json())
        return
    mode = ("native Referrers API" if report.mode == "referrers-api"
            else "tag-schema fallback (sha256-<hex> index + acx-att- tags)")
    click.echo(f"{host} (probed in {report.repository})")
    for key in CAPABILITIES:
        value = report.capabilities.get(key)
        mark = "yes" if value else ("n/a" if value is None else "no")
        click.echo(f"  {mark:>3}  {_LABELS[key]}")
    click.echo(f"  auth: {report.auth_scheme}")
    click.echo(f"mode: {mode}")
    for note in report.notes:
        click.echo(f"note: {note}")
