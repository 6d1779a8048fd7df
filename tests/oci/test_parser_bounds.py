"""Hostile shapes (issue 14 item 5, issue 15 item 6): depth caps before parsing, integrity before content.

* every parser of outside JSON/YAML refuses nesting past ``MAX_DEPTH`` with ``schema_invalid`` before a
  RecursionError can happen (50,000 nested arrays: a ShapeError, not a traceback);
* one hostile referrer (a credential that is 50,000 nested arrays) is rejected with ``schema_invalid`` while
  the honest credential next to it stays VERIFIED on the real registry, and the gateway still serves (200);
* a malformed credential is one ``schema_invalid`` with the schema's message, not a cascade quoting None;
* a ROM edited after signing is ``tampered`` (exit 1) even when the edit also breaks its schema.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from acx_oci.crypto import canonical
from acx_oci.errors import ShapeError, TamperedError, UsageError
from acx_oci.evaluation import load_policy
from acx_oci.evaluation.verify import verify_level_credential
from acx_oci.files import load_yaml_or_json_file
from acx_oci.gateway import GatewayConfig, RunningGateway, start_in_thread
from acx_oci.jsonio import MAX_DEPTH, loads, nesting_depth, parse_json, parse_yaml
from acx_oci.model import build_rom, sign_rom
from acx_oci.oci import (
    ANNOTATION_TITLE,
    ARTIFACT_ATTESTATION,
    EMPTY_JSON,
    MANIFEST_ACCEPT,
    MEDIA_EMPTY,
    MEDIA_MANIFEST,
    MEDIA_VC,
    Descriptor,
    Store,
    build_manifest,
    open_store,
    parse_manifest,
    referrer_tag,
)
from acx_oci.services.artifacts import ANN_CAPABILITY, load_cartridge
from acx_oci.services.artifacts.cartridge import push_parts, read_directory
from acx_oci.trust import load_identity, load_trust

from ..support.cli import cli, ok
from ..support.forgery_world import World as ForgeryWorld
from ..support.forgery_world import make_world
from ..support.policy_world import World, attest, build_world, push_cartridge

DEEP = 50_000
HOSTILE_CREDENTIAL = b"[" * DEEP + b"]" * DEEP


# --------------------------------------------------------------------------- the parsers themselves

def test_depth_is_counted_outside_strings_only() -> None:
    assert nesting_depth(b'{"a": [1, {"b": "[[[[{{{{"}]}') == 3
    assert nesting_depth(b'"\\"[[["') == 0
    assert nesting_depth("[" * 70 + "]" * 70) == 70


def test_the_scan_is_linear_on_escaped_quotes() -> None:
    """An unterminated string of 3,000,000 escaped quotes: a pattern that restarts at each one is quadratic
    (about 22 s for 40,000 of them, measured before the fix); this one scans it once."""
    raw = b"[" * (MAX_DEPTH + 6) + b'"' + b'\\"' * 3_000_000
    assert nesting_depth(raw) == MAX_DEPTH + 6
    with pytest.raises(ShapeError):
        parse_json(raw, "credential")


def test_fifty_thousand_nested_arrays_are_schema_invalid_not_a_recursion_error() -> None:
    with pytest.raises(ShapeError) as exc:
        parse_json(HOSTILE_CREDENTIAL, "credential")
    assert exc.value.code == "schema_invalid" and exc.value.exit_code == 2
    assert f"nested deeper than {MAX_DEPTH}" in str(exc.value)
    with pytest.raises(ShapeError):  # the manifest parser, and objects as well as arrays
        parse_manifest(b'{"a":' * DEEP + b"1" + b"}" * DEEP)
    with pytest.raises(ValueError):  # callers that catch ValueError (registry, layout, gateway) still do
        loads(b"[" * DEEP)


def test_the_cap_is_exact() -> None:
    assert loads(b"[" * MAX_DEPTH + b"]" * MAX_DEPTH) is not None
    with pytest.raises(ShapeError):
        loads(b"[" * (MAX_DEPTH + 1) + b"]" * (MAX_DEPTH + 1))


@pytest.mark.parametrize("raw", [b"NaN", b"[Infinity]", b"1e400", b"-1e999", b"1" + b"0" * 30])
def test_numbers_json_has_not_are_malformed(raw: bytes) -> None:
    with pytest.raises(UsageError, match="expected JSON"):
        parse_json(raw, "doc")


def test_yaml_depth_and_alias_expansion_are_bounded(tmp_path: Path) -> None:
    with pytest.raises(ShapeError):
        parse_yaml("[" * DEEP, "policy file")
    with pytest.raises(ShapeError):
        parse_yaml("a:\n" + "".join(" " * i + "- \n" for i in range(1, 200)), "trust file")
    lines = ["a0: &a0 [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]" for i in range(1, 9)]  # 10^9 nodes expanded
    with pytest.raises(ShapeError, match="aliases expanded"):
        parse_yaml("\n".join(lines), "trust file")
    assert parse_yaml("a: &x [1, 2]\nb: *x\n", "t") == {"a": [1, 2], "b": [1, 2]}  # ordinary aliases still work
    trust = tmp_path / "trust.yaml"
    trust.write_text("publishers: " + "[" * DEEP + "]" * DEEP + "\n")
    with pytest.raises(ShapeError):
        load_trust(trust)
    res = cli("resolve", "oci:/nonexistent:1", "--trust", str(trust))
    assert res.exit_code == 2 and "schema_invalid" in res.output and "Traceback" not in res.output
    trust.write_text("publishers: [" + "[" * 30)  # malformed (unclosed): one line, exit 2
    with pytest.raises(UsageError, match="expected YAML"):
        load_yaml_or_json_file(trust, "trust file")


# --------------------------------------------------------------------------- one verdict per malformed credential

@pytest.fixture(scope="module")
def forgery() -> ForgeryWorld:
    return make_world()


def test_malformed_credential_is_one_schema_invalid_with_the_schemas_message(forgery: ForgeryWorld) -> None:
    cred = json.loads(json.dumps(forgery.unsigned))
    cred["credentialSubject"] = 5
    signed = forgery.resign(cred)
    result = verify_level_credential(signed, forgery.ctx())
    assert result.codes == ["schema_invalid"], result.to_json()
    message = next(c.message for c in result.checks if not c.ok)
    assert "credentialSubject" in message and "None" not in message
    # an unsigned malformed one: the schema's verdict and the proof's, nothing else
    unsigned = {k: v for k, v in cred.items() if k != "proof"}
    assert verify_level_credential(unsigned, forgery.ctx()).codes == ["schema_invalid", "proof_missing"]


# --------------------------------------------------------------------------- integrity before content

@pytest.fixture()
def agent(tmp_path: Path) -> tuple[Path, Path]:
    ok(cli("keygen", str(tmp_path / "pub")))
    ok(cli("cartridge", "init", str(tmp_path / "agent"), "--id", "io.github.acme/dag-agent", "--version", "1.0.0",
           "--capability", "build-dag[snowflake+airflow+dbt]@data-engineering"))
    return tmp_path / "agent", tmp_path / "pub.key"


def push_edited_after_signing(agent: tuple[Path, Path], store: Store, tag: str, edit: str) -> tuple[Any, Any]:
    """Sign the agent's ROM, then edit it (``schema``: breaks rom.schema.json; else a wrong capability id) and push
    it with the old signature. Returns the edited ROM and the directory's source."""
    directory, key = agent
    signer = load_identity(key)
    source = read_directory(directory)
    rom_bytes = build_rom(source, signer.did)
    signature = sign_rom(rom_bytes, json.loads(rom_bytes), signer)
    rom = json.loads(rom_bytes)
    if edit == "schema":
        rom["capabilities"][0]["taskType"] = 42
    else:
        rom["capabilities"][0]["id"] = "build-dag-00000000"  # not the id of its (taskType, stack, domain)
    push_parts(store, canonical(rom), source.files, signature, source.save, tag)
    return rom, source


