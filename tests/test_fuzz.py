"""Property-based fuzzing (Hypothesis) of every parser of outside input, and of the gateway over HTTP.

The oracle is the same everywhere: arbitrary bytes and mutated valid documents (keys dropped, types
changed, deep nesting, huge numbers, unicode) give a result or a reason-coded :class:`AcxError` — never
another exception (a traceback for a user) — and the gateway answers every request with a status below 500.

Profiles: ``ci`` (the default; derandomized, whole module well under a minute) and ``long``
(``HYPOTHESIS_PROFILE=long``: many more examples, random seeds) — see docs/security.md "Fuzzing (Hypothesis)".
"""

from __future__ import annotations

import base64
import copy
import json
import os
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from acx_oci.crypto import canonical
from acx_oci.errors import AcxError
from acx_oci.evaluation import load_policy
from acx_oci.evaluation.policy import policy_from_dict
from acx_oci.evaluation.status_check import check_status_list
from acx_oci.evaluation.verify import verify_level_credential, verify_proof_only
from acx_oci.gateway import GatewayConfig, RunningGateway, start_in_thread
from acx_oci.jsonio import MAX_DEPTH, nesting_depth, parse_json, parse_yaml
from acx_oci.model import (
    check_record,
    check_signature,
    game_predicate,
    parse_capability,
    parse_requirement,
    record_from_json,
    sign_rom,
    statuslist,
    verify_game,
)
from acx_oci.model.agentcard import verify_agent_card
from acx_oci.oci import MEDIA_EMPTY, Descriptor, build_index, build_manifest, parse_index, parse_manifest
from acx_oci.services.artifacts.certification import PREDICATE_EXAM_CERTIFICATION, verify_envelope_for
from acx_oci.trust import did, load_trust
from acx_oci.trust.trustfile import trust_from_dict

from .support import forgery_world
from .support.cli import cli
from .support.forgery_world import LIST_URL, VERIFIER_DID, World, make_world
from .support.registry import Registry, registry_binary, start_registry

# (no "explain" phase: its AST tracing trips a CPython 3.11 SystemError on deep statements)
PHASES = [Phase.explicit, Phase.reuse, Phase.generate, Phase.target, Phase.shrink]
HEALTH = [HealthCheck.too_slow, HealthCheck.data_too_large]
settings.register_profile("ci", max_examples=60, derandomize=True, deadline=None, print_blob=True, phases=PHASES,
                          suppress_health_check=HEALTH)
settings.register_profile("long", max_examples=3000, deadline=None, print_blob=True, phases=PHASES,
                          suppress_health_check=HEALTH)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))

WORLD: World = make_world()


def rejected_or_fine(fn: Callable[[], Any]) -> Any:
    """Run ``fn``; an AcxError must carry a reason code and one line; anything else fails the test."""
    try:
        return fn()
    except AcxError as exc:
        assert exc.code and isinstance(exc.code, str) and exc.exit_code in (1, 2, 3)
        assert "Traceback" not in str(exc)
        return None


# --------------------------------------------------------------------------- strategies

SCALARS = st.one_of(
    st.none(), st.booleans(),
    st.integers(min_value=-(2**64), max_value=2**64), st.integers(min_value=-(10**30), max_value=10**30),
    st.floats(allow_nan=False, allow_infinity=False), st.text(max_size=40),
    st.sampled_from(["", "did:key:z6Mk", "sha256:" + "0" * 64, "acx-cap:x", "\u202e\u0000\ud7ff", "1.10",
                     VERIFIER_DID, "2026-07-01T12:00:00Z", "BitstringStatusListEntry"]),
)
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=12), inner, max_size=4)), max_leaves=12)


def deep(depth: int, leaf: Any = 1) -> Any:
    value = leaf
    for i in range(depth):
        value = [value] if i % 2 else {"d": value}
    return value


