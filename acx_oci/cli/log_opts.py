"""``--log``, ``--witness``, ``--log-origin``: the verifier's transparency log, for the commands that append to it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import click

from acx_oci.oci import StoreOptions
from acx_oci.services.verifier import LogOptions, log_options

F = TypeVar("F", bound=Any)


def producer_log_options(f: F) -> F:
    """The three options; each overrides the same field of ``STATE_DIR/config.json``'s ``log``."""
    f = click.option("--log-origin", "log_origin", metavar="ORIGIN",
                     help="The log's checkpoint origin (and note key name). Default: "
                          "sigsum.org/v1/tree/<hex sha256(the verifier's raw Ed25519 public key)>, the form "
                          "Sigsum witnesses cosign.")(f)
    f = click.option("--witness", "log_witness", multiple=True, metavar="URL=VKEY",
                     help="A witness each new checkpoint is submitted to (C2SP tlog-witness add-checkpoint): its URL "
                          "prefix, '=', its cosignature/v1 vkey (name+hash+base64, or a file holding it); "
                          "repeatable. A witness that refuses or is down is named in the output; the run goes on.")(f)
    f = click.option("--log", "log_repo", metavar="REGISTRY/REPO",
                     help="The verifier's transparency log (REGISTRY/REPO or oci:DIR; never the cartridge's "
                          "repository): every attempt is appended (kept under STATE/log) and the log published "
                          "there. Default: STATE/config.json's log.repository; none: not logged.")(f)
    return f


@dataclass(frozen=True)
class LogFlags:
    """The three options (``producer_log_options``) as one typed value, before the state's config is read."""

    log_repo: str | None
    log_origin: str | None
    log_witness: tuple[str, ...]

    @classmethod
    def pop_from(cls, kwargs: dict[str, Any]) -> LogFlags:
        """Pop the three options from a command's keyword arguments."""
        return cls(kwargs.pop("log_repo", None), kwargs.pop("log_origin", None),
                   tuple(kwargs.pop("log_witness", ()) or ()))

    def resolve(self, state_dir: Path, store_options: StoreOptions) -> LogOptions | None:
        """Each option given overrides the same field of the state's config; None when neither names a log."""
        return log_options(state_dir, self.log_repo, self.log_origin, self.log_witness, store_options)


def log_from_options(state_dir: Path, kwargs: dict[str, Any], store_options: StoreOptions) -> LogOptions | None:
    """Pop the three options from a command's keyword arguments and resolve them against the state's config."""
    return LogFlags.pop_from(kwargs).resolve(state_dir, store_options)
