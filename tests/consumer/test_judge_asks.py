"""The judge asks, the caller fetches (issue 36 build 2, python-tuf's shape): a did:web document beyond the trust
file is a :class:`NeedDidDocument` the caller answers, bounded so a hostile input cannot make it ask (or loop)
without end; the proof cache is data both ways; and nothing under ``evaluation/`` is handed a callable to call.

Real crypto, no network: the test itself plays the caller and answers with the documents it holds.
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from acx_oci.crypto import Identity, canonical, counting_verifications, generate_identity, sha256_digest
from acx_oci.errors import DidError
from acx_oci.evaluation import Answer, Judgement, Material, NeedReplay, judging
from acx_oci.evaluation.did_documents import MAX_DID_DOCUMENTS
from acx_oci.evaluation.judge import judge_credentials
from acx_oci.evaluation.judge_input import NeedDidDocument
from acx_oci.jsonio import parse_json
from acx_oci.services.consumer import DidFetcher, answer_needs
from acx_oci.trust import Party

from ..support.cli import cli
from ..support.forgery_world import MANIFEST, make_world
from ..support.games import play_level
from ..support.httpserver import serving_files
from .test_judge import BENCH, CAP, NOW, ROM, URL, Bytes, attestation
from .test_vc_cli import NOW_ARG
from .test_vc_cli import _level_files as vc_files

WEB = "did:web:verifier.example"


class WebWorld(Bytes):
    """test_judge's world with a did:web verifier whose document the trust file does not hold."""

    def __init__(self) -> None:
        super().__init__()
        self.verifier = generate_identity(WEB)
        self.played = play_level(self.verifier, ROM, BENCH, 20)  # the records too are the did:web verifier's
        self.trust = replace(self.trust, verifiers=[Party(WEB)])
        self.credential = canonical(self.issue(self.verifier))

    def material(self) -> Material:
        return Material((attestation(self.credential),), {URL: (parse_json(self.status_list(), "list"),)})


def run(steps: Any, answer: Any) -> tuple[Judgement, list[str]]:
    """Play the caller: answer every NeedDidDocument with ``answer(did)``; no replay asked. Returns what was asked."""
    asked: list[str] = []
    try:
        need = next(steps)
        while True:
            assert isinstance(need, NeedDidDocument), need
            asked.append(need.did)
            need = steps.send(answer(need.did))
    except StopIteration as done:
        return done.value, asked


def test_the_judge_asks_once_for_a_did_web_document_and_accepts_with_the_answer() -> None:
    w = WebWorld()
    judgement, asked = run(judging(w.material(), w.facts, w.trust, NOW, ask_dids=True),
                           lambda d: w.verifier.did_document() if d == WEB else None)
    assert asked == [WEB]  # the credential's proof, its status list, its records: one DID, asked once
    (acc,) = judgement.accepted[CAP.id]
    assert acc.issuer == WEB and acc.proof_keys == frozenset({w.verifier.public_bytes})
    assert judgement.verifications == 1 and judgement.status_seen == {(URL, WEB): 1}


def test_offline_or_unanswered_the_did_web_fails_closed_with_why() -> None:
    w = WebWorld()
    offline = judge_credentials(w.material(), w.facts, w.trust, NOW)  # asks nothing: trust file only
    assert "did_unresolvable" in offline.rejected[CAP.id][0].codes
    failed, asked = run(judging(w.material(), w.facts, w.trust, NOW, ask_dids=True),
                        lambda d: DidError(f"did:web {d}: cannot fetch https://verifier.example: 404"))
    assert asked == [WEB]
    (rej,) = failed.rejected[CAP.id]
    assert "did_unresolvable" in rej.codes and any("404" in m for m in rej.messages)


def test_a_document_for_another_did_or_garbage_counts_for_nothing_and_is_not_asked_again() -> None:
    w, mallory = WebWorld(), generate_identity("did:web:mallory.example")
    for answer in (mallory.did_document(), {**w.verifier.did_document(), "id": "did:web:mallory.example"}, 42,
                   ["not", "a", "document"]):
        judgement, asked = run(judging(w.material(), w.facts, w.trust, NOW, ask_dids=True), lambda _d, a=answer: a)
        assert asked == [WEB] and not judgement.accepted[CAP.id]
        assert "did_unresolvable" in judgement.rejected[CAP.id][0].codes


