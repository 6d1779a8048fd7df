"""``log verify|watch|export``: a monitor's and a mirror's view of a verifier's transparency log."""

from __future__ import annotations

from pathlib import Path

import click

from acx_oci.cli.common import emit_json, json_option, registry_options, store_for
from acx_oci.cli.main import main
from acx_oci.files import read_bytes
from acx_oci.services.artifacts import LogReader
from acx_oci.services.consumer import LogReport, export_log, verify_log
from acx_oci.tlog import Cosigner, Verifier, cosigner_from_vkey, verifier_from_vkey


def _vkey(value: str) -> str:
    """A vkey given inline, or the first line of a file that holds one."""
    path = Path(value)
    if "+" not in value and path.is_file():
        return read_bytes(path, "verifier key file", 4096).decode("utf-8", errors="replace").strip().splitlines()[0]
    return value


def _key(value: str | None) -> Verifier | None:
    return verifier_from_vkey(_vkey(value)) if value else None


def _witnesses(values: tuple[str, ...]) -> list[Cosigner]:
    return [cosigner_from_vkey(_vkey(v)) for v in values]


def _render(report: LogReport, as_json: bool, cartridge: str | None) -> None:
    doc = report.to_json(cartridge)
    if as_json:
        emit_json(doc)
        return
    cp = report.checkpoint
    pinned = "" if report.pinned else " (key NOT pinned: the log's own advertised key; pass --key)"
    click.echo(f"log {cp.origin}: {cp.size} entries, root {doc['root']}, every tile checked{pinned}")
    if report.witnesses:
        click.echo(f"cosigned by: {', '.join(report.witnesses)}")
    if report.since is not None:
        click.echo(f"consistent with the saved checkpoint of size {report.since}")
    shown = doc["entries"]
    if cartridge is not None:
        click.echo(f"{len(shown)} entries for cartridge {cartridge}")
    for e in shown:
        what = e.get("cartridgeId") or e.get("url") or e.get("newKey", "")
        detail = e.get("verdict", "")
        if "level" in e:
            detail += f" level {e['level']}"
        click.echo(f"  {e['index']:>8}  {e['time']}  {e['kind']:<12} {what} {detail}".rstrip())


def _verify_options(f: click.decorators.FC) -> click.decorators.FC:
    f = click.option("--quorum", type=click.IntRange(min=0), default=None,
                     help="Witness cosignatures required (default: all --witness keys).")(f)
    f = click.option("--witness", "witness", multiple=True, metavar="VKEY",
                     help="A witness's cosignature/v1 key (name+hash+base64, or a file holding it); repeatable.")(f)
    f = click.option("--key", metavar="VKEY",
                     help="The log's note verifier key (name+hash+base64, or a file holding it). Without it "
                          "the key the log advertises is used, and the output says the key was not pinned.")(f)
    return f


def _run(log: str, key: str | None, witness: tuple[str, ...], quorum: int | None, since: Path | None,
         save: Path | None, plain_http: bool, insecure: bool, timeout: float) -> LogReport:
    reader = LogReader(store_for(log, plain_http, insecure, timeout))
    first_run = since is not None and save is not None and not since.exists() and since.resolve() == save.resolve()
    if first_run:  # the cron line's first run: nothing saved yet to compare with; this run saves the first one
        click.echo(f"first run: no saved checkpoint at {since} yet; this one is saved there for the next --since",
                   err=True)
    saved = read_bytes(since, "saved checkpoint", 1 << 20) if since and not first_run else None
    cosigners = _witnesses(witness)
    report = verify_log(reader, _key(key), since=saved, witnesses=cosigners,
                        quorum=len(cosigners) if quorum is None else quorum)
    if save is not None:
        tmp = save.with_name(save.name + ".tmp")
        tmp.write_bytes(reader.head().note)
        tmp.replace(save)
    return report


@main.group("log")
def log_group() -> None:
    """Check, watch and mirror a verifier's transparency log (C2SP tlog-tiles in an OCI repository).

    \b
    Every attempt, status-list publication and key rotation a verifier makes is an entry of its
    log; each checkpoint is signed by the verifier and cosigned by witnesses. Anyone with read
    access to the repository can check that nothing was rewritten or hidden.
    """


