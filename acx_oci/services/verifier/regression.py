"""Regression acceptance for ``attest --baseline``: accept a new version only if it did not get worse.

The reference design (quoting Weng): accept a candidate only with no regression on held-in and held-out. The
baseline is an earlier version of the same cartridge id. Its own credential on the same benchmark,
issued by this verifier and verified like any consumer would (replayed from its game records), gives
the baseline's held-out rating; the baseline ROM and the new ROM are both played on the held-in suite in
the same attest, with the same kind of solver. The new ROM's signed
``policy.verification.regression {heldInSuite, heldOutSuite, acceptIf}`` says what is compared:
``heldInSuite`` names the benchmark whose public slice is the held-in suite (default: this benchmark's),
``heldOutSuite`` the benchmark the credential must be earned on (default: any), and ``acceptIf`` the rule,
in the language of :mod:`acx_oci.rating.accept_if` (default ``no-regression``: refused when the new version
is worse with probability >= 0.9 on either suite, from both ratings' mu and sigma; issue 34). A false rule is NOT
ISSUED ``regression`` naming the suites that failed it.

The tolerance, ``DEFAULT_TOLERANCE`` (3.0 levels of R = mu - 3 sigma), is what an ``acceptIf`` reads as
``tolerance``; the default rule reads none. ``benchmarks/regression_sim.py`` measures the rules on the DAG demo
(docs/performance.md, "Regression acceptance").
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from acx_oci.crypto import Identity
from acx_oci.errors import AcxError, UsageError
from acx_oci.evaluation import order_key
from acx_oci.model import level_result, runtime_of, version_key
from acx_oci.model import rating as ts
from acx_oci.oci import Reference, Store, StoreOptions, open_store, parse_reference
from acx_oci.rating import Solver, engine
from acx_oci.rating import accept_if as ai
from acx_oci.services.artifacts import LoadedCartridge, load_cartridge
from acx_oci.services.artifacts import benchmark as bm
from acx_oci.services.consumer import resolve_loaded
from acx_oci.trust import AcceptedBenchmark, Party, Trust
from acx_oci.urls import without_fragment

DEFAULT_TOLERANCE = 3.0  # the one default: attest --regression-tolerance shows it
REGRESSION = "regression"
BASELINE_REFUSED = "baseline"


@dataclass(frozen=True)
class Spec:
    """The new ROM's ``policy.verification.regression``: which suites, and the acceptance rule (parsed)."""

    held_in_suite: str | None
    held_out_suite: str | None
    accept_if: str  # as the ROM states it ("no-regression" when it states none)
    rule: ai.BoolExpr


@dataclass(frozen=True)
class HeldIn:
    """The held-in suite another benchmark supplies: its public slice (never its sealed one) and its name."""

    label: str  # id@version
    benchmark_digest: str
    tasks: tuple[dict[str, Any], ...]


@dataclass
class Baseline:
    """The earlier version a new one is measured against; its store is open until the caller closes it."""

    reference: str  # pinned by digest
    store: Store
    cart: LoadedCartridge
    credential_digest: str | None = None
    held_out_r: float | None = None
    held_out_rating: ai.SuiteRating | None = None
    spec: Spec | None = None
    options: StoreOptions | None = None
    held_in: HeldIn | None = None  # None: this benchmark's public slice
    found: str = "named"  # "ledger": the previous version this verifier issued a level to, found without a name


def policy_regression(rom: dict[str, Any]) -> Spec:
    """Read and parse the ROM's ``policy.verification.regression`` (a bad one: one UsageError line)."""
    node: Any = rom.get("policy")
    for key in ("verification", "regression"):
        node = node.get(key) if isinstance(node, dict) else None
    node = node if isinstance(node, dict) else {}
    suites = []
    for key in ("heldInSuite", "heldOutSuite"):
        value = node.get(key)
        if value is not None and (not isinstance(value, str) or not value):
            raise UsageError(f"policy.verification.regression.{key} must name a benchmark (a reference or id@version)")
        suites.append(value)
    text = node.get("acceptIf")
    text = "no-regression" if text is None else text
    if not isinstance(text, str):
        raise UsageError("policy.verification.regression.acceptIf must be a string")
    return Spec(suites[0], suites[1], text, ai.parse(text))


def policy_baseline(rom: dict[str, Any]) -> str | None:
    """``policy.verification.regression.baseline`` of the ROM, if it names one."""
    node: Any = rom.get("policy")
    for key in ("verification", "regression", "baseline"):
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, str) and node else None


