"""Trust file: schema, defaults, durations, relative DID document paths, one-line errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from acx_oci.crypto import identity_from_seed
from acx_oci.errors import UsageError
from acx_oci.trust import trustfile as trust_mod

DK = "did:key:z6MkrJVnaZkeFzdQyMZu1cgjg7k1pZZ6pvBQ7XJPt4swbTQ2"
DIGEST = "sha256:" + "a" * 64


def test_full_yaml_with_relative_did_document(tmp_path: Path) -> None:
    ident = identity_from_seed(bytes([5]) * 32, "did:web:verifier.example")
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "v.did.json").write_text(json.dumps(ident.did_document()))
    f = tmp_path / "trust.yaml"
    f.write_text(f"""
publishers: [{{id: "{DK}"}}]
verifiers:
  - id: did:web:verifier.example
    didDocument: docs/v.did.json
benchmarks:
  - {{id: acx-bench-dag-de, version: 2026.07.1, digest: "{DIGEST}", heldOutSliceDigest: "{DIGEST}"}}
gate: {{sigmaMax: 1.2, minGames: 40}}
status: {{maxAge: 1d12h, failClosed: false}}
""")
    t = trust_mod.load_trust(f)
    assert t.is_trusted_publisher(DK) and t.is_trusted_publisher(DK + "#x")
    assert t.is_trusted_verifier("did:web:verifier.example#key-1")
    assert t.verifiers[0].did_document == ident.did_document()
    assert t.benchmark("acx-bench-dag-de", "2026.07.1") is not None
    assert t.benchmarks[0].held_out_slice_digest == DIGEST
    assert (t.sigma_max, t.min_games, t.status_max_age, t.fail_closed) == (1.2, 40, 129600.0, False)
    assert trust_mod.publisher_keys(t)[DK]


def test_defaults_and_empty() -> None:
    t = trust_mod.Trust.empty()
    assert (t.sigma_max, t.min_games, t.status_max_age, t.fail_closed) == (1.5, 30, None, True)
    assert not t.is_trusted_verifier(DK)


def test_json_form(tmp_path: Path) -> None:
    f = tmp_path / "t.json"
    f.write_text(json.dumps({"publishers": [{"id": DK}], "status": {"maxAge": 3600}}))
    assert trust_mod.load_trust(f).status_max_age == 3600.0


@pytest.mark.parametrize("body", [
    "publishers: [{id: 3}]",
    "publishers: [{id: 'https://not-a-did'}]",
    "publishers: [{id: 'did:key:z6Mk', extra: 1}]",
    "benchmarks: [{id: b, version: '1', digest: 'md5:abc'}]",
    "gate: {sigmaMax: -1}",
    "status: {maxAge: soon}",
    "verifiers: [{id: 'did:web:v.example', didDocument: missing.json}]",
    "nonsense: true",
    "- a list",
    "publishers: [unclosed",
])
def test_bad_trust_files_are_one_line_usage_errors(tmp_path: Path, body: str) -> None:
    f = tmp_path / "trust.yaml"
    f.write_text(body)
    with pytest.raises(UsageError) as err:
        trust_mod.load_trust(f)
    assert "\n" not in str(err.value) and "trust file" in str(err.value)


def test_did_document_must_describe_the_did(tmp_path: Path) -> None:
    (tmp_path / "d.json").write_text(json.dumps({"id": "did:web:other.example"}))
    f = tmp_path / "trust.yaml"
    f.write_text("verifiers: [{id: 'did:web:v.example', didDocument: d.json}]")
    with pytest.raises(UsageError, match="id is"):
        trust_mod.load_trust(f)


def test_missing_file() -> None:
    with pytest.raises(UsageError, match="not found"):
        trust_mod.load_trust("/nonexistent/trust.yaml")


@pytest.mark.parametrize(("value", "seconds"), [(None, None), (90, 90.0), ("90", 90.0), ("15m", 900.0),
                                                ("12h", 43200.0), ("7d", 604800.0), ("1w", 604800.0)])
def test_durations(value: str | int | None, seconds: float | None) -> None:
    assert trust_mod.parse_duration(value) == seconds