def _flood(w: WebWorld, n: int) -> tuple[Material, dict[str, Identity]]:
    """``n`` credentials each by its own did:web (forged: signed by a key the answered document does not hold)."""
    signers = {f"did:web:v{i}.example": generate_identity(f"did:web:v{i}.example") for i in range(n)}
    items = []
    for signer in signers.values():
        raw = canonical(w.issue(signer))
        doc = parse_json(raw, "credential")
        assert isinstance(doc, dict)
        doc["credentialSubject"]["acx:achievement"] = "forged"  # changed after signing: its proof fails
        items.append(attestation(canonical(doc)))
    return Material(tuple(items), {URL: (parse_json(w.status_list(), "list"),)}), signers


def test_a_flood_of_did_web_issuers_costs_a_bounded_number_of_asks_and_ends() -> None:
    w = WebWorld()
    material, signers = _flood(w, MAX_DID_DOCUMENTS + 18)
    # a hostile caller's side too: every answer is a well-formed document for the DID asked
    judgement, asked = run(judging(material, w.facts, w.trust, NOW, ask_dids=True),
                           lambda d: signers[d].did_document() if d in signers else None)
    assert len(asked) == len(set(asked)) == MAX_DID_DOCUMENTS  # each DID at most once, and no more than the bound
    assert judgement.verifications == len(signers)  # every credential decided (rounds are bounded per credential)
    rejected = judgement.rejected[CAP.id]
    assert len(rejected) == len(signers) and not judgement.accepted[CAP.id]
    refused = [r for r in rejected if any("the bound" in m for m in r.messages)]
    assert WEB in asked  # (the status list's issuer: its proof is checked too)
    assert len(refused) == len(signers) - len(set(asked) & set(signers)) == len(signers) - MAX_DID_DOCUMENTS + 1
    assert all("did_unresolvable" in r.codes for r in refused)
    assert all("proof_invalid" in r.codes for r in rejected if r not in refused)


def test_the_proof_cache_is_data_both_ways() -> None:
    w = Bytes()
    m = Material((attestation(w.credential),), {URL: (parse_json(w.status_list(), "list"),)})
    with counting_verifications() as first:
        fresh = judge_credentials(m, w.facts, w.trust, NOW)
    digest = sha256_digest(w.credential)
    assert fresh.proofs_verified == {digest: frozenset({w.verifier.public_bytes})}  # for the caller to keep
    with counting_verifications() as again:
        known = judge_credentials(replace(m, known_proofs=fresh.proofs_verified), w.facts, w.trust, NOW)
    assert known.accepted == fresh.accepted and known.proofs_verified == {}  # nothing new to keep
    assert again[0] < first[0]  # the credential's signatures were not checked again (the list's still are)
    planted = judge_credentials(replace(m, known_proofs={digest: frozenset({b"\x01" * 32})}), w.facts, w.trust, NOW)
    assert planted.proofs_verified == fresh.proofs_verified  # another key named: checked again, and kept anew


def test_answers_of_the_wrong_kind_decide_nothing() -> None:
    w = Bytes()
    m = Material((attestation(w.credential),), {URL: (parse_json(w.status_list(), "list"),)})
    steps = judging(m, w.facts, w.trust, NOW, replay=True)
    need = next(steps)
    assert isinstance(need, NeedReplay)
    wrong: Answer = w.verifier.did_document()  # a document where a replay's check was asked for
    try:
        steps.send(wrong)
    except StopIteration as done:
        judgement: Judgement = done.value
    assert not judgement.accepted[CAP.id] and judgement.unconfirmed  # undecided, never accepted


JUDGE_FILES = ("judge.py", "judge_input.py", "accept.py", "attempt_history.py", "did_documents.py")


