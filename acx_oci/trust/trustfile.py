"""The trust file: whose keys you believe, which benchmarks count, and the gate.

Trust is local policy, never something a credential can assert about itself.
The file (YAML or JSON) is schema-validated at load; DID documents it names
are loaded once, relative to the trust file's folder, so that everything
after loading is pure and offline.

Example::

    publishers: [{id: did:key:z6Mk...}]
    verifiers:  [{id: did:web:verifier.example, didDocument: verifier.did.json,
                  log: {origin: sigsum.org/v1/tree/..., key: "sigsum.org/v1/tree/...+1a2b3c4d+AR...",
                        url: registry.example/acme/log},       # optional: its credentials must be logged
                  witnesses: {keys: ["witness.example+5e6f7a8b+BC..."], quorum: 1}}]
    benchmarks: [{id: acx-bench-dag-de, version: 2026.07.1, digest: sha256:..., heldOutSliceDigest: sha256:...,
                  capability: "build-dag[snowflake+airflow+dbt]@data-engineering",
                  postCutoff: {required: true, minShare: 0.8}}]   # contamination: games on post-cutoff exams
    gate:   {sigmaMax: 1.5, minGames: 30}
    status: {maxAge: 7d, failClosed: true}
    models: [acme-large-2026-06]     # agents that call a model: whose levels count (default: any)
    modelDataUse: no-training        # held-out prompts went only to providers that do not train on them
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from acx_oci.errors import UsageError
from acx_oci.files import load_json_file, load_yaml_or_json_file
from acx_oci.jsonio import validate
from acx_oci.timeutil import parse_duration
from acx_oci.urls import without_fragment

# The gate (DESIGN.md): the one definition; the engine issues and consumers verify against it. It is also the
# floor: the reference design says a credential MUST NOT issue unless sigma < 1.5 over >= 30 games, so nothing
# looser is ever signed (a verifier's lower flags only play a look) or accepted (a trust file may only tighten).
DEFAULT_SIGMA_MAX = 1.5
DEFAULT_MIN_GAMES = 30


def looser_than_floor(sigma_max: float, min_games: int, names: tuple[str, str]) -> list[str]:
    """What of a gate is looser than the floor, each in words naming its setting (``names``); empty: none."""
    out = []
    if not sigma_max <= DEFAULT_SIGMA_MAX:  # NaN too: no number, no credential
        shown = f"{sigma_max:g}" if f"{sigma_max:g}" != f"{DEFAULT_SIGMA_MAX:g}" else repr(sigma_max)
        out.append(f"{names[0]} {shown} is above the floor's {DEFAULT_SIGMA_MAX:g} (sigma must be below it)")
    if min_games < DEFAULT_MIN_GAMES:
        out.append(f"{names[1]} {min_games} is below the floor's {DEFAULT_MIN_GAMES} games")
    return out
DEFAULT_SOLVERS = ("rom",)


@dataclass(frozen=True)
class LogTrust:
    """A verifier's transparency log as the consumer pins it: origin, C2SP note key, where it is served, witnesses.

    Kept as text here (this floor is below :mod:`acx_oci.tlog`); the keys are parsed, and their key IDs
    checked, by :mod:`acx_oci.evaluation.log_check` before anything is fetched.
    """

    origin: str
    key: str  # the log's note verifier key, name+hash+base64 (name = origin)
    url: str  # REGISTRY/REPO (or oci:DIR) of the published log
    witness_keys: tuple[str, ...] = ()  # C2SP cosignature/v1 vkeys
    quorum: int = 0  # how many of them must have cosigned a checkpoint


@dataclass(frozen=True)
class Party:
    """A trusted DID; ``did_document`` is required for did:web (did:key derives its own); ``log``: its log."""

    id: str
    did_document: dict[str, Any] | None = None
    log: LogTrust | None = None


@dataclass(frozen=True)
class PostCutoff:
    """A consumer's contamination rule: at least ``min_share`` of the rated held-out games on exams dated after
    the model's training cutoff (an undated exam never counts; no cutoff, no qualifying game)."""

    required: bool = False
    min_share: float = 1.0


def post_cutoff_from(raw: Any) -> PostCutoff | None:
    """``postCutoff: {required, minShare}`` as parsed (schema-checked by the caller); None when absent."""
    if not isinstance(raw, dict):
        return None
    return PostCutoff(bool(raw.get("required")), float(raw.get("minShare", 1.0)))


@dataclass(frozen=True)
class AcceptedBenchmark:
    """A benchmark the consumer accepts, pinned by digest; optionally its held-out slice, certifiers and capability."""

    id: str
    version: str
    digest: str
    held_out_slice_digest: str | None = None
    certified_by: tuple[str, ...] = ()  # exam certifiers whose certification this consumer requires
    # The capability the benchmark measures, as an id (acx-cap:sha256:...) or display form
    # (build-dag[airflow]@data-engineering); a credential on it must be for that capability.
    capability: str | None = None
    post_cutoff: PostCutoff | None = None  # postCutoff: the contamination rule for this benchmark