@log_group.command("verify")
@click.argument("log")
@_verify_options
@click.option("--since", type=click.Path(dir_okay=False, path_type=Path), metavar="CHECKPOINT_FILE",
              help="A checkpoint saved earlier (--save): the log must extend it (else log_inconsistent). "
                   "Missing and the same file as --save: a first run, nothing to compare yet.")
@click.option("--save", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Save the checked checkpoint here, for the next --since.")
@click.option("--cartridge", metavar="ID", help="List only the entries of this cartridge id.")
@json_option
@registry_options(deadline=0)
def log_verify(log: str, key: str | None, witness: tuple[str, ...], quorum: int | None, since: Path | None,
               save: Path | None, cartridge: str | None, as_json: bool, plain_http: bool, insecure: bool,
               timeout: float) -> None:
    """Download and check every tile of LOG, its checkpoint's signatures and consistency; list its entries.

    \b
    Checks: the checkpoint is signed by the log key (--key) and cosigned by the witnesses
    (--witness, --quorum); every hash tile is the root of the tiles below it, every entry hashes
    to its level-0 hash, the tree's root is the checkpoint's; with --since, the log extends the
    saved checkpoint (a fork, a shrink or a rewind: log_inconsistent). Exit 1 when any fails.

    \b
    Example (a monitor run from cron):
      acx-oci log verify localhost:5000/verifier/log --key log.vkey --since seen.cp --save seen.cp
    """
    report = _run(log, key, witness, quorum, since, save, plain_http, insecure, timeout)
    _render(report, as_json, cartridge)


@log_group.command("watch")
@click.argument("log")
@click.option("--cartridge", required=True, metavar="ID", help="The cartridge id (e.g. io.github.acme/dag-agent).")
@_verify_options
@click.option("--since", type=click.Path(dir_okay=False, path_type=Path), metavar="CHECKPOINT_FILE",
              help="A checkpoint saved earlier: the log must extend it. Missing and the same file as --save: "
                   "a first run, nothing to compare yet.")
@click.option("--save", type=click.Path(dir_okay=False, path_type=Path), metavar="FILE",
              help="Save the checked checkpoint here, for the next --since.")
@json_option
@registry_options(deadline=0)
def log_watch(log: str, cartridge: str, key: str | None, witness: tuple[str, ...], quorum: int | None,
              since: Path | None, save: Path | None, as_json: bool, plain_http: bool, insecure: bool,
              timeout: float) -> None:
    """Every entry LOG holds for a cartridge id: what was ever attempted or issued in a publisher's name.

    The same full check as `log verify`, then only that cartridge's entries.

    \b
    Example:
      acx-oci log watch localhost:5000/verifier/log --cartridge io.github.acme/dag-agent --key log.vkey
    """
    report = _run(log, key, witness, quorum, since, save, plain_http, insecure, timeout)
    _render(report, as_json, cartridge)


@log_group.command("export")
@click.argument("log")
@click.argument("dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--key", metavar="VKEY", help="The log's note verifier key (default: the key the log advertises).")
@json_option
@registry_options(deadline=0)
def log_export(log: str, dir: Path, key: str | None, as_json: bool, plain_http: bool, insecure: bool,
               timeout: float) -> None:
    """Write LOG as the plain C2SP tlog-tiles file tree in DIR: `checkpoint`, `tile/<L>/<N>[.p/<W>]`,
    `tile/entries/<N>[.p/<W>]`.

    Any static web server then serves it to any tlog-tiles client. The log is checked fully first
    (as `log verify`); files are only created, never overwritten (use an empty DIR).

    \b
    Example:
      acx-oci log export localhost:5000/verifier/log ./www/log && python3 -m http.server -d ./www
    """
    reader = LogReader(store_for(log, plain_http, insecure, timeout))
    report = export_log(reader, dir, _key(key))
    if as_json:
        emit_json({"dir": str(dir), "size": report.checkpoint.size, "files": 1 + report.tile_fetches})
    else:
        click.echo(f"wrote the tlog-tiles tree of {report.checkpoint.size} entries "
                   f"({1 + report.tile_fetches} files) to {dir}")