@pytest.mark.parametrize("edit", ["schema", "capability id"])
def test_rom_edited_after_signing_is_tampered_before_it_is_invalid(agent: tuple[Path, Path], tmp_path: Path,
                                                                   edit: str) -> None:
    store = open_store(f"oci:{tmp_path / 'l'}")
    rom, source = push_edited_after_signing(agent, store, "x", edit)
    with pytest.raises(TamperedError) as exc:
        load_cartridge(store, "x", None)
    assert exc.value.code == "tampered" and exc.value.exit_code == 1
    for args in (("inspect", f"oci:{tmp_path / 'l'}:x"),
                 ("pull", f"oci:{tmp_path / 'l'}:x", "-o", str(tmp_path / "out"))):
        res = cli(*args)
        assert res.exit_code == 1 and "tampered" in res.output, res.output
    assert not (tmp_path / "out").exists()
    # the same invalid ROM, unsigned, is still the schema error it is (exit 2): nothing to be tampered with
    unsigned = open_store(f"oci:{tmp_path / 'u'}")
    push_parts(unsigned, canonical(rom), source.files, None, source.save, "x")
    assert cli("inspect", f"oci:{tmp_path / 'u'}:x").exit_code == 2


# --------------------------------------------------------------------------- one hostile referrer, on the registry

def push_raw_attestation(store: Store, subject: Descriptor, credential: bytes, annotations: dict[str, str]) -> str:
    """What ``push_attestation`` does, without parsing the credential first (it would refuse this one)."""
    store.push_blob(EMPTY_JSON, MEDIA_EMPTY)
    layer = store.push_blob(credential, MEDIA_VC, {ANNOTATION_TITLE: "credential.json"})
    raw = build_manifest(ARTIFACT_ATTESTATION, [layer], subject=subject, annotations=annotations)
    return store.push_referrer(raw, subject.digest, referrer_tag(parse_manifest(raw).digest, subject.digest)).digest