@st.composite
def mutated(draw: st.DrawFn, doc: Any, max_mutations: int = 4) -> Any:
    """``doc`` with a few mutations at random places: drop/add keys, change types, nest deep, grow numbers."""
    doc = copy.deepcopy(doc)
    for _ in range(draw(st.integers(min_value=1, max_value=max_mutations))):
        parent, key, node = None, None, doc
        while isinstance(node, dict | list) and node and draw(st.booleans()):
            keys = list(node.keys()) if isinstance(node, dict) else list(range(len(node)))
            parent, key = node, draw(st.sampled_from(keys))
            node = node[key]
        kind = draw(st.sampled_from(["replace", "drop", "add", "deep", "number", "unicode", "type"]))
        if kind == "drop" and parent is not None:
            del parent[key]  # type: ignore[arg-type]
            continue
        if kind == "add" and isinstance(node, dict):
            node[draw(st.text(max_size=12))] = draw(JSON_VALUES)
            continue
        new = {
            "replace": lambda: draw(JSON_VALUES),
            "deep": lambda: deep(draw(st.integers(min_value=MAX_DEPTH - 8, max_value=MAX_DEPTH - 2))),
            "number": lambda: draw(st.sampled_from([2**63, -(2**64), 10**19, 1e308, -1e-308, 0.1, -0, 2**53 + 1])),
            "unicode": lambda: draw(st.text(alphabet=st.characters(codec="utf-8"), min_size=1, max_size=20)),
            "type": lambda here=node: draw(st.sampled_from([[here], {"x": here}, str(here)[:50], None, True, 7])),
        }.get(kind, lambda: draw(JSON_VALUES))()
        if parent is None:
            doc = new
        else:
            parent[key] = new  # type: ignore[index]
    return doc


def as_bytes(draw: st.DrawFn, doc: Any) -> bytes:
    """A document's bytes, sometimes damaged at the byte level (truncated, a byte flipped, nested past the cap)."""
    raw = json.dumps(doc, ensure_ascii=draw(st.booleans())).encode("utf-8", "surrogatepass")
    how = draw(st.sampled_from(["as is", "as is", "truncate", "flip", "wrap deep", "garbage"]))
    if how == "truncate" and raw:
        return raw[: draw(st.integers(min_value=0, max_value=len(raw) - 1))]
    if how == "flip" and raw:
        i = draw(st.integers(min_value=0, max_value=len(raw) - 1))
        return raw[:i] + bytes([draw(st.integers(min_value=0, max_value=255))]) + raw[i + 1:]
    if how == "wrap deep":
        n = draw(st.sampled_from([MAX_DEPTH, MAX_DEPTH + 1, 5_000, 50_000]))
        return b"[" * n + raw + b"]" * n
    if how == "garbage":
        return draw(st.binary(max_size=200))
    return raw


@st.composite
def document_bytes(draw: st.DrawFn, valid: Any) -> bytes:
    return as_bytes(draw, draw(mutated(valid)))


DESC = Descriptor("application/vc", "sha256:" + "a" * 64, 12, {"org.opencontainers.image.title": "c.json"})
MANIFEST = build_manifest("application/vnd.acx.level-attestation.v1", [DESC], subject=DESC,
                          annotations={"k": "v"})
INDEX = build_index([DESC, Descriptor(MEDIA_EMPTY, "sha256:" + "b" * 64, 2, artifact_type="x/y")])
GAME = canonical(WORLD.envelopes[0])
KEYS = [WORLD.verifier.public_bytes]


# --------------------------------------------------------------------------- parsers