def test_nothing_in_the_judge_takes_a_callable() -> None:
    """No parameter of the judge's modules is typed as a callable (Callable, KeyResolver, Confirm, ...):
    what it needs from outside it asks for."""
    root = Path(__file__).resolve().parents[2] / "acx_oci" / "evaluation"
    callables = ("Callable", "KeyResolver", "Confirm", "Replay", "Fetch", "KnownProofs")
    found = []
    for name in JUDGE_FILES:
        tree = ast.parse((root / name).read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                for arg in args:
                    names = {n.id if isinstance(n, ast.Name) else n.attr
                             for n in ast.walk(arg.annotation or ast.Constant(None))
                             if isinstance(n, ast.Name | ast.Attribute)}
                    if names & set(callables):
                        found.append(f"{name}:{node.name}({arg.arg}: {ast.unparse(arg.annotation or ast.Name())})")
    assert not found, found


@pytest.fixture()
def did_host() -> Iterator[tuple[str, dict[str, bytes]]]:
    """A loopback HTTP server for did:web documents (``--did-web-base-url``), path -> bytes."""
    with serving_files() as served:
        yield served


def test_vc_verify_answers_the_judge_with_the_did_web_document_it_fetches(
        tmp_path: Path, did_host: tuple[str, dict[str, bytes]]) -> None:
    """End to end: the trust file names the did:web verifier without its document; ``vc verify --allow-network``
    fetches it when the judge asks (with and without a trust file), and without the flag it fails closed."""
    base, files = did_host
    w = make_world()
    f = vc_files(tmp_path, w)
    trust = tmp_path / "trust.yaml"
    trust.write_text(trust.read_text().replace(", didDocument: verifier.did.json", ""))
    level = ("--trust", trust, "--rom-digest", ROM, "--manifest-digest", MANIFEST, "--status-list", f["list"],
             "--now", NOW_ARG, "--json")
    offline = cli("vc", "verify", f["cred"], *level)
    assert offline.exit_code == 1 and "did_unresolvable" in json.loads(offline.stdout)["codes"], offline.output
    online = ("--allow-network", "--did-web-base-url", base)
    unserved = cli("vc", "verify", f["cred"], *level, *online)
    assert unserved.exit_code == 1 and "did_unresolvable" in json.loads(unserved.stdout)["codes"]
    files["/.well-known/did.json"] = json.dumps(w.trust.verifiers[0].did_document).encode()
    served = cli("vc", "verify", f["cred"], *level, *online)
    assert served.exit_code == 0 and json.loads(served.stdout)["verified"], served.output
    proof_only = cli("vc", "verify", f["cred"], "--now", NOW_ARG, "--json", *online)
    assert proof_only.exit_code == 0 and json.loads(proof_only.stdout)["mode"] == "proof-only", proof_only.output
    assert cli("vc", "verify", f["cred"], "--now", NOW_ARG, "--json").exit_code == 1  # no document, no network
    single = json.loads(f["cred"].read_text())
    single["proof"] = single["proof"][0]  # one proof as an object, not an array: its document is fetched too
    (tmp_path / "single.json").write_text(json.dumps(single))
    assert cli("vc", "verify", tmp_path / "single.json", "--now", NOW_ARG, "--json", *online).exit_code == 0


def test_resolves_answerer_fetches_each_did_web_document_once(did_host: tuple[str, dict[str, bytes]]) -> None:
    """``answer_needs`` with a :class:`DidFetcher` (resolve's side): the judge's need answered over HTTP, the same
    document serving replay's issuer keys, and not fetched again."""
    base, files = did_host
    w = WebWorld()
    files["/.well-known/did.json"] = json.dumps(w.verifier.did_document()).encode()
    dids = DidFetcher(w.trust, base)
    m = w.material()
    copies = replace(m, attestations=tuple(replace(m.attestations[0], digest=f"sha256:{i:064x}") for i in range(5)))
    judgement = answer_needs(judging(copies, w.facts, w.trust, NOW, ask_dids=True), dids=dids)
    assert len(judgement.accepted[CAP.id]) == 1  # (the other copies: superseded by it, unverified)
    assert {r.codes for r in judgement.rejected[CAP.id]} == {("superseded",)}
    del files["/.well-known/did.json"]  # asked once: the answer is remembered, nothing is fetched again
    assert dids.keys(WEB) == [(w.verifier.verification_method, w.verifier.public_bytes)]
    again = answer_needs(judging(copies, w.facts, w.trust, NOW, ask_dids=True), dids=dids)
    assert again.accepted == judgement.accepted
    unserved = answer_needs(judging(m, w.facts, w.trust, NOW, ask_dids=True), dids=DidFetcher(w.trust, base))
    assert "did_unresolvable" in unserved.rejected[CAP.id][0].codes