@dataclass(frozen=True)
class Trust:
    """The consumer's trust decisions, parsed once: whose keys count, which benchmarks, and the gate's bounds."""

    publishers: list[Party] = field(default_factory=list)
    verifiers: list[Party] = field(default_factory=list)
    benchmarks: list[AcceptedBenchmark] = field(default_factory=list)
    sigma_max: float = DEFAULT_SIGMA_MAX
    min_games: int = DEFAULT_MIN_GAMES
    status_max_age: float | None = None
    fail_closed: bool = True
    source: str | None = None
    # Which solvers' credentials count: only real runs (the signed ROM, sandboxed) unless the consumer
    # opts into "reference" simulations (the demo does, and labels such levels simulated).
    solvers: tuple[str, ...] = DEFAULT_SOLVERS
    # Agents that call a model: the model ids whose levels count (None: any) and whether held-out prompts
    # must have gone only to a provider whose terms exclude training on them.
    models: tuple[str, ...] | None = None
    require_no_training: bool = False
    # The seeds' rules are defaults (issue 34); each relaxation is one line of the trust file.
    uncertified_exams: bool = False  # uncertifiedExams: allow
    post_cutoff: PostCutoff | None = None  # top-level postCutoff (a benchmark's own wins); None: the default rule
    regression_required: bool = False  # regression: required
    # regression: optional accepts a level that does not say how the previous version was settled (issued before
    # issue 44.1); by default it must say (acx:previousVersion) and, when there was one, carry the comparison
    regression_optional: bool = False
    classification_required: bool = False  # classification: {required: true}
    refused_relaxations: tuple[str, ...] = ()  # examRelaxations: {refuse: [...]}
    tamper_checks_optional: bool = False  # tamperChecks: optional (default: required for in-process grades)
    # promotion: {required: true} every exam, {required: false} none; None: the default (imported exams)
    promotion_required: bool | None = None

    @classmethod
    def empty(cls) -> Trust:
        """Trusts nobody; default gate; fails closed on unknown status."""
        return cls()

    def is_trusted_publisher(self, did: str) -> bool:
        """Whether ``did`` (a fragment is ignored) is a publisher whose ROM signatures count."""
        return any(p.id == without_fragment(did) for p in self.publishers)

    def is_trusted_verifier(self, did: str) -> bool:
        """Whether ``did`` (a fragment is ignored) is a verifier whose credentials count."""
        return any(p.id == without_fragment(did) for p in self.verifiers)

    def did_document_for(self, did: str) -> dict[str, Any] | None:
        """The DID document the trust file supplies for ``did`` (publisher or verifier), if any."""
        base = without_fragment(did)
        for party in [*self.verifiers, *self.publishers]:
            if party.id == base and party.did_document is not None:
                return party.did_document
        return None

    def log_for(self, did: str) -> LogTrust | None:
        """The log the trust file pins for verifier ``did`` (a fragment is ignored); None: not log-checked."""
        base = without_fragment(did)
        return next((p.log for p in self.verifiers if p.id == base and p.log is not None), None)

    def benchmark(self, bench_id: str, version: str) -> AcceptedBenchmark | None:
        """The accepted entry for (id, version), or None: a benchmark not listed does not count."""
        for b in self.benchmarks:
            if b.id == bench_id and b.version == version:
                return b
        return None


def _party(raw: dict[str, Any], folder: Path, where: str) -> Party:
    from acx_oci.errors import DidError
    from acx_oci.trust.did import check_did_document

    did = raw["id"]
    doc_ref = raw.get("didDocument")
    doc: dict[str, Any] | None = None
    if isinstance(doc_ref, dict):
        doc = doc_ref
    elif isinstance(doc_ref, str):
        path = Path(doc_ref)
        if not path.is_absolute():
            path = folder / path
        doc = load_json_file(path, f"{where} didDocument")
    if doc is not None:
        try:
            check_did_document(doc, did)
        except DidError as exc:
            raise UsageError(f"{where}: {exc}") from None
    elif did.startswith("did:web:"):
        doc = None  # resolvable only with network resolution allowed
    return Party(did, doc, _log(raw, where))


def _witness_public(vkey: str) -> bytes:
    """The public key a ``name+hash+base64`` vkey holds (type byte dropped), or the text itself when it is not
    one: :mod:`acx_oci.evaluation.log_check` refuses malformed keys with the full reason later."""
    material = vkey.split("+", 2)[-1]
    try:
        raw = base64.b64decode(material, validate=True)
    except (binascii.Error, ValueError):
        return vkey.encode()
    return raw[1:] if len(raw) == 33 else vkey.encode()


