"""``acx-oci env build|pull|prune``: environment images (pinned root file systems) as plain OCI images."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from acx_oci.cli.common import emit_json, json_option, registry_options
from acx_oci.cli.main import main
from acx_oci.envimage import BuiltImage, build_image, pyenv
from acx_oci.envimage import cache as envcache
from acx_oci.errors import UsageError
from acx_oci.files import load_json_file, read_bytes
from acx_oci.oci import StoreOptions, check_pushable, parse_reference


@main.group("env")
def env_group() -> None:
    """Environment images: the root file system exams and ROMs run in."""


def _options(plain_http: bool, insecure: bool, timeout: float) -> StoreOptions:
    return StoreOptions(plain_http=plain_http, insecure=insecure, timeout=timeout)


@env_group.command("build")
@click.argument("ref")
@click.option("--suite", default="bookworm", show_default=True, help="Debian suite for mmdebstrap.")
@click.option("--include", default="python3,python3-pytest", show_default=True,
              help="Comma-separated packages to install (besides the apt variant's essentials).")
@click.option("--mirror", default=None, help="Debian mirror URL (default: apt's configuration).")
@click.option("--epoch", type=int, default=None,
              help="SOURCE_DATE_EPOCH for mmdebstrap and the mtime clamp (default: $SOURCE_DATE_EPOCH, else "
                   "2024-01-01).")
@click.option("--twice", is_flag=True, help="Build a second time from scratch and report whether the digests match.")
@click.option("--spec", "spec_path", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="An exam's env.json: its Python (which picks the Debian suite) and requirements, installed "
                   "from wheels with pinned hashes into /opt/acx-venv inside the sandbox.")
@click.option("--requirements", "req_path", type=click.Path(exists=True, dir_okay=False, path_type=Path),
              default=None, help="Requirement lines to install into /opt/acx-venv (as --spec, without an exam).")
@click.option("--python", "python", default=None, metavar="X.Y",
              help="With --spec/--requirements: the Python (3.9 bullseye, 3.11 bookworm, 3.13 trixie).")
@click.option("--find-links", "find_links", multiple=True, type=click.Path(exists=True, file_okay=False,
              path_type=Path), help="Also take wheels from this directory (repeatable).")
@click.option("--index-url", default=None, help="The package index (default: PyPI).")
@click.option("--allow-build/--wheels-only", "allow_build", default=True, show_default=True,
              help="A requirement that has only a source distribution is built into a wheel inside the sandbox "
                   "(the image's root, no network, its build requirements wheels only); --wheels-only names and "
                   "refuses it instead.")
@registry_options(deadline=0)
@json_option
def env_build(ref: str, suite: str, include: str, mirror: str | None, epoch: int | None, twice: bool,
              spec_path: Path | None, req_path: Path | None, python: str | None, find_links: tuple[Path, ...],
              index_url: str | None, allow_build: bool, plain_http: bool, insecure: bool, timeout: float,
              as_json: bool) -> None:
    """Build a minimal Debian root with mmdebstrap and push it to REF as a one-layer OCI image.

    \b
    Example:
      acx-oci env build localhost:5000/acme/env:bookworm-py --include python3,python3-pytest --json
      acx-oci env build oci:./images:bookworm-py --twice
      acx-oci env build oci:./images:calc --spec suite/tasks/calc-3f2c9e1/env.json --json

    With --spec or --requirements, Python packages join the image: resolved once on this host to wheels only
    (a package with no wheel is named and refused; no package's code runs here), then installed inside the
    sandbox with --require-hashes into /opt/acx-venv; the package under test (the spec's "package") never is.
    """
    parse_reference(ref)  # a malformed REF is bad input now, not after minutes of mmdebstrap
    packages = [p.strip() for p in include.split(",") if p.strip()]
    opts = _options(plain_http, insecure, timeout)
    spec = _python_spec(spec_path, req_path, python)
    check_pushable(ref, opts)  # an unreachable registry, or one that refuses our push, too

    def once(sde: int | None) -> BuiltImage:
        if spec is not None:  # --twice builds both from scratch: a reused Debian root would prove nothing
            return pyenv.build_env_image(ref, spec, epoch=sde, mirror=mirror, store_options=opts,
                                         find_links=find_links, index_url=index_url, allow_build=allow_build,
                                         root_cache=not twice)
        return build_image(ref, suite=suite, include=packages, epoch=sde, mirror=mirror, store_options=opts)

    first = once(epoch)
    out = first.to_json()
    if spec is not None:
        out["specDigest"] = pyenv.spec_digest(spec)
        out["specTag"] = pyenv.spec_tag(spec)  # also tagged so in REF's repository: certify's --env-store finds it
    if twice:
        second = once(first.epoch)
        out["rebuild"] = second.to_json()
        out["digests"] = [first.manifest_digest, second.manifest_digest]
        out["reproducible"] = first.manifest_digest == second.manifest_digest
    if as_json:
        emit_json(out)
        return
    click.echo(f"pushed {first.reference}")
    click.echo(f"  layer {first.layer_digest} ({first.layer_size} bytes gzip, {first.uncompressed_size} tar, "
               f"{first.entries} entries), {len(first.packages)} packages, SOURCE_DATE_EPOCH={first.epoch}")
    click.echo(f"  seconds: {first.seconds}")
    if spec is not None:
        click.echo(f"  also tagged {out['specTag']} (exam certify --environments --env-store finds it there)")
        env = first.python_env
        left = ", ".join(env.get("leftOut") or []) or "nothing"
        click.echo(f"  left out (the package under test, never installed): {left}"
                   + (f"; the image's pytest imports {env['pytestImports']}: the submission provides it"
                      if env.get("pytestImports") else ""))
        if env.get("resolvedAsOf"):
            click.echo(f"  resolved as the index was on {env['resolvedAsOf']}")
        for note in env.get("notes") or []:
            click.echo(f"  note: {note}")
    if twice:
        click.echo(f"  rebuild {out['digests'][1]}: {'identical' if out['reproducible'] else 'DIFFERENT'}")


def _python_spec(spec_path: Path | None, req_path: Path | None, python: str | None) -> dict[str, Any] | None:
    """The Python environment to install: an exam's env.json, or --requirements/--python; None for neither."""
    if spec_path is not None and req_path is not None:
        raise UsageError("env build: give --spec or --requirements, not both")
    if spec_path is not None:
        doc = load_json_file(spec_path, "environment spec")
        if not isinstance(doc, dict):
            raise UsageError(f"{spec_path}: expected an environment spec object")
        spec = {**doc, "python": python or doc.get("python")}
    elif req_path is not None:
        text = read_bytes(req_path, "requirements", 1 << 20).decode("utf-8", "replace")
        reqs = [ln.split(" #", 1)[0].strip() for ln in text.splitlines()]
        spec = {"python": python, "requirements": [r for r in reqs if r and not r.startswith("#")]}
    elif python is not None:
        raise UsageError("env build: --python goes with --spec or --requirements")
    else:
        return None
    pyenv.build_inputs(spec)  # bad input now, not after a download
    return spec


@env_group.command("pull")
@click.argument("ref")
@click.option("--cache-dir", type=click.Path(path_type=Path), default=None,
              help="Cache directory (default: $ACX_OCI_CACHE_DIR, /var/cache/acx-oci/images for root, "
                   "else ~/.cache/acx-oci/images).")
@registry_options(deadline=600)
@json_option
def env_pull(ref: str, cache_dir: Path | None, plain_http: bool, insecure: bool, timeout: float,
             as_json: bool) -> None:
    """Pull REF by digest and unpack it safely into the cache (a cache hit does nothing).

    Reports the image digest, the root, whether it was a cache hit, and how many device nodes were skipped
    and set-uid/set-gid bits stripped.

    \b
    Example:
      acx-oci env pull localhost:5000/acme/env:bookworm-py --json
    """
    p = envcache.prepare(ref, _options(plain_http, insecure, timeout), cache_dir=cache_dir)
    if as_json:
        emit_json(p.to_json())
        return
    info = p.info
    click.echo(f"{p.image_digest}  {'cache hit' if p.cache_hit else 'unpacked'}  {p.root}")
    click.echo(f"  {info.get('entries')} entries, {info.get('bytes')} bytes, devices skipped "
               f"{info.get('devicesSkipped')}, set-id bits stripped {info.get('setidStripped')}")


@env_group.command("prune")
@click.option("--max-size", type=click.IntRange(min=0), default=0, show_default=True,
              help="Keep at most this many bytes of unpacked images (least recently used go first; 0: all).")
@click.option("--cache-dir", type=click.Path(path_type=Path), default=None, help="Cache directory.")
@json_option
def env_prune(max_size: int, cache_dir: Path | None, as_json: bool) -> None:
    """Remove unpacked images from the cache (and leftovers of interrupted unpacks).

    \b
    Example:
      acx-oci env prune --max-size 10000000000     # keep the most recently used 10 GB
    """
    res = envcache.prune(cache_dir, max_size)
    if as_json:
        emit_json(res)
        return
    click.echo(f"{res['cache']}: removed {len(res['removed'])}, kept {res['kept']} ({res['bytes']} bytes)")