def true_depth(value: Any) -> int:
    if isinstance(value, dict):
        return 1 + max(map(true_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(true_depth, value), default=0)
    return 0


@given(JSON_VALUES, st.booleans())
def test_the_depth_scan_agrees_with_the_parser(value: Any, ascii_only: bool) -> None:
    text = json.dumps(value, ensure_ascii=ascii_only)
    assert nesting_depth(text) == nesting_depth(text.encode("utf-8", "surrogatepass")) == true_depth(value)


@given(st.one_of(st.binary(max_size=300), document_bytes({"a": [1, {"b": "c"}], "n": 1.5})))
def test_parse_json_bytes(raw: bytes) -> None:
    rejected_or_fine(lambda: parse_json(raw, "document"))


@given(st.one_of(st.binary(max_size=300), document_bytes(json.loads(MANIFEST)), document_bytes(json.loads(INDEX))))
def test_manifest_and_index_parsing(raw: bytes) -> None:
    rejected_or_fine(lambda: parse_manifest(raw))
    rejected_or_fine(lambda: parse_index(raw))


@given(mutated(WORLD.signed, max_mutations=3))
def test_level_credential_verification(cred: Any) -> None:
    result = rejected_or_fine(lambda: verify_level_credential(cred, WORLD.ctx()))
    if result is not None:
        assert not result.verified or cred == WORLD.signed or canonical(cred) == canonical(WORLD.signed)
        assert [c.code for c in result.checks if not c.ok].count("schema_invalid") <= 1
    rejected_or_fine(lambda: verify_proof_only(cred, WORLD.ctx()))


SHAPES: list[tuple[str, Any]] = [("evidence", 7), ("evidence", "x"), ("credentialStatus", 7), ("proof", "x"),
                                 ("issuer", 5), ("validFrom", ["2999"]), ("credentialSubject", {"id": {"a": 1}})]


@pytest.mark.parametrize(("member", "value"), SHAPES)
def test_the_judge_takes_a_newer_credential_of_any_shape(member: str, value: Any) -> None:
    """A newer copy of the valid credential with one member of the wrong type: rejected with reasons, the
    valid one then judged (evidence as 7 raised TypeError once the fetcher stopped checking the schema)."""
    cred = copy.deepcopy(WORLD.signed)
    cred[member] = value
    judge_any_shape(cred, newer=True)


def judge_any_shape(cred: dict[str, Any], newer: bool) -> Any:
    """Judge ``cred`` (made newer than everything with ``newer``) next to the world's valid credential."""
    from acx_oci.evaluation import CartridgeFacts, FetchedAttestation, Material
    from acx_oci.evaluation.judge import judge_credentials
    from acx_oci.model import STATUS_VALID, LevelCredential

    class Claim:  # the world's credential names this id; no (taskType, stack) hashes to it
        id = "build-dag-0123abcd"

        def display(self) -> str:
            return self.id

    cap = Claim()
    facts = CartridgeFacts(forgery_world.MANIFEST, forgery_world.ROM, WORLD.publisher.did, WORLD.publisher.did,
                           None, STATUS_VALID, (cap,))  # type: ignore[arg-type]
    if newer:
        cred["validFrom"] = "2999-01-01T00:00:00Z"
    items = tuple(FetchedAttestation(digest="sha256:" + c * 64, offered=cap.id,
                                     credential=LevelCredential.document(doc), credential_digest="sha256:" + d * 64,
                                     evidence_present=frozenset())
                  for c, d, doc in (("a", "b", cred), ("c", "e", WORLD.signed)))
    judgement = judge_credentials(Material(items, {LIST_URL: (WORLD.status_list,)}, {}), facts, WORLD.trust,
                                  forgery_world.NOW)
    assert sum(map(len, judgement.accepted.values())) + sum(map(len, judgement.rejected.values())) \
        + len(judgement.unmatched) == 2
    return judgement


@settings(max_examples=300)
@given(mutated(WORLD.signed, max_mutations=3), st.booleans())
def test_the_judge_takes_credentials_no_schema_has_checked(cred: Any, newer: bool) -> None:
    """The fetcher hands the judge any JSON object (the schema is checked when a credential is verified, so
    superseded ones cost nothing): grouping, ordering and every rule must take any shape without raising."""
    if isinstance(cred, dict):
        judge_any_shape(cred, newer)


@given(document_bytes(WORLD.signed))
def test_credential_bytes_parse_then_verify(raw: bytes) -> None:
    doc = rejected_or_fine(lambda: parse_json(raw, "credential"))
    if doc is not None:
        rejected_or_fine(lambda: verify_level_credential(doc, WORLD.ctx()))


@given(st.one_of(st.binary(max_size=300), document_bytes(json.loads(GAME))))
def test_game_records(raw: bytes) -> None:
    rejected_or_fine(lambda: verify_game(raw, KEYS))
    rejected_or_fine(lambda: verify_game(raw, KEYS, "sha256:" + "0" * 64))


@given(mutated(WORLD.status_list))
def test_status_lists(doc: Any) -> None:
    ctx = WORLD.ctx()
    rejected_or_fine(lambda: statuslist.list_bits(doc))
    rejected_or_fine(lambda: statuslist.list_sequence(doc))
    rejected_or_fine(lambda: statuslist.list_purposes(doc))
    problems = rejected_or_fine(lambda: check_status_list(doc, LIST_URL, VERIFIER_DID, ctx,
                                                          lambda vm: [(vm, WORLD.verifier.public_bytes)]))
    assert problems is None or all(isinstance(code, str) and code for code, _ in problems)
    if isinstance(doc, dict):  # (callers hand verification only lists that parsed as objects)
        rejected_or_fine(lambda: verify_level_credential(WORLD.signed, WORLD.ctx(status_list=doc)))


@given(st.one_of(st.binary(max_size=300), document_bytes(WORLD.verifier.did_document())))
def test_did_documents(raw: bytes) -> None:
    doc = rejected_or_fine(lambda: did.fetch_did_web(VERIFIER_DID, lambda _url: raw))
    if doc is not None:
        rejected_or_fine(lambda: did.assertion_methods(doc))


TRUST = {"publishers": [{"id": WORLD.publisher.did}], "verifiers": [{"id": VERIFIER_DID, "didDocument":
         WORLD.verifier.did_document()}], "benchmarks": [{"id": "b", "version": "1.10", "digest": "sha256:" + "1" * 64,
         "heldOutSliceDigest": "sha256:" + "2" * 64, "capability": "build-dag[airflow]"}], "solvers": ["rom"],
         "statusMaxAge": 3600}
POLICY = {"apiVersion": "acx.dev/policy/v1", "rules": [{"repositories": ["acx/*"], "require": {
          "signedBy": "trusted-publisher", "capabilities": [{"taskType": "build-dag", "stack": ["airflow"],
                                                             "minTier": "senior"}]}}]}


@given(mutated(TRUST), mutated(POLICY))
def test_trust_and_policy_documents(trust: Any, policy: Any) -> None:
    rejected_or_fine(lambda: trust_from_dict(trust, Path("/nonexistent")))
    rejected_or_fine(lambda: policy_from_dict(policy))


@given(st.one_of(st.binary(max_size=300), document_bytes(TRUST), document_bytes(POLICY)), st.booleans())
def test_trust_and_policy_files(tmp_path_factory: pytest.TempPathFactory, raw: bytes, yaml_name: bool) -> None:
    folder = tmp_path_factory.mktemp("files", numbered=True)
    path = folder / ("file.yaml" if yaml_name else "file.json")
    path.write_bytes(raw)
    rejected_or_fine(lambda: load_trust(path))
    rejected_or_fine(lambda: load_policy(path))
    rejected_or_fine(lambda: parse_yaml(raw, "yaml"))


CAP_RECORD = parse_capability("build-dag[snowflake+airflow+dbt]@data-engineering").to_json()


@given(mutated(CAP_RECORD), st.text(max_size=60))
def test_capabilities_and_requirements(record: Any, text: str) -> None:
    rejected_or_fine(lambda: record_from_json(record))
    rejected_or_fine(lambda: parse_capability(text))
    rejected_or_fine(lambda: parse_requirement(text))
    rejected_or_fine(lambda: parse_requirement(text + ">=senior"))


ROM = {"schemaVersion": "acx.rom/1", "id": "io.example/agent", "version": "1.0.0", "controller": WORLD.publisher.did,
       "capabilities": [CAP_RECORD], "policy": {}, "files": []}
SIGNATURE = {"payloadType": "application/vnd.in-toto+json", "payload": "e30",
             "signatures": [{"sig": "AA", "keyid": ""}]}


@given(document_bytes(ROM), st.one_of(st.none(), document_bytes(SIGNATURE), st.binary(max_size=100)))
def test_rom_signature_check(rom: bytes, signature: bytes | None) -> None:
    check = rejected_or_fine(lambda: check_signature(rom, signature, WORLD.trust))
    assert check is None or check.status in ("valid", "warning", "tampered", "unsigned")


ROM_ENVELOPE = json.loads(sign_rom(canonical(ROM), ROM, WORLD.publisher))
ROM_STATEMENT = json.loads(base64.b64decode(ROM_ENVELOPE["payload"]))
GAME_STATEMENT = json.loads(base64.b64decode(WORLD.envelopes[0]["payload"]))
CERT_STATEMENT = {"_type": "https://in-toto.io/Statement/v1",
                  "subject": [{"name": "b", "digest": {"sha256": "0" * 64}}],
                  "predicateType": PREDICATE_EXAM_CERTIFICATION, "predicate": {
                      "benchmark": {"benchmarkDigest": "sha256:" + "1" * 64}, "certifier": VERIFIER_DID,
                      "exams": {"t1": {"certified": True}}}}


def with_statement(envelope: dict[str, Any], statement: Any) -> bytes:
    """The envelope with another payload (its signature no longer matches: the shape checks come first)."""
    payload = base64.b64encode(json.dumps(statement).encode("utf-8", "surrogatepass")).decode()
    return json.dumps({**envelope, "payload": payload}).encode()


@given(mutated(ROM_STATEMENT), mutated(GAME_STATEMENT), mutated(CERT_STATEMENT))
def test_signed_statements(rom_st: Any, game_st: Any, cert_st: Any) -> None:
    check = rejected_or_fine(lambda: check_signature(canonical(ROM), with_statement(ROM_ENVELOPE, rom_st), WORLD.trust))
    assert check is None or check.status == "tampered"  # a changed statement never verifies
    rejected_or_fine(lambda: game_predicate("application/vnd.in-toto+json",
                                            json.dumps(game_st).encode("utf-8", "surrogatepass")))
    rejected_or_fine(lambda: verify_envelope_for(with_statement(ROM_ENVELOPE, cert_st), "sha256:" + "0" * 64,
                                                 "sha256:" + "1" * 64, WORLD.trust))


@given(mutated({"protected": "eyJhbGciOiJFZERTQSJ9", "name": "x", "signatures": [{"protected": "e30",
                                                                                  "signature": "AA"}]}),
       mutated({"exam": "x", "version": "1", "stages": {"a": {"ok": True}}, "digest": "sha256:" + "0" * 64}))
def test_agent_cards_and_exam_records(card: Any, record: Any) -> None:
    if isinstance(card, dict):
        assert rejected_or_fine(lambda: verify_agent_card(card, bytes(32))) in (False, None)
    problems = rejected_or_fine(lambda: check_record(record))
    assert problems is None or isinstance(problems, list)


# --------------------------------------------------------------------------- the gateway, over HTTP

@pytest.fixture(scope="module")
def fuzz_gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RunningGateway]:
    """A gateway in front of its own registry (the fuzzer PUTs and DELETEs: it must not touch others' worlds)."""
    if registry_binary() is None:
        pytest.skip("docker-registry not installed")
    reg: Registry = start_registry()
    d = tmp_path_factory.mktemp("gw")
    # one real, signed cartridge, so that requests for it reach policy evaluation (resolve, referrers)
    (d / "pub.key").write_bytes(WORLD.publisher.pem())
    for args in (("cartridge", "init", d / "cart", "--id", "io.example/fuzz", "--version", "1.0.0", "--capability",
                  "build-dag[airflow]"), ("cartridge", "push", d / "cart", f"{reg.host}/acx/strong:1", "--key",
                                          d / "pub.key")):
        res = cli(*args)
        assert res.exit_code == 0, res.output
    (d / "policy.yaml").write_text("apiVersion: acx.dev/policy/v1\nrules:\n  - repositories: ['acx/*']\n"
                                   "    require:\n      signedBy: trusted-publisher\n")
    (d / "trust.yaml").write_text(f"publishers:\n  - id: {WORLD.publisher.did}\n")
    running = start_in_thread(GatewayConfig(upstream=f"http://{reg.host}", policy=load_policy(d / "policy.yaml"),
                                            trust=load_trust(d / "trust.yaml")))
    try:
        yield running
    finally:
        running.stop()
        reg.stop()


