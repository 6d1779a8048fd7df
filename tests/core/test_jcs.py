"""RFC 8785: the fast path (C JSON encoder) and the rfc8785 fallback agree with the RFC's vectors and ES6."""

from __future__ import annotations

import json
import random
import struct
from pathlib import Path
from typing import Any

import pytest
import rfc8785

from acx_oci.crypto import jcs
from acx_oci.errors import UsageError


def test_rfc_author_vectors(vectors: Path) -> None:
    cases = sorted((vectors / "jcs" / "input").glob("*.json"))
    assert len(cases) >= 6
    for case in cases:
        doc = json.loads(case.read_text("utf-8"))
        want = (vectors / "jcs" / "output" / case.name).read_bytes()
        assert jcs.canonical(doc) == want, case.name


def test_es6_numbers(vectors: Path) -> None:
    lines = (vectors / "jcs" / "es6-numbers-20000.txt").read_text().splitlines()
    assert len(lines) == 20000
    fast = 0
    for line in lines:
        hexbits, want = line.split(",", 1)
        x = struct.unpack(">d", bytes.fromhex(hexbits.zfill(16)))[0]
        if x != x or x in (float("inf"), float("-inf")):
            with pytest.raises(UsageError):
                jcs.canonical([x])
            continue
        assert jcs.canonical([x]) == f"[{want}]".encode(), line
        try:
            jcs._plain(x)
            fast += 1
        except ValueError:
            pass
    assert fast > 500  # the fast path is exercised, not just the fallback


def _random_doc(rng: random.Random, depth: int = 0) -> Any:
    kind = rng.randrange(8 if depth < 4 else 5)
    if kind == 0:
        return rng.choice(["", "a\"b\\c", "\n\t\x00\x1f\x7f", "é€😀", "\u2028", "plain"])
    if kind == 1:
        return rng.randint(-2**53 + 1, 2**53 - 1)
    if kind == 2:
        return rng.choice([0.1, -0.0, 100.0, 1e-7, 1e21, 33.25, 5e-324, 1.7976931348623157e308, 0.0001, 123.456])
    if kind == 3:
        return rng.choice([True, False, None])
    if kind == 4:
        return rng.uniform(-1e6, 1e6)
    if kind == 5:
        return [_random_doc(rng, depth + 1) for _ in range(rng.randrange(4))]
    keys = ["a", "B", "_", "aa", "é", "€", "😀", "\ufb01", "10", "1"]
    return {rng.choice(keys): _random_doc(rng, depth + 1) for _ in range(rng.randrange(5))}


def test_fast_path_equals_rfc8785_on_random_documents() -> None:
    rng = random.Random(8785)
    for _ in range(3000):
        doc = _random_doc(rng)
        assert jcs.canonical(doc) == rfc8785.dumps(doc), doc


@pytest.mark.parametrize("bad", [[2**53], {"a": float("nan")}, {1: "x"}, ("tuple",), {"s": "\ud800"}])
def test_refusals_keep_rfc8785_verdict(bad: Any) -> None:
    try:
        want: bytes | None = rfc8785.dumps(bad)
    except Exception:  # whatever rfc8785 refuses, we refuse as UsageError
        want = None
    if want is None:
        with pytest.raises(UsageError):
            jcs.canonical(bad)
    else:
        assert jcs.canonical(bad) == want
