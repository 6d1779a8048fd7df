"""The compiled (fastjsonschema) fast path never says "valid" where jsonschema says "invalid".

Differential test over a valid level credential and hundreds of structural
mutations of it, and over the other packaged schemas' documents.
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

import jsonschema

from acx_oci.crypto import generate_identity
from acx_oci.jsonio import _fast_check, first_error, schema, validator
from acx_oci.model import credential, statuslist

SCHEMAS = ["level-credential.schema.json", "capability.schema.json", "rom.schema.json", "trust.schema.json",
           "benchmark.schema.json", "policy.schema.json", "cartridge.schema.json"]


def level_credential() -> dict[str, Any]:
    v = generate_identity()
    now = datetime(2026, 11, 30, tzinfo=UTC)
    url = "https://status.example/lists/00000000-0000-4000-8000-000000000000"
    return credential.issue(credential.LevelClaim(previous_version="none",
        issuer_did=v.did, subject_id="urn:acx:cartridge:x", capability_id="acx-cap:sha256:" + "e" * 64,
        rating_mu=33.0, rating_sigma=1.2, games_played=90, acx_level=29, career_tier="principal", pass_rate=0.5,
        rom_digest="sha256:" + "a" * 64, manifest_digest="sha256:" + "b" * 64, benchmark_id="b",
        benchmark_version="1", benchmark_digest="sha256:" + "c" * 64, held_out_slice_digest="sha256:" + "d" * 64,
        evidence=[{"acx:digestMultibase": "sha256:" + "f" * 64}], status_entry=statuslist.status_entry(url, 7),
        valid_from=now, valid_until=now + timedelta(days=1), achievement_name="x"), v)


def paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += paths(v, (*prefix, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += paths(v, (*prefix, i))
    return out


def mutate(doc: Any, path: tuple[Any, ...], how: int) -> Any:
    doc = copy.deepcopy(doc)
    if not path:
        return [doc] if how % 2 else "x"
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    key = path[-1]
    replacements: list[Any] = [None, 1, 1.5, "", "x", [], {}, True, -1, "sha256:zz", [1], {"a": 1}]
    if how == len(replacements):
        if isinstance(parent, dict):
            del parent[key]
        else:
            parent.pop(key)
    else:
        parent[key] = replacements[how]
    return doc


def agree(instance: Any, name: str) -> None:
    reference_valid = not any(True for _ in validator(name).iter_errors(instance))
    assert (first_error(instance, name) is None) == reference_valid, (name, instance)


def test_fast_path_is_compiled_where_draft7_can_say_it() -> None:
    for name in SCHEMAS:
        schema(name)  # exists
        # benchmark.schema.json uses unevaluatedProperties: reference validator only
        assert (_fast_check(name) is None) == (name == "benchmark.schema.json"), name


def test_level_credential_mutations_agree() -> None:
    base = level_credential()
    assert first_error(base, "level-credential.schema.json") is None
    cases = 0
    for path in paths(base):
        for how in range(13):
            agree(mutate(base, path, how), "level-credential.schema.json")
            cases += 1
    assert cases > 300


def test_other_schemas_agree_on_examples_and_mutations() -> None:
    examples: dict[str, Any] = {
        "capability.schema.json": {"schemaVersion": "acx.capability/1", "taskType": "build-dag",
                                   "stack": ["pkg:pypi/x"], "domain": "data",
                                   "proficiency": {"score": None, "verified": False, "evidenceRefs": []}},
        "trust.schema.json": {"publishers": [{"id": "did:key:z6Mk"}], "gate": {"sigmaMax": 1.5, "minGames": 30}},
        "policy.schema.json": {"apiVersion": "acx.dev/policy/v1", "rules": [
            {"repositories": ["acx/*"],
             "require": {"capabilities": [{"taskType": "build-dag", "minTier": "senior"}]}}]},
    }
    for name, doc in examples.items():
        agree(doc, name)
        for path in paths(doc):
            for how in range(13):
                agree(mutate(doc, path, how), name)


def test_reference_error_message_is_kept() -> None:
    bad = level_credential()
    del bad["issuer"]
    err = first_error(bad, "level-credential.schema.json")
    assert isinstance(err, jsonschema.ValidationError) and "issuer" in err.message
