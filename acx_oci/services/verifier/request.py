"""What a caller says to ``attest``: the few things it must say, and options grouped by what they govern.

A request is a frozen value: the run never writes back into it, so what was asked is what the ledger and
the result record, and a retry is ``dataclasses.replace(request, ...)``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

from acx_oci.crypto import Identity
from acx_oci.model import SCOPE_ROM_CLAIM
from acx_oci.oci import StoreOptions
from acx_oci.rating import Solver
from acx_oci.services.verifier import models as models_mod
from acx_oci.services.verifier import regression as regr
from acx_oci.services.verifier import transcripts as tx
from acx_oci.services.verifier.log import LogOptions
from acx_oci.trust import DEFAULT_MIN_GAMES, DEFAULT_SIGMA_MAX, looser_than_floor

DEFAULT_COOLDOWN = timedelta(hours=24)
Progress = Callable[[int, int, str], None]  # (done, total, text)


@dataclass(frozen=True)
class GateOptions:
    """How many games, when a rating is good enough to issue, and how soon the same ROM may try again."""

    games: int | None = None  # None: min(90, held-out size)
    sigma_max: float = DEFAULT_SIGMA_MAX
    min_games: int = DEFAULT_MIN_GAMES
    cooldown: timedelta = DEFAULT_COOLDOWN
    cooldown_scope: str = SCOPE_ROM_CLAIM  # "rom": per ROM digest only; "rom+claim": also per (cartridge, capability)

    def below_floor(self) -> list[str]:
        """What of this gate is looser than the floor: a run under it is a look (played, never signed)."""
        return looser_than_floor(self.sigma_max, self.min_games, ("--sigma-max", "--min-games"))


@dataclass(frozen=True)
class SandboxOptions:
    """Where the ROM's games run and what the containment probes must prove absent."""

    jobs: int = 1  # games played at once (rated afterwards in draw order: the same result for any value)
    executor: Any = None  # None: a local pool; a services.verifier.executors.dask_cluster.DaskExecutor: a Dask cluster
    secret_paths: tuple[Path, ...] = ()  # the signing key file(s): the containment probes prove them absent


@dataclass(frozen=True)
class BaselineOptions:
    """Regression acceptance (``attest --baseline``): the earlier version to compare with, and by how much."""

    ref: str | None = None  # else the ROM's policy.verification.regression.baseline
    solver: Solver | None = None  # the baseline's simulation when the request's solver is the reference solver
    tolerance: float = regr.DEFAULT_TOLERANCE


@dataclass(frozen=True)
class ModelOptions:
    """For a ROM that calls a model: where the models live, or the recording a replay answers from."""

    models: models_mod.Models | None = None  # attest --models
    replay: tx.ModelReplayExport | None = None  # attest --model-replay: answer every game from its recording


@dataclass(frozen=True)
class RegistryOptions:
    """How the registries are reached, and whether an issued result is pushed next to the cartridge."""

    store_options: StoreOptions = field(default_factory=StoreOptions)
    push: bool = True  # publish the status list and push the attestation next to the cartridge
    log: LogOptions | None = None  # the verifier's transparency log (None: not logged)


@dataclass(frozen=True)
class AttestRequest:
    """One attest: which cartridge on which benchmark, by whom, written where; everything else is an option."""

    cartridge_ref: str
    benchmark_ref: str
    verifier: Identity  # its ``did`` is the issuer
    out_dir: Path
    state_dir: Path
    solver: Solver | None = None  # None: the ROM solver (the ROM's own runtime, sandboxed); a Solver: a simulation
    gate: GateOptions = field(default_factory=GateOptions)
    sandbox: SandboxOptions = field(default_factory=SandboxOptions)
    baseline: BaselineOptions = field(default_factory=BaselineOptions)
    models: ModelOptions = field(default_factory=ModelOptions)
    registry: RegistryOptions = field(default_factory=RegistryOptions)
    clock: Callable[[], datetime] | None = None
    progress: Progress | None = None
    certifiers: tuple[str, ...] = ()  # exam certifiers trusted besides the verifier's own key (attest --certifier)

    @property
    def trusted_certifiers(self) -> tuple[str, ...]:
        """Whose exam certification this verifier believes: its own DIDs first, then ``--certifier`` in order."""
        own = (self.verifier.did, self.verifier.did_key)
        return tuple(dict.fromkeys(own + self.certifiers))

    @property
    def rom_solver(self) -> bool:
        """The signed ROM plays (not a simulation)."""
        return self.solver is None

    def now(self) -> datetime:
        """The request's clock, or the wall clock in UTC."""
        from datetime import UTC

        return self.clock() if self.clock is not None else datetime.now(UTC)
