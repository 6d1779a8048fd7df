"""Regression acceptance for ``attest --baseline``: accept a new version only if it did not get worse.

The reference design (quoting Weng): accept a candidate only with no regression on held-in and held-out. The
baseline is an earlier version of the same cartridge id. Its own credential on the same benchmark,
issued by this verifier and verified like any consumer would (replayed from its game records), gives
the baseline's held-out R; the baseline ROM and the new ROM are both played on the benchmark's public
(held-in) slice in the same attest, with the same kind of solver, for the held-in comparison. The new
ROM is NOT ISSUED ``regression`` if either R fell by more than the tolerance.

The tolerance defaults to 3.0 levels of R = mu - 3 sigma: R is an estimate (on the DAG demo, 90 held-out
and 64 held-in games, its run-to-run sd is about 1.1 and 1.3), so an equally good agent is read as a
regression about 9% of the time at 3.0 and about half the time at 1.0, the smallest change a credential
shows (docs/attest-a-real-agent.md, "Regression acceptance").
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from acx_oci.crypto.keys import Identity
from acx_oci.errors import AcxError, UsageError
from acx_oci.evaluation import engine
from acx_oci.evaluation.solver import Solver
from acx_oci.model import rating as ts
from acx_oci.model.credential import level_result
from acx_oci.model.rom import runtime_of
from acx_oci.oci.open import open_store
from acx_oci.oci.ref import Reference, parse_reference
from acx_oci.oci.store import Store, StoreOptions
from acx_oci.services import benchmark as bm
from acx_oci.services.cartridge import LoadedCartridge, load_cartridge
from acx_oci.services.replay import order_key
from acx_oci.services.resolve import resolve_loaded
from acx_oci.trust.trustfile import AcceptedBenchmark, Party, Trust

DEFAULT_TOLERANCE = 1.0
REGRESSION = "regression"
BASELINE_REFUSED = "baseline"


@dataclass
class Baseline:
    """The earlier version a new one is measured against; its store is open until the caller closes it."""

    reference: str  # pinned by digest
    store: Store
    cart: LoadedCartridge
    credential_digest: str | None = None
    held_out_r: float | None = None


def policy_baseline(rom: dict[str, Any]) -> str | None:
    """``policy.verification.regression.baseline`` of the ROM, if it names one."""
    node: Any = rom.get("policy")
    for key in ("verification", "regression", "baseline"):
        node = node.get(key) if isinstance(node, dict) else None
    return node if isinstance(node, str) and node else None


def _version_key(version: str) -> tuple[int, ...] | None:
    m = re.match(r"^v?(\d+(?:\.\d+)*)", version)
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def load_baseline(ref: str, cart_reference: Reference, cart: LoadedCartridge, options: StoreOptions,
                  rom_solver: bool) -> tuple[Baseline | None, list[str]]:
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
    problems = _baseline_problems(ref, cart, base, rom_solver)
    if problems:
        store.close()
    return Baseline(str(parsed.with_digest(digest)), store, base), problems


def _baseline_problems(ref: str, cart: LoadedCartridge, base: LoadedCartridge, rom_solver: bool) -> list[str]:
    """Why ``base`` cannot be the baseline of ``cart`` (another id, unplayable, the same ROM, not older)."""
    problems = []
    if base.id != cart.id:
        problems.append(f"{BASELINE_REFUSED}: the baseline {ref} is cartridge {base.id}, not {cart.id}; "
                        "a regression is measured against an earlier version of the same cartridge")
    elif rom_solver and runtime_of(base.rom) is None:
        problems.append(f"{BASELINE_REFUSED}: the baseline {ref} declares no runtime; the ROM solver cannot play it")
    elif base.rom_digest == cart.rom_digest:
        problems.append(f"{BASELINE_REFUSED}: the baseline {ref} is this very ROM ({cart.rom_digest})")
    else:
        old, new = _version_key(base.version), _version_key(cart.version)
        if old is not None and new is not None and old >= new:
            problems.append(f"{BASELINE_REFUSED}: the baseline's version {base.version} is not earlier than "
                            f"{cart.version}")
    return problems


def find_credential(baseline: Baseline, verifier: Identity, remote: bm.RemoteBenchmark, *, reference: bool,
                    now: datetime) -> list[str]:
    """Fill the baseline's newest credential on this benchmark issued by this verifier, verified and replayed
    with a trust made of the verifier alone; a problem (no such credential) otherwise."""
    d = remote.descriptor
    trust = Trust(verifiers=[Party(verifier.did.split("#", 1)[0], verifier.did_document())],
                  benchmarks=[AcceptedBenchmark(remote.id, remote.version, str(d["benchmarkDigest"]),
                                                d.get("heldOutSliceDigest"))],
                  solvers=("rom", "reference") if reference else ("rom",))
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
    baseline.held_out_r = ts.conservative(ts.Rating(float(res["acx:ratingMu"]), float(res["acx:ratingSigma"])))
    return []


def held_in_r(rom_digest: str, unsealed: bm.Unsealed, public: list[dict[str, Any]], solver: Solver,
              jobs: int) -> float:
    """R of one ROM on the public (held-in) slice: same engine and draw rule, no gate, nothing signed."""
    if not public:
        raise UsageError("attest --baseline: the benchmark has no public (held-in) slice to compare on")
    result = engine.run(rom_digest=rom_digest, benchmark_digest=unsealed.bench.digest, held_out=public,
                        commitment_key=unsealed.commitment_key, solver=solver, params=engine.Params(), jobs=jobs)
    return result.conservative


def judge(new_out: float, new_in: float, base_out: float, base_in: float, tolerance: float) -> list[str]:
    """NOT ISSUED ``regression`` if either new R is below the baseline's R minus the tolerance."""
    if new_out >= base_out - tolerance and new_in >= base_in - tolerance:
        return []
    return [f"{REGRESSION}: held-out R {new_out:.2f} vs baseline {base_out:.2f}, held-in R {new_in:.2f} vs "
            f"baseline {base_in:.2f}; the new ROM may not fall more than {tolerance:g} below the baseline on either"]


def credential_field(baseline: Baseline, base_in: float) -> dict[str, Any]:
    """The ``acx:baseline`` claim: which credential and ROM were compared, and both held-in r values."""
    return {"credentialDigest": baseline.credential_digest, "romDigest": baseline.cart.rom_digest,
            "heldOutR": baseline.held_out_r, "heldInR": base_in}
