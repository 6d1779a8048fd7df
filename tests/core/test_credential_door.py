"""A level credential is read once, at the door, and carried inward as :class:`LevelCredential`: a plain
``dict`` that crosses the door fails here, by annotation (an AST scan) and at run time (a TypeError)."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest

from acx_oci.errors import SchemaError
from acx_oci.evaluation import FetchedAttestation, replay_credential
from acx_oci.model import AcceptedCredential, LevelCredential
from acx_oci.model.level_credential import level_credential
from acx_oci.services.consumer import ReplayJob

PACKAGE = Path(__file__).resolve().parents[2] / "acx_oci"

#: The only places a level credential may be a ``dict[str, Any]``: the signing door (an unsigned document in,
#: the signed document out; the verifier then reads the bytes it wrote through LevelCredential.read).
DOORS = {
    "model/credential.py:build_level_credential -> return",
    "model/credential.py:sign_credential(credential)",
    "model/credential.py:sign_credential -> return",
}


def _credential_name(name: str) -> bool:
    return name in ("cred", "credentials") or (name.startswith("credential") and not name.startswith(
        ("credential_digest", "credential_id", "credential_path", "credential_bytes")))


def _is_dict(annotation: ast.expr | None) -> bool:
    return annotation is not None and "dict[str, Any]" in ast.unparse(annotation)


def credential_dicts(root: Path = PACKAGE) -> set[str]:
    """Every parameter, attribute and return named like a level credential and annotated ``dict[str, Any]``."""
    found: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root).as_posix()
        for node in ast.walk(ast.parse(path.read_text("utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                args = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
                found |= {f"{rel}:{node.name}({a.arg})" for a in args
                          if _credential_name(a.arg) and _is_dict(a.annotation)}
                if node.name.endswith("credential") and _is_dict(node.returns):
                    found.add(f"{rel}:{node.name} -> return")
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name | ast.Attribute):
                name = node.target.id if isinstance(node.target, ast.Name) else node.target.attr
                if _credential_name(name) and _is_dict(node.annotation):
                    found.add(f"{rel}:{name}")
    return found


def test_no_credential_dict_past_the_door() -> None:
    found = credential_dicts()
    assert found <= DOORS, f"a level credential as dict[str, Any] past the door: {sorted(found - DOORS)}"
    assert len(found) <= 3


def test_the_scan_sees_a_dict_that_crosses(tmp_path: Path) -> None:
    (tmp_path / "m.py").write_text("from typing import Any\n\n\ndef judge(credential: dict[str, Any]) -> None:\n"
                                   "    pass\n\n\nclass A:\n    credential: dict[str, Any] | None = None\n")
    assert credential_dicts(tmp_path) == {"m.py:judge(credential)", "m.py:credential"}


DOC = {"@context": [], "issuer": {"id": "did:key:z6Mk"}, "validFrom": "2026-01-01T00:00:00Z",
       "credentialSubject": {"id": "urn:acx:cartridge:x", "result": [{"acx:cartridgeRomDigest": "sha256:aa",
                                                                       "acx:capabilityId": "acx-cap:c"}]},
       "evidence": [{"acx:digestMultibase": "sha256:bb"}], "proof": [{"verificationMethod": "did:key:z6Mk#k"}]}


def test_the_judge_and_replay_refuse_a_plain_dict() -> None:
    with pytest.raises(TypeError, match="LevelCredential"):
        AcceptedCredential("sha256:00", "sha256:01", "did:key:z", "c", "b", "1", 0.0, 1.0, 1, 1, "t", "",
                           credential=DOC)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="LevelCredential"):
        FetchedAttestation("sha256:00", credential=DOC)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="LevelCredential"):
        ReplayJob("k", DOC, "sha256:00", ())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="LevelCredential"):
        replay_credential(DOC, [None], [b"k"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="LevelCredential"):
        level_credential(DOC)
    with pytest.raises(TypeError, match=r"LevelCredential\.read"):
        LevelCredential(DOC)


def test_read_once_frozen_and_exact() -> None:
    raw = json.dumps(DOC, indent=1).encode()
    cred = LevelCredential.read(raw)
    assert cred.raw == raw and cred.digest is not None and cred.strict
    assert cred.issuer == "did:key:z6Mk" and cred.view.capability_id == "acx-cap:c"
    assert cred.subject_id == "urn:acx:cartridge:x" and cred.evidence == DOC["evidence"]
    assert cred == DOC and cred.to_json() == DOC
    cred["evidence"].append("x")  # a copy: nothing reached through the type changes it
    cred.result["acx:capabilityId"] = "other"
    assert cred.to_json() == DOC and cred.view.capability_id == "acx-cap:c"
    with pytest.raises(AttributeError):
        cred.raw = b""  # type: ignore[misc]
    with pytest.raises(SchemaError):
        LevelCredential.read(b"[1]")
    lax = LevelCredential.claims(b'{"issuer": "a", "issuer": "b"}')  # only what it claims: strict before judging
    assert lax is not None and not lax.strict
    with pytest.raises(SchemaError, match="duplicate member"):
        lax.strictly()