def _distinct_witnesses(keys: tuple[str, ...], where: str) -> None:
    """One witness is one key: the same key listed under two names would count twice toward the quorum."""
    seen: dict[bytes, str] = {}
    for key in keys:
        public = _witness_public(key)
        if public in seen:
            raise UsageError(f"{where}: witnesses.keys lists one public key twice ({seen[public].split('+', 1)[0]!r} "
                             f"and {key.split('+', 1)[0]!r}); the quorum counts distinct witness keys")
        seen[public] = key


def _log(raw: dict[str, Any], where: str) -> LogTrust | None:
    """The party's ``log:`` and ``witnesses:`` (the schema checked their shapes; here what it cannot say)."""
    log, wit = raw.get("log"), raw.get("witnesses")
    if log is None:
        if wit is not None:
            raise UsageError(f"{where}: witnesses: without log: (witnesses cosign a log's checkpoints)")
        return None
    if log["key"].split("+", 1)[0] != log["origin"]:
        raise UsageError(f"{where}: log.key is named {log['key'].split('+', 1)[0]!r}, but a checkpoint's key name "
                         f"is its origin {log['origin']!r}")
    keys = tuple(wit.get("keys") or ()) if wit else ()
    quorum = int(wit.get("quorum", len(keys))) if wit else 0
    if quorum > len(keys):
        raise UsageError(f"{where}: witnesses.quorum is {quorum}, but only {len(keys)} witness key(s) are listed")
    _distinct_witnesses(keys, where)
    return LogTrust(log["origin"], log["key"], log["url"], keys, quorum)


def trust_from_dict(data: Any, folder: Path, source: str = "trust file") -> Trust:
    """Build a :class:`Trust` from parsed YAML/JSON; relative paths resolve from ``folder``."""
    if data is None:
        data = {}
    validate(data, "trust.schema.json", source)
    gate = data.get("gate") or {}
    status = data.get("status") or {}
    looser = looser_than_floor(float(gate.get("sigmaMax", DEFAULT_SIGMA_MAX)),
                               int(gate.get("minGames", DEFAULT_MIN_GAMES)), ("gate.sigmaMax", "gate.minGames"))
    if looser:
        raise UsageError(f"{source}: {'; '.join(looser)}: a trust file may tighten the gate, never loosen it "
                         "(the reference design issues nothing below sigma < 1.5 over >= 30 games)")
    return Trust(
        publishers=[_party(p, folder, f"{source} publishers[{i}]") for i, p in enumerate(data.get("publishers") or [])],
        verifiers=[_party(p, folder, f"{source} verifiers[{i}]") for i, p in enumerate(data.get("verifiers") or [])],
        benchmarks=[AcceptedBenchmark(str(b["id"]), str(b["version"]), b["digest"], b.get("heldOutSliceDigest"),
                                      tuple(b.get("certifiedBy") or ()), b.get("capability"),
                                      post_cutoff_from(b.get("postCutoff")))
                    for b in data.get("benchmarks") or []],
        sigma_max=float(gate.get("sigmaMax", DEFAULT_SIGMA_MAX)),
        min_games=int(gate.get("minGames", DEFAULT_MIN_GAMES)),
        status_max_age=parse_duration(status.get("maxAge"), f"{source} status.maxAge"),
        fail_closed=bool(status.get("failClosed", True)),
        source=source,
        solvers=tuple(data.get("solvers") or DEFAULT_SOLVERS),
        models=tuple(str(m) for m in data["models"]) if data.get("models") is not None else None,
        require_no_training=(data.get("modelDataUse") == "no-training"),
        uncertified_exams=(data.get("uncertifiedExams") == "allow"),
        post_cutoff=post_cutoff_from(data.get("postCutoff")),
        regression_required=(data.get("regression") == "required"),
        regression_optional=(data.get("regression") == "optional"),
        classification_required=bool((data.get("classification") or {}).get("required", False)),
        refused_relaxations=tuple(str(r) for r in (data.get("examRelaxations") or {}).get("refuse") or ()),
        tamper_checks_optional=(data.get("tamperChecks") == "optional"),
        promotion_required=(data["promotion"].get("required") if isinstance(data.get("promotion"), dict)
                            and isinstance(data["promotion"].get("required"), bool) else None),
    )


def load_trust(path: str | Path) -> Trust:
    """Load and validate a trust file; any problem is one-line :class:`UsageError`."""
    p = Path(path)
    data = load_yaml_or_json_file(p, "trust file")
    return trust_from_dict(data, p.resolve().parent, f"trust file ({p})")


def publisher_keys(trust: Trust) -> dict[str, list[bytes]]:
    """Ed25519 assertion keys of every trusted publisher that resolves offline."""
    from acx_oci.errors import DidError
    from acx_oci.trust.did import assertion_keys

    out: dict[str, list[bytes]] = {}
    for party in trust.publishers:
        try:
            out[party.id] = [key for _, key in assertion_keys(party.id, trust)]
        except DidError:
            out[party.id] = []
    return out
