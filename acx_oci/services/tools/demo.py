"""``acx-oci demo``: the whole story, on an embedded OCI image layout (or a registry).

Earn a level, then try to fake it: keys; the demo benchmark sealed to an
independent verifier; a weak agent refused by the sigma gate; a strong agent
issued and pushed as a referrer; resolution to VERIFIED; then the gauntlet —
a self-issued credential, a credential copied onto a SAVE-edited cartridge,
and revocation — each of which must be rejected. Every step uses the same
library calls as the CLI; nothing is simulated but the agent (the reference
solver) and nothing is asserted that the code did not compute.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from acx_oci import reasons
from acx_oci.crypto import Identity, canonical, generate_identity, recipient_from_identity, sha256_digest, without_proof
from acx_oci.evaluation import FetchedAttestation, accept_credential, one_attestation
from acx_oci.model import CapabilityResolution, LevelCredential, Resolution, parse_capability
from acx_oci.model import benchmark as bmodel
from acx_oci.model import credential as cred_mod
from acx_oci.oci import StoreOptions, open_store
from acx_oci.services.artifacts import LoadedCartridge, init_directory, load_cartridge, push_attestation, push_directory
from acx_oci.services.artifacts import benchmark as bm
from acx_oci.services.consumer import cartridge_facts, resolve_cartridge
from acx_oci.services.verifier import AttestOutcome, AttestRequest, GateOptions, Issued, Refused, RegistryOptions
from acx_oci.services.verifier.attest import attest
from acx_oci.services.verifier.revoke import revoke
from acx_oci.solvers import ReferenceSolver
from acx_oci.trust import AcceptedBenchmark, Party, Trust, write_identity

CAPABILITY = "build-dag[snowflake+airflow+dbt]@data-engineering"
VERIFIER_DID = "did:web:verifier.acx.example"


@dataclass
class DemoResult:
    """Each demo step's name and whether it held: the demo is a test a newcomer can run."""

    checks: list[tuple[str, bool]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True only if there were steps and every one passed."""
        return bool(self.checks) and all(passed for _, passed in self.checks)


def _mark(ok: bool) -> str:
    return "✅" if ok else "❌ UNEXPECTED"


def _short(digest: str) -> str:
    return digest[:24] + "…"


def _codes(res: CapabilityResolution, attestation_digest: str) -> list[str]:
    """Reason codes the resolver gave one attestation."""
    return sorted({c for r in res.rejected if r.digest == attestation_digest for c in r.codes})


@dataclass
class _Demo:
    """What every stage of the demo shares: where it writes, how it speaks, and the checks it has made."""

    workdir: Path
    registry: str | None
    options: StoreOptions | None
    say: Callable[[str], None]
    clock: Callable[[], datetime]
    run_id: str
    result: DemoResult = field(default_factory=DemoResult)

    def ref(self, repo: str, tag: str) -> str:
        """A fresh repository per run on a registry; a layout directory per repository on disk."""
        if self.registry:
            return f"{self.registry}/acx-demo/{self.run_id}/{repo}:{tag}"
        return f"oci:{self.workdir / 'oci' / repo}:{tag}"

    def check(self, label: str, passed: bool, detail: str = "") -> None:
        self.result.checks.append((label, passed))
        self.say(f"{label}: {detail} {_mark(passed)}".replace("  ", " "))

    def resolved(self, store_ref: str, trust: Trust) -> Resolution:
        with open_store(store_ref, self.options) as store:
            return resolve_cartridge(store, store_ref.rsplit(":", 1)[1], trust, now=self.clock())


def run_demo(workdir: Path, registry: str | None = None, options: StoreOptions | None = None,
             say: Callable[[str], None] = print, now: Callable[[], datetime] | None = None) -> DemoResult:
    """Run the demo in ``workdir``; ``registry`` (HOST:PORT) instead of an on-disk layout if given."""
    clock = now or (lambda: datetime.now(UTC))
    workdir.mkdir(parents=True, exist_ok=True)
    run_id = clock().strftime("%Y%m%d%H%M%S") + "-" + os.urandom(3).hex()
    demo = _Demo(workdir, registry, options, say, clock, run_id)
    ref, check, result = demo.ref, demo.check, demo.result
    where = f"registry {registry}" if registry else f"OCI image layout under {workdir / 'oci'}"
    say(f"ACX DEMO: earn a level, then try to fake it  ({where})")
    say("")
    publisher, verifier = _identities(demo)
    bench, trust = _benchmark(demo, verifier)
    refs = _cartridges(demo, publisher)

    def run(name: str, competence: float, games: int) -> AttestOutcome:
        return attest(AttestRequest(
            cartridge_ref=refs[name], benchmark_ref=ref("benchmark", bench.version), verifier=verifier,
            solver=ReferenceSolver(competence), out_dir=workdir / "attest" / name,
            state_dir=workdir / "verifier-state", gate=GateOptions(games=games, cooldown=timedelta(0)),
            registry=RegistryOptions(store_options=options or StoreOptions()), clock=clock))

    weak = run("weak", 14, 50)
    wr = weak.result if not isinstance(weak, Refused) else None
    if wr is not None:
        check("weak agent (competence 14)", weak.status == "not-issued",
              f"NOT ISSUED — {'; '.join(weak.reasons)} | mu={wr.rating.mu:.2f} sigma={wr.rating.sigma:.3f} "
              f"games={wr.rated} R={wr.conservative:.2f} tier={wr.tier}")
    else:
        check("weak agent (competence 14)", False, f"refused: {'; '.join(weak.reasons)}")
    strong = run("strong", 33, 90)
    if not isinstance(strong, Issued) or strong.attestation_digest is None:
        check("strong agent (competence 33)", False, f"{strong.status}: {'; '.join(strong.reasons)}")
        return result
    sr = strong.result
    check("strong agent (competence 33)", True,
          f"ISSUED | mu={sr.rating.mu:.2f} sigma={sr.rating.sigma:.3f} games={sr.rated} "
          f"passRate={sr.pass_rate:.0%} R={sr.conservative:.2f} => acxLevel={sr.level} tier={sr.tier}")
    say(f"  attestation {strong.attestation_digest} pushed as a referrer of {strong.manifest_digest}")

    cart = _verify_and_resolve(demo, strong.credential, refs["strong"], trust)
    _gauntlet(demo, strong.credential, strong.attestation_digest, cart, refs["strong"], publisher, verifier, trust)
    say("")
    if result.ok:
        say("PROVABLE LEVEL OK — level earned from re-run, cryptographically verified, unfakeable")
        say("(the demo's agents are simulated by the reference solver; `attest` on a cartridge with a runtime "
            "runs the signed ROM itself in a proven sandbox — see docs/attest-a-real-agent.md)")
    else:
        failed = [label for label, ok in result.checks if not ok]
        say(f"DEMO FAILED — unexpected results: {'; '.join(failed)}")
    return result


def _identities(demo: _Demo) -> tuple[Identity, Identity]:
    """The publisher signs ROMs; an independent verifier grades them."""
    keys = demo.workdir / "keys"
    publisher = generate_identity()
    verifier = generate_identity(VERIFIER_DID)
    write_identity(keys / "publisher", publisher)
    write_identity(keys / "verifier", verifier)
    demo.say(f"publisher {publisher.did}")
    demo.say(f"verifier  {verifier.did} (independent of the publisher)")
    return publisher, verifier


def _benchmark(demo: _Demo, verifier: Identity) -> tuple[bmodel.Benchmark, Trust]:
    """The benchmark, its held-out slice sealed to the verifier, and the trust file that accepts both."""
    doc = bmodel.demo_document()
    suite_dir = demo.workdir / "benchmark"
    bm.write_suite_dir(suite_dir, doc)
    bench, seal_key = bm.load_suite_dir(suite_dir)
    with open_store(demo.ref("benchmark", bench.version), demo.options) as bstore:
        pushed_bench = bm.push(bstore, bench, seal_key, [recipient_from_identity(verifier)], bench.version)
    demo.say(f"benchmark {bench.id}@{bench.version}: {len(bench.tasks)} tasks, held-out slice digest "
             f"{_short(pushed_bench.held_out_slice_digest)}")
    trust = Trust(
        verifiers=[Party(verifier.did, verifier.did_document())],
        benchmarks=[AcceptedBenchmark(bench.id, bench.version, pushed_bench.benchmark_digest,
                                      pushed_bench.held_out_slice_digest)],
        solvers=("rom", "reference"),  # the demo's agents are simulated: its levels are labelled so
    )
    (demo.workdir / "trust.json").write_text(json.dumps({
        "verifiers": [{"id": verifier.did, "didDocument": "keys/verifier.did.json"}],
        "benchmarks": [{"id": bench.id, "version": bench.version, "digest": pushed_bench.benchmark_digest,
                        "heldOutSliceDigest": pushed_bench.held_out_slice_digest}],
        "solvers": ["rom", "reference"],
    }, indent=2) + "\n")
    return bench, trust


def _cartridges(demo: _Demo, publisher: Identity) -> dict[str, str]:
    """Two cartridges claiming the capability, signed and pushed: name -> reference."""
    cap = parse_capability(CAPABILITY)
    refs: dict[str, str] = {}
    for name in ("weak", "strong"):
        d = demo.workdir / "cartridges" / name
        init_directory(d, f"io.github.acx-demo/{name}-dag-agent", "1.0.0", [cap])
        with open_store(demo.ref(name, "1.0.0"), demo.options) as cstore:
            pushed = push_directory(cstore, d, publisher, "1.0.0")
        refs[name] = demo.ref(name, "1.0.0")
        demo.say(f"{name} cartridge ROM digest {pushed.rom_digest}")
    demo.say("")
    return refs


def _verify_and_resolve(demo: _Demo, credential: LevelCredential, strong_ref: str, trust: Trust) -> LoadedCartridge:
    """The issued credential verifies on its own, and resolution turns the claim into VERIFIED."""
    with open_store(strong_ref, demo.options) as sstore:
        cart = load_cartridge(sstore, "1.0.0", trust)
    status_list = json.loads((demo.workdir / "attest" / "strong" / "status-list.json").read_text())
    raw = (demo.workdir / "attest" / "strong" / "credential.json").read_bytes()
    item = FetchedAttestation(sha256_digest(raw), credential=credential, credential_digest=sha256_digest(raw),
                              records_bundled=True)  # (its records are replayed by the resolve below)
    verdict = accept_credential(one_attestation(item, (status_list,)), cartridge_facts(cart), trust, demo.clock())
    demo.check("credential verification", verdict.verified,
               "VALID" if verdict.verified else f"INVALID {verdict.codes}")
    res = demo.resolved(strong_ref, trust).capabilities[0]
    b = res.best
    demo.check("capability build-dag effective proficiency (resolved from attestation)", res.effective == "VERIFIED",
               f"SIMULATED tier={b.career_tier} mu={b.mu:.2f} sigma={b.sigma:.3f} (reference solver: the demo "
               "suite is a simulation, accepted because its trust file lists solvers: [rom, reference])"
               if b else "NOT VERIFIED")
    demo.check("ROM signature after attaching attestation", cart.signature_status == "warning",
               cart.status_display)
    demo.say("")
    return cart


def _gauntlet(demo: _Demo, credential: LevelCredential, attestation_digest: str, cart: LoadedCartridge,
              strong_ref: str, publisher: Identity, verifier: Identity, trust: Trust) -> None:
    """Three ways to fake a level, each of which must be rejected with its reason code."""
    # 1: the publisher grades its own cartridge
    forged = without_proof(credential.to_json())
    forged["issuer"] = {"id": publisher.did, "type": ["Profile"]}
    forged = cred_mod.sign_credential(forged, publisher, publisher.verification_method, demo.clock())
    with open_store(strong_ref, demo.options) as sstore:
        forged_att = push_attestation(sstore, cart.manifest.descriptor, canonical(forged), [])
    res = demo.resolved(strong_ref, trust).capabilities[0]
    codes = _codes(res, forged_att.digest)
    demo.check("anti-gaming — self-issued credential", reasons.SELF_ISSUED in codes and res.effective == "VERIFIED",
               f"REJECTED {codes} (the honest credential still verifies)")

    # 2: copy the credential onto a SAVE-edited cartridge (same ROM, new manifest)
    d = demo.workdir / "cartridges" / "strong"
    (d / "save.json").write_text('{"notes": ["edited after the attestation"]}\n')
    edited_ref = demo.ref("strong", "edited")
    with open_store(edited_ref, demo.options) as estore:
        edited = push_directory(estore, d, publisher, "edited")
        copied = push_attestation(estore, estore.resolve(edited.manifest_digest),
                                  (demo.workdir / "attest" / "strong" / "credential.json").read_bytes(), [])
    res = demo.resolved(edited_ref, trust).capabilities[0]
    codes = _codes(res, copied.digest)
    demo.check("anti-transplant — credential copied onto a SAVE-edited cartridge",
               reasons.MANIFEST_MISMATCH in codes and res.effective == "unproven",
               f"REJECTED {codes} (same ROM {_short(edited.rom_digest)}, new manifest "
               f"{_short(edited.manifest_digest)})")

    # 3: contamination found after issuance -> revoke
    revoke(demo.workdir / "verifier-state", attestation_digest, verifier, demo.clock(), "demo: contamination",
           demo.options)
    res = demo.resolved(strong_ref, trust).capabilities[0]
    codes = _codes(res, attestation_digest)
    demo.check("revocation — status bit set", reasons.REVOKED in codes and res.effective == "unproven",
               f"REVOKED -> build-dag {res.effective} {codes}")