def load_baseline(ref: str, cart_reference: Reference, cart: LoadedCartridge, options: StoreOptions,
                  rom_solver: bool, found: str = "named") -> tuple[Baseline | None, list[str]]:
    """Load the baseline cartridge (a reference, or a bare ``sha256:`` manifest digest in the new
    cartridge's repository) and check that it is an earlier version of the same cartridge id.

    The baseline's store stays open only when it is usable (no problems): the caller plays the baseline
    from it and closes it (``Baseline.store``)."""
    try:
        # a bare digest names a manifest in the new cartridge's repository; parsed again so a bad digest is refused
        parsed = parse_reference(str(cart_reference.with_digest(ref)) if ref.startswith("sha256:") else ref)
        store = open_store(parsed, options)
    except AcxError as exc:
        return None, [f"{BASELINE_REFUSED}: cannot load the baseline {ref}: {exc}"]
    try:
        digest = store.resolve(parsed.target).digest
        base = load_cartridge(store, digest, None)
    except AcxError as exc:
        store.close()
        return None, [f"{BASELINE_REFUSED}: cannot load the baseline {ref}: {exc}"]
    except BaseException:
        store.close()
        raise
    problems = _baseline_problems(ref, cart, base, rom_solver, versions=found == "named")
    spec = None
    try:
        spec = policy_regression(cart.rom)
    except UsageError as exc:
        problems.append(f"{BASELINE_REFUSED}: the ROM's regression policy: {exc}")
    if problems:
        store.close()
    return Baseline(str(parsed.with_digest(digest)), store, base, spec=spec, options=options, found=found), problems


def _baseline_problems(ref: str, cart: LoadedCartridge, base: LoadedCartridge, rom_solver: bool,
                       versions: bool = True) -> list[str]:
    """Why ``base`` cannot be the baseline of ``cart`` (another id, unplayable, the same ROM, not older; a
    baseline the ledger found is compared whatever its version string says: a respin keeps it)."""
    problems = []
    if base.id != cart.id:
        problems.append(f"{BASELINE_REFUSED}: the baseline {ref} is cartridge {base.id}, not {cart.id}; "
                        "a regression is measured against an earlier version of the same cartridge")
    elif rom_solver and runtime_of(base.rom) is None:
        problems.append(f"{BASELINE_REFUSED}: the baseline {ref} declares no runtime; the ROM solver cannot play it")
    elif base.rom_digest == cart.rom_digest:
        problems.append(f"{BASELINE_REFUSED}: the baseline {ref} is this very ROM ({cart.rom_digest})")
    elif versions:
        old, new = version_key(base.version), version_key(cart.version)
        if old is not None and new is not None and old >= new:
            problems.append(f"{BASELINE_REFUSED}: the baseline's version {base.version} is not earlier than "
                            f"{cart.version}")
    return problems


def find_credential(baseline: Baseline, verifier: Identity, remote: bm.RemoteBenchmark, *, reference: bool,
                    now: datetime) -> list[str]:
    """Fill the baseline's newest credential on this benchmark issued by this verifier, verified and replayed
    with a trust made of the verifier alone; a problem (no such credential) otherwise."""
    d = remote.descriptor
    trust = Trust(verifiers=[Party(without_fragment(verifier.did), verifier.did_document())],
                  benchmarks=[AcceptedBenchmark(remote.id, remote.version, str(d["benchmarkDigest"]),
                                                d.get("heldOutSliceDigest"))],
                  solvers=("rom", "reference") if reference else ("rom",),
                  regression_optional=True)  # the baseline's own predecessor is not this run's question
    resolution = resolve_loaded(baseline.store, baseline.cart, trust, now=now)
    cap_id = remote.capability["id"]
    found = [a for c in resolution.capabilities if c.capability.id == cap_id for a in c.accepted
             if a.issuer == verifier.did and (a.benchmark_id, a.benchmark_version) == (remote.id, remote.version)]
    if not found:
        rejected = [f"{r.digest[:19]}: {', '.join(r.codes)}" for c in resolution.capabilities for r in c.rejected]
        return [f"{BASELINE_REFUSED}: the baseline {baseline.reference} has no valid credential on "
                f"{remote.id}@{remote.version} issued by {verifier.did}"
                + ("" if reference else " with the ROM solver (reference simulations count only for a "
                   "reference run)")
                + (f" (rejected: {'; '.join(rejected[:3])})" if rejected else "")
                + "; attest the baseline first"]
    best = max(found, key=order_key)
    res = level_result(best.credential) or {}
    baseline.credential_digest = best.credential_digest
    baseline.held_out_rating = ai.SuiteRating(float(res["acx:ratingMu"]), float(res["acx:ratingSigma"]))
    baseline.held_out_r = ts.conservative(ts.Rating(baseline.held_out_rating.mu, baseline.held_out_rating.sigma))
    return _suites(baseline, remote)


def _names(value: str, remote: bm.RemoteBenchmark, options: StoreOptions | None
           ) -> tuple[bool, bm.RemoteBenchmark | None]:
    """Whether ``value`` (``id@version`` or a reference) names ``remote``; else the benchmark it names."""
    if value == f"{remote.id}@{remote.version}":
        return True, None
    if "/" not in value and not value.startswith("oci:"):
        return False, None  # another id@version: names no place to load it from
    parsed = parse_reference(value)
    store = open_store(parsed, options or StoreOptions())
    try:
        digest = store.resolve(parsed.target).digest
        return (True, None) if digest == remote.manifest.digest else (False, bm.fetch(store, digest))
    finally:
        store.close()