@pytest.fixture(scope="module")
def hostile(registry: str, tmp_path_factory: pytest.TempPathFactory) -> tuple[World, str, dict[str, str]]:
    """``acx/hostile:1``: attested honestly, then two hostile referrers offered for the same claim."""
    w = build_world(registry, tmp_path_factory.mktemp("world"))
    d = tmp_path_factory.mktemp("hostile")
    ref = w.ref("hostile")
    digest = push_cartridge(w, d / "cart", ref, "io.github.acme/hostile-agent")
    attest(w, ref, d / "out", d / "state")
    store = open_store(ref)
    cap_id = load_cartridge(store, digest, None).capabilities[0].id
    subject = Descriptor(MEDIA_MANIFEST, digest, store.resolve(digest).size)
    honest = json.loads((d / "out" / "credential.json").read_bytes())
    honest["credentialSubject"] = "not an object"
    hostile = {
        "deep": push_raw_attestation(store, subject, HOSTILE_CREDENTIAL, {ANN_CAPABILITY: cap_id}),
        "deep200": push_raw_attestation(store, subject, b"[" * 200 + b"]" * 200, {ANN_CAPABILITY: cap_id}),
        "malformed": push_raw_attestation(store, subject, json.dumps(honest).encode(), {ANN_CAPABILITY: cap_id}),
    }
    return w, ref, hostile


def test_hostile_referrers_rejected_honest_one_verified(hostile: tuple[World, str, dict[str, str]]) -> None:
    w, ref, bad = hostile
    doc = ok(cli("resolve", ref, "--trust", str(w.trust), "--json"))
    cap = doc["capabilities"][0]
    assert cap["effective"] == "VERIFIED" and cap["issuer"] == w.verifier_did, cap
    rejected = {r["digest"]: r for r in cap["rejected"]}
    assert set(bad.values()) <= set(rejected), cap["rejected"]
    assert rejected[bad["deep"]]["codes"] == ["schema_invalid"]
    # its brackets are past the container bound, counted first, before any parse; 200 deep is within it
    assert "more than 16384 objects and arrays" in rejected[bad["deep"]]["messages"][0]
    assert rejected[bad["deep200"]]["codes"] == ["schema_invalid"]
    assert f"nested deeper than {MAX_DEPTH}" in rejected[bad["deep200"]]["messages"][0]
    assert rejected[bad["malformed"]]["codes"] == ["schema_invalid"]  # one code, the schema's message
    assert "credentialSubject" in rejected[bad["malformed"]]["messages"][0]
    assert doc["partial"] is False and doc["referrersSeen"] == 4


@pytest.fixture(scope="module")
def gateway(hostile: tuple[World, str, dict[str, str]]) -> Iterator[RunningGateway]:
    w = hostile[0]
    running = start_in_thread(GatewayConfig(upstream=f"http://{w.registry}", policy=load_policy(w.policy),
                                            trust=load_trust(w.trust)))
    try:
        yield running
    finally:
        running.stop()


def test_gateway_serves_the_compliant_manifest_next_to_a_hostile_referrer(
        hostile: tuple[World, str, dict[str, str]], gateway: RunningGateway) -> None:
    _, _, bad = hostile
    resp = httpx.get(f"http://{gateway.address}/v2/acx/hostile/manifests/1", headers={"Accept": MANIFEST_ACCEPT},
                     timeout=60)
    assert resp.status_code == 200, resp.text
    assert json.loads(resp.content)["artifactType"] == "application/vnd.acx.cartridge.v1"
    # the hostile referrer itself is still just bytes to the gateway: readable, never parsed into a crash
    hostile_raw: Any = httpx.get(f"http://{gateway.address}/v2/acx/hostile/manifests/{bad['deep']}",
                                 headers={"Accept": MANIFEST_ACCEPT}, timeout=60)
    assert hostile_raw.status_code < 500


def test_gateway_denies_a_tampered_cartridge(hostile: tuple[World, str, dict[str, str]], gateway: RunningGateway,
                                             agent: tuple[Path, Path]) -> None:
    """A ROM edited after signing is a denial (403, fail closed) through the gateway, not a 400 or a 500."""
    push_edited_after_signing(agent, open_store(hostile[0].ref("tampered")), "1", "schema")
    resp = httpx.get(f"http://{gateway.address}/v2/acx/tampered/manifests/1", headers={"Accept": MANIFEST_ACCEPT},
                     timeout=60)
    assert resp.status_code == 403, resp.text
    assert "tampered" in resp.headers.get("acx-gateway-denied", ""), resp.headers
