"""Reading a cosign projection layer as cosign's Go code does (services/consumer/cosign_read.py): every encoding
Go accepts reads the same here, and what cannot be read is never taken for "not a level"."""

from __future__ import annotations

import base64
import json

import pytest

from acx_oci.services.artifacts import PREDICATE_LEVEL
from acx_oci.services.consumer import copy_cosign, cosign_read

STATEMENT = {"_type": "https://in-toto.io/Statement/v1", "predicateType": PREDICATE_LEVEL,
             "predicate": {"credentialDigest": "sha256:" + "ab" * 32}, "note": "~~~???~~~???>>>"}
PAYLOAD = base64.b64encode(json.dumps(STATEMENT).encode()).decode()
assert "+" in PAYLOAD and "/" in PAYLOAD and PAYLOAD.endswith("=")  # each alphabet's own letters, and padding


def envelope(**over: object) -> bytes:
    doc = {"payloadType": "application/vnd.in-toto+json", "payload": PAYLOAD, "signatures": [{"sig": "x"}]}
    doc.update(over)
    return json.dumps(doc).encode()


@pytest.mark.parametrize("payload", [
    PAYLOAD, "\n".join(PAYLOAD[i:i + 60] for i in range(0, len(PAYLOAD), 60)), PAYLOAD.replace("\n", "\r\n"),
    PAYLOAD.replace("+", "-").replace("/", "_"), PAYLOAD.rstrip("="),
])
def test_every_base64_go_reads_is_the_same_payload(payload: str) -> None:
    assert cosign_read.go_b64(payload) == base64.b64decode(PAYLOAD)


def test_keys_match_as_go_matches_them_and_the_last_one_wins() -> None:
    st = json.dumps({**{k: v for k, v in STATEMENT.items() if k != "predicateType"},
                     "PREDICATETYPE": "x", "PredicateType": PREDICATE_LEVEL}).encode()
    raw = json.dumps({"PayLoad": base64.b64encode(st).decode()}).encode()
    assert cosign_read.level_of(raw, False) == (True, "sha256:" + "ab" * 32)
    bundle = json.dumps({"dsse_envelope": json.loads(envelope())}).encode()
    assert cosign_read.level_of(bundle, True) == (True, "sha256:" + "ab" * 32)


def test_what_cannot_be_read_is_a_level_that_names_nothing() -> None:
    deep = envelope(x=json.loads("[" * 200 + "]" * 200))
    for raw in (deep, b"\xff not json", envelope(payload="@@@@")):
        with pytest.raises(ValueError):
            cosign_read.level_of(raw, False)
        assert copy_cosign._projected(raw, False, False) == (True, None)
    simple_signing = json.dumps({"critical": {"type": "cosign container image signature"}}).encode()
    assert copy_cosign._projected(simple_signing, False, False) == (False, None)
    other = envelope(payload=base64.b64encode(b'{"predicateType": "https://slsa.dev/provenance/v1"}').decode())
    assert copy_cosign._projected(other, False, False) == (False, None)
    assert copy_cosign._projected(other, False, True) == (True, None)  # the annotation says level: never stands
