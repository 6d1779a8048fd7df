"""``acx-oci attest``'s options as a few typed groups: the command body reads what each concern decides
(who signs, what plays, the gate, the baseline, where results go, how the registry is reached) instead of
two dozen loose parameters. The click options themselves stay in ``attest_cmd``, in their documented order."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from acx_oci.cli.executor_opts import ExecutorFlags
from acx_oci.cli.log_opts import LogFlags
from acx_oci.oci import StoreOptions

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

F = TypeVar("F", bound=Callable[..., Any])
T = TypeVar("T", bound="DataclassInstance")


@dataclass(frozen=True)
class VerifierFlags:
    """Who signs (``--key``, ``--issuer``), whose ledger (``--state``) and which certifiers it trusts."""

    key: Path
    issuer: str | None
    state_dir: Path
    certifiers: tuple[str, ...]


@dataclass(frozen=True)
class PlayFlags:
    """What plays the games: the solver, how many at once, and the model a ROM calls or replays."""

    solver_kind: str | None
    competence: float | None
    jobs: int | None
    models_path: Path | None
    model_replay: Path | None


@dataclass(frozen=True)
class GateFlags:
    """When a credential may be issued: games, sigma and the cooldown between attempts."""

    games: int | None
    sigma_max: float
    min_games: int
    cooldown: str
    cooldown_scope: str


@dataclass(frozen=True)
class BaselineFlags:
    """Regression acceptance against an earlier version of the cartridge."""

    baseline_ref: str | None
    baseline_competence: float | None
    regression_tolerance: float


@dataclass(frozen=True)
class OutputFlags:
    """Where results go: the run's folder, a re-publication, whether to push, and ``--json``."""

    out_dir: Path | None
    publish_dir: Path | None
    publish_to: str | None
    no_push: bool
    as_json: bool


@dataclass(frozen=True)
class RegistryFlags:
    """How registries are reached (``registry_options``; ``--ca-file`` and ``--deadline`` act on their own)."""

    plain_http: bool
    insecure: bool
    timeout: float

    def store_options(self) -> StoreOptions:
        """The options every store of the run is opened with."""
        return StoreOptions(plain_http=self.plain_http, insecure=self.insecure, timeout=self.timeout)


@dataclass(frozen=True)
class AttestFlags:
    """Every ``attest`` option, grouped; what ``attest_flags`` hands the command."""

    verifier: VerifierFlags
    play: PlayFlags
    gate: GateFlags
    baseline: BaselineFlags
    output: OutputFlags
    registry: RegistryFlags
    executor: ExecutorFlags
    log: LogFlags


def _take(cls: type[T], params: dict[str, Any]) -> T:
    """Pop the group's fields (named as click names the options) out of ``params``."""
    return cls(**{f.name: params.pop(f.name) for f in fields(cls)})


def attest_flags(command: F) -> F:
    """Apply below the options: click's keyword arguments become one :class:`AttestFlags` (an option no
    group names fails here, never silently dropped)."""

    @functools.wraps(command)
    def grouped(cartridge_ref: str | None, benchmark_ref: str | None, **params: Any) -> Any:
        flags = AttestFlags(verifier=_take(VerifierFlags, params), play=_take(PlayFlags, params),
                            gate=_take(GateFlags, params), baseline=_take(BaselineFlags, params),
                            output=_take(OutputFlags, params), registry=_take(RegistryFlags, params),
                            log=LogFlags.pop_from(params), executor=_take(ExecutorFlags, params))
        assert not params, f"attest: options no group takes: {sorted(params)}"
        return command(cartridge_ref, benchmark_ref, flags)

    return grouped  # type: ignore[return-value]
