"""Attempt identity, counting and cooldowns end to end (issue 33 item 4, issue 34 items 2 and 3).

A new cartridge id is no new try for a verifier that asks (``--cooldown-scope publisher``) and no hidden try
for a consumer that asks (``@maxAttempts=N/WINDOW/publisher``); a refusal before any game starts no cooldown;
two state directories of one verifier key do not hide an attempt from ``maxAttempts``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from acx_oci.crypto import did_key
from acx_oci.model import credential_attempt, parse_attempt_record
from acx_oci.services.verifier.ledger import Ledger
from acx_oci.trust import load_identity

from ..support.cli import cli, ok
from .test_attempts import CAP, DID, World, _attest, _world


def _resolve(w: World, ref: str, *extra: str) -> tuple[int, str]:
    res = cli("resolve", ref, "--trust", w.trust, *extra)
    return res.exit_code, res.output


def test_a_new_cartridge_id_of_the_same_publisher_is_seen_together(registry: str, tmp_path: Path) -> None:
    w = _world(tmp_path, registry)
    first = _attest(w, registry, "1.0.0", "run1")
    assert first.exit_code == 0, first.output
    renamed = tmp_path / "renamed"  # same publisher key, same capability, another cartridge id
    ok(cli("cartridge", "init", str(renamed), "--id", "io.example/dag-renamed", "--version", "1.0.0",
           "--capability", CAP))
    ok(cli("cartridge", "push", str(renamed), f"{registry}/acme/renamed:1.0.0", "--key",
           str(tmp_path / "publisher.key"), "--json"))

    def attest_renamed(out: str, *extra: str) -> Any:
        return cli("attest", f"{registry}/acme/renamed:1.0.0", "--benchmark", f"{registry}/acme/bench:2026.07.1",
                   "--key", w.key, "--issuer", DID, "--competence", "33", "--state", tmp_path / "state",
                   "-o", tmp_path / out, "--json", *extra)

    refused = attest_renamed("run2", "--cooldown-scope", "publisher")
    assert refused.exit_code == 2, refused.output
    doc = json.loads(refused.output)
    assert doc["issued"] is False and doc["reasons"][0].startswith("cooldown: attempt 1 ")
    assert "same publisher key" in doc["reasons"][0] and "io.example/dag" in doc["reasons"][0]
    # the default scope is unchanged: a publisher's other agent is not blocked, but it is counted
    again = attest_renamed("run3")
    assert again.exit_code == 0, again.output
    publisher = did_key(load_identity(tmp_path / "publisher.key").public_bytes)
    count = credential_attempt(json.loads((tmp_path / "run3" / "credential.json").read_text()))
    assert count is not None and (count.sequence, count.publisher, count.publisher_sequence) == (1, publisher, 2)
    assert count.attempt_id and len(count.attempt_id) == 32
    ref = f"{registry}/acme/renamed:1.0.0"
    code, text = _resolve(w, ref)
    assert code == 0 and "best of 2 attempts by this publisher in 1 d" in text, text
    assert _resolve(w, ref, "--require", "build-dag>=1@maxAttempts=1/30d")[0] == 0  # one cartridge: one attempt
    code, text = _resolve(w, ref, "--require", "build-dag>=1@maxAttempts=1/30d/publisher")
    assert code == 1 and "too_many_attempts" in text and "2 attempts by this publisher" in text, text


def test_a_planning_refusal_starts_no_cooldown(registry: str, tmp_path: Path) -> None:
    """Too few post-cutoff exams: refused before any game (exit 1), so the corrected ROM may run at once."""
    w = _world(tmp_path, registry)
    agent = tmp_path / "late"
    ok(cli("cartridge", "init", str(agent), "--id", "io.example/late", "--version", "1.0.0", "--capability", CAP,
           "--runtime", "python3 /rom/skills/agent.py", "--training-cutoff", "2099-01-01"))
    ok(cli("cartridge", "push", str(agent), f"{registry}/acme/dag:late", "--key", str(tmp_path / "publisher.key")))
    late = _attest(w, registry, "late", "run1")
    assert late.exit_code == 1, late.output
    assert json.loads(late.output)["reasons"][0].startswith("insufficient_post_cutoff_exams")
    spec = agent / "cartridge.yaml"
    spec.write_text(spec.read_text().replace("2099-01-01", "2020-01-01"))
    ok(cli("cartridge", "push", str(agent), f"{registry}/acme/dag:fixed", "--key", str(tmp_path / "publisher.key")))
    fixed = _attest(w, registry, "fixed", "run2")
    assert fixed.exit_code == 0, fixed.output  # not refused for a cooldown
    count = credential_attempt(json.loads((tmp_path / "run2" / "credential.json").read_text()))
    assert count is not None and (count.sequence, count.previous_attempts) == (1, 0)  # the refusal was no attempt
    with Ledger(tmp_path / "state") as led:
        states = [(a.state, a.starts_cooldown) for a in led.attempts()]
    assert states == [("refused", False), ("issued", True)]


def test_two_state_directories_of_one_key_do_not_hide_an_attempt(registry: str, tmp_path: Path) -> None:
    w = _world(tmp_path, registry)
    weak = _attest(w, registry, "1.0.0", "run1", "--games", "30", competence="14")
    assert weak.exit_code == 1, weak.output  # NOT ISSUED: a signed attempt record, "attempt 1" of state one
    record = parse_attempt_record(json.loads((tmp_path / "run1" / "attempt-record.json").read_text()))
    publisher = did_key(load_identity(tmp_path / "publisher.key").public_bytes)
    assert (record.attempt.sequence, record.attempt.publisher, record.attempt.publisher_sequence) == (1, publisher, 1)
    strong = cli("attest", f"{registry}/acme/dag:1.0.0", "--benchmark", f"{registry}/acme/bench:2026.07.1",
                 "--key", w.key, "--issuer", DID, "--competence", "33", "--state", tmp_path / "state2",
                 "-o", tmp_path / "run2", "--json")
    assert strong.exit_code == 0, strong.output  # "attempt 1" again, of state two
    ref = f"{registry}/acme/dag:1.0.0"
    res = cli("resolve", ref, "--trust", w.trust, "--json")
    doc = json.loads(res.output[res.output.index("{"):])
    (attempts,) = [c["attempts"] for c in doc["capabilities"] if "attempts" in c]
    assert attempts["total"] == 2 and len({e["attemptId"] for e in attempts["entries"]}) == 2, attempts
    code, text = _resolve(w, ref, "--require", "build-dag>=1@maxAttempts=1/30d")
    assert code == 1 and "too_many_attempts" in text, text
    policy = tmp_path / "policy.yaml"
    policy.write_text("apiVersion: acx.dev/policy/v1\nrules:\n  - repositories: ['acme/*']\n    require:\n"
                      "      capabilities:\n        - {taskType: build-dag, minLevel: 1, maxAttempts: {count: 1, "
                      "window: 30d}}\n")
    checked = cli("policy", "check", ref, "--policy", policy, "--trust", w.trust)
    assert checked.exit_code == 1 and "too_many_attempts" in checked.output, checked.output