_SEGMENTS = ["v2", "acx", "strong", "manifests", "blobs", "uploads", "tags", "list", "referrers", "..", ".", "",
             "%2e%2e", "%2E", "%2f", "a%2Fb", "latest", "1", "sha256:" + "a" * 64,
             "acx-status-x", "_catalog", "%", "%zz", "é", "\u202e", "A" * 300]
NAMES = ["acx/strong", "acx/../acx/strong", "x/../acx/strong", "acx/./strong", "./acx/strong", "acx//strong",
         "acx%2fstrong", "acx/%2e%2e/acx/strong", "acx/%2E/strong", "ACX/strong", "acx/strong/", "acx/stróng", ""]
KINDS = ["manifests", "blobs", "referrers", "tags", "blobs/uploads", "manifests/..", "%6danifests"]
ASCII_CTYPES = [b"application/vnd.oci.image.manifest.v1+json", b"application/octet-stream",
                b"application/vnd.oci.image.index.v1+json", b"", b"x/y; charset=\"a\""]
ASCII_ACCEPTS = [b"*/*", b"application/vnd.oci.image.manifest.v1+json", b"", b"a/b;q=x, ,"]
BODY_METHODS = [b"PUT", b"POST", b"PATCH"]
#: What the gateway once answered 500 to (found by this suite, fixed: encoded NUL/newline, malformed digests,
#: non-ASCII header values forwarded as text, bodies on GET with their Content-Length forwarded).
HOSTILE_SEGMENTS = ["%00", "%0a", "%ff", "sha256:zz", "sha256:" + "é" * 64, "sha256:" + "A" * 64]
HOSTILE_HEADERS = [b"\xe9", b"\xff\xfe", "é/ü".encode()]