def _suites(baseline: Baseline, remote: bm.RemoteBenchmark) -> list[str]:
    """Check ``heldOutSuite`` names this benchmark and load ``heldInSuite``'s public slice, before any game."""
    spec = baseline.spec
    if spec is None:
        return []
    try:
        if spec.held_out_suite is not None and not _names(spec.held_out_suite, remote, baseline.options)[0]:
            return [f"{BASELINE_REFUSED}: the ROM's regression.heldOutSuite is {spec.held_out_suite}, but this "
                    f"attest runs on {remote.id}@{remote.version}"]
        if spec.held_in_suite is not None:
            same, other = _names(spec.held_in_suite, remote, baseline.options)
            if not same and other is None:
                return [f"{BASELINE_REFUSED}: the ROM's regression.heldInSuite {spec.held_in_suite} is neither "
                        f"{remote.id}@{remote.version} nor a benchmark reference"]
            if other is not None:
                if not other.public_tasks:
                    return [f"{BASELINE_REFUSED}: the held-in suite {other.id}@{other.version} has no public slice"]
                baseline.held_in = HeldIn(f"{other.id}@{other.version}", str(other.descriptor["benchmarkDigest"]),
                                          tuple(other.public_tasks))
    except AcxError as exc:
        return [f"{BASELINE_REFUSED}: cannot load the ROM's regression suites: {exc}"]
    return []


def held_in_suite(baseline: Baseline, unsealed: bm.Unsealed) -> tuple[str, str, bytes, list[dict[str, Any]]]:
    """(label, benchmark digest, commitment key, tasks) of the held-in suite: the ROM's ``heldInSuite``'s public
    slice, else this benchmark's public slice. Nothing played there is signed, so its key is only derived."""
    if baseline.held_in is not None:
        h = baseline.held_in
        return h.label, h.benchmark_digest, hashlib.sha256(f"acx-held-in/v1|{h.benchmark_digest}".encode()).digest(), \
            list(h.tasks)
    held = {str(t["id"]) for t in unsealed.held_out}
    public = [t for t in unsealed.bench.tasks if str(t["id"]) not in held]
    return f"{unsealed.bench.id}@{unsealed.bench.version}", unsealed.bench.digest, unsealed.commitment_key, public


def held_in_rating(rom_digest: str, suite: tuple[str, str, bytes, list[dict[str, Any]]], solver: Solver,
                   jobs: int) -> ai.SuiteRating:
    """The rating of one ROM on the held-in suite: same engine and draw rule, no gate, nothing signed."""
    label, digest, key, tasks = suite
    if not tasks:
        raise UsageError(f"attest --baseline: the held-in suite {label} has no public slice to compare on")
    result = engine.run(rom_digest=rom_digest, benchmark_digest=digest, held_out=tasks, commitment_key=key,
                        solver=solver, params=engine.Params(), jobs=jobs)
    return ai.SuiteRating(result.rating.mu, result.rating.sigma)


def judge(spec: Spec | None, new: dict[str, ai.SuiteRating], base: dict[str, ai.SuiteRating], tolerance: float,
          labels: dict[str, str]) -> list[str]:
    """NOT ISSUED ``regression`` when the ROM's ``acceptIf`` (default: worse with probability >= 0.9) is false; the
    reason names the suites that failed it, all four R values, both suites' mu and sigma and P(worse)."""
    spec = spec or policy_regression({})
    outcome = ai.evaluate(spec.rule, ai.Env(new, base, tolerance))
    if outcome.accepted:
        return []
    failed = ", ".join(f"{'held-in' if s == 'heldIn' else 'held-out'} suite {labels[s]}" for s in outcome.failed)
    ratings = "; ".join(_compared(n, new[s], base[s]) for s, n in (("heldIn", "held-in"), ("heldOut", "held-out")))
    return [f"{REGRESSION}: acceptIf {spec.accept_if!r} (tolerance {tolerance:g}) is false on the "
            f"{failed or 'rule as a whole'}; held-out R {new['heldOut'].r:.2f} vs baseline {base['heldOut'].r:.2f}, "
            f"held-in R {new['heldIn'].r:.2f} vs baseline {base['heldIn'].r:.2f}; {ratings}"]


def _compared(name: str, new: ai.SuiteRating, base: ai.SuiteRating) -> str:
    """One suite's two ratings (mu, sigma) and the probability the new version is worse: what the default rule read."""
    return (f"{name} μ {new.mu:.2f} σ {new.sigma:.2f} vs baseline μ {base.mu:.2f} σ {base.sigma:.2f} "
            f"(worse with probability {ai.worse_probability(new, base):.3f})")


def credential_field(baseline: Baseline, base_in: float, held_in_label: str | None = None) -> dict[str, Any]:
    """The ``acx:baseline`` claim: which credential and ROM were compared, both held-in r values, and the rule."""
    spec = baseline.spec or policy_regression({})
    return {"credentialDigest": baseline.credential_digest, "romDigest": baseline.cart.rom_digest,
            "heldOutR": baseline.held_out_r, "heldInR": base_in, "acceptIf": spec.accept_if,
            **({"heldInSuite": held_in_label} if held_in_label else {}), "found": baseline.found}