@st.composite
def requests(draw: st.DrawFn, hostile: bool = False) -> bytes:
    """One HTTP/1.1 request, byte-exact (no client library normalises ``..`` or ``%2e`` away).

    ``hostile`` adds what the gateway once failed on: encoded control bytes in a path, non-ASCII header
    values, malformed digests, and bodies on GET/HEAD/DELETE/OPTIONS.
    """
    segments = st.one_of(
        st.sampled_from(_SEGMENTS + (HOSTILE_SEGMENTS if hostile else [])),
        st.text(alphabet=st.characters(codec="utf-8", exclude_characters="/?#% \r\n\t"), max_size=20))
    if draw(st.booleans()):  # shaped like an OCI path to the real cartridge, with a twist
        path = "/v2/" + "/".join([draw(st.sampled_from(NAMES)), draw(st.sampled_from(KINDS)), draw(segments)])
    else:
        path = "/" + "/".join(draw(st.lists(segments, min_size=0, max_size=7)))
        if draw(st.booleans()):
            path = "/v2/" + path.lstrip("/")
    target = path.encode("utf-8")
    if draw(st.booleans()):
        target += b"?" + draw(st.sampled_from([b"n=1", b"artifactType=%zz", b"digest=sha256:1", b"last=\xff", b"="]))
    method = draw(st.sampled_from([b"GET", b"HEAD", b"DELETE", b"OPTIONS", *BODY_METHODS]))
    body = b""
    if hostile or method in BODY_METHODS:
        body = draw(st.one_of(st.just(b""), st.binary(max_size=200), document_bytes(json.loads(MANIFEST))))
    ctype = draw(st.sampled_from(ASCII_CTYPES + (HOSTILE_HEADERS if hostile else [])))
    accept = draw(st.sampled_from(ASCII_ACCEPTS + (HOSTILE_HEADERS if hostile else [])))
    return (method + b" " + target + b" HTTP/1.1\r\nHost: fuzz\r\nConnection: close\r\nContent-Type: " + ctype +
            b"\r\nAccept: " + accept + b"\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)


def status_of(address: str, request: bytes) -> int:
    host, port = address.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=60) as sock:
        sock.sendall(request)
        head = b""
        while b"\r\n" not in head:
            chunk = sock.recv(4096)
            if not chunk:
                break
            head += chunk
    assert head.startswith(b"HTTP/1.1 "), head[:200]
    return int(head.split(b" ", 2)[1])


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(request=requests())
def test_gateway_never_answers_5xx(fuzz_gateway: RunningGateway, request: bytes) -> None:
    """Paths (dot segments, encoded slashes, unicode, bad digests), methods, queries and bodies: all 4xx or fine."""
    status = status_of(fuzz_gateway.address, request)
    assert status < 500, (status, request[:300])


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(request=requests(hostile=True))
def test_gateway_hostile_bytes_are_not_5xx(fuzz_gateway: RunningGateway, request: bytes) -> None:
    """Encoded control bytes, non-ASCII header values, malformed digests, bodies on any method: never 5xx."""
    status = status_of(fuzz_gateway.address, request)
    assert status < 500, (status, request[:300])
