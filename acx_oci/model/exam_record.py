"""The exam certification record as a type: sealed once by the stages (:meth:`CertificationRecord.seal`) or
checked once where it is read (:meth:`CertificationRecord.load`), then carried inward frozen and serialised
once (:meth:`CertificationRecord.to_json`) where it is written, sent or published.

The digest is sha256 over the JCS of the JSON the record was sealed as, without ``digest``; so the type keeps
that JSON whole and reads its typed facts from it (``certified``, ``freeze_hash``, ``failures()``...), never a
second copy that could drift. ``record["stages"]`` reads the JSON (a copy each time: nothing reached through
the record can change it). A record of the first shape (``acx.exam-certification/1``: ``contract``, no
``eval``) is still read and checked; :meth:`stage` reads it under today's names.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.errors import IntegrityError
from acx_oci.jsonio import first_error
from acx_oci.model.exam import (
    CERTIFIER,
    CERTIFYING,
    EXPECTED,
    EXPECTED_IMPOSSIBLE,
    FLAGS,
    NOT_STATED,
    RECORD_SCHEMA,
    RECORD_SCHEMA_FILE,
    RECORD_SCHEMA_V1,
    STAGES,
    STAGES_V1,
    SUMMARY_SCHEMA,
)
from acx_oci.model.frozen_json import FrozenJson


class CertificationRecord(FrozenJson):
    """One exam's sealed certification record: frozen, its digest checked when it was sealed or loaded."""

    __slots__ = ()
    _KIND = "certification record"

    def __init__(self, doc: Mapping[str, Any], *, _checked: bool = False) -> None:
        if not _checked:  # the one way in from outside is load(): a record is never taken on its word
            raise TypeError("use CertificationRecord.seal() or CertificationRecord.load()")
        object.__setattr__(self, "_doc", copy.deepcopy(dict(doc)))

    @classmethod
    def seal(cls, exam: str, version: str | None, stages: Mapping[str, Mapping[str, Any]], *,
             impossible: bool) -> CertificationRecord:
        """The sealed record: ``allOk`` = every stage ok (promotion too), ``certified`` = all but promotion ok."""
        doc: dict[str, Any] = {"schema": RECORD_SCHEMA, "exam": exam, "version": version, "impossible": impossible,
                               "certifier": CERTIFIER, "stages": {s: dict(stages[s]) for s in STAGES}}
        doc["allOk"] = all(bool(stages[s].get("ok")) for s in STAGES)
        doc["certified"] = all(bool(stages[s].get("ok")) for s in CERTIFYING)
        doc["digest"] = record_digest(doc)
        return cls(doc, _checked=True)

    @classmethod
    def load(cls, doc: Any, where: str = "certification record") -> CertificationRecord:
        """The record ``doc`` (parsed JSON) holds; :class:`IntegrityError` naming ``where`` and every problem
        (schema, digest, derived fields, control verdicts) when it is not sound."""
        problems = check_record(doc)
        if problems:
            raise IntegrityError(f"{where}: {'; '.join(problems)}")
        return cls(doc, _checked=True)

    # --- the JSON view -------------------------------------------------------------------------------------

    def __repr__(self) -> str:
        return f"CertificationRecord({self.exam!r}, certified={self.certified}, {self.digest})"

    # --- typed facts ---------------------------------------------------------------------------------------

    @property
    def exam(self) -> str:
        """The exam's id."""
        return str(self._doc["exam"])

    @property
    def certified(self) -> bool:
        """Every certifying stage ok (promotion is recorded, never gating)."""
        return self._doc["certified"] is True

    @property
    def all_ok(self) -> bool:
        """Every stage ok, promotion too."""
        return self._doc["allOk"] is True

    @property
    def impossible(self) -> bool:
        """An exam no reference can pass (its canary: a pass of it is forged)."""
        return self._doc["impossible"] is True

    @property
    def digest(self) -> str:
        """``sha256:`` over the JCS of the record as sealed, without its digest."""
        return str(self._doc["digest"])

    def stage(self, name: str) -> dict[str, Any]:
        """One stage's facts under today's names (a first-shape ``contract`` is ``seed``); {} when absent."""
        stages = seed_stages(self._doc)
        return copy.deepcopy(dict(stages.get(name) or {}))

    @property
    def freeze_hash(self) -> str | None:
        """The freeze over every certifying input: a suite whose exam hashes otherwise is not this record's."""
        value = seed_stages(self._doc)["freeze"].get("freezeHash")
        return value if isinstance(value, str) else None

    @property
    def image_digest(self) -> str | None:
        """The environment image it was certified in (None: the host's Python graded)."""
        value = seed_stages(self._doc)["freeze"].get("imageDigest")
        return value if isinstance(value, str) else None

    @property
    def classification(self) -> Any:
        """The classification its author stated, or ``not stated``."""
        return classification_of(self._doc)

    def failures(self) -> list[tuple[str, str]]:
        """(stage, fact) for every certifying stage that is not ok."""
        return failures(self._doc)


# --- pure functions over a record's JSON (the checks load() runs; tests forge records with them) ------------


def record_digest(record: Mapping[str, Any]) -> str:
    """sha256 over the JCS of the record without its ``digest``."""
    return sha256_digest(canonical({k: v for k, v in record.items() if k != "digest"}))


def stages_of(record: Mapping[str, Any]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(stages, certifying stages) of a record's shape: the first shape had ``contract`` and no ``eval``."""
    if record.get("schema") == RECORD_SCHEMA_V1:
        return STAGES_V1, STAGES_V1[:7]
    return STAGES, CERTIFYING


def seed_stages(record: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """The record's stages under today's names (a first-shape ``contract`` read as ``seed``); no eval there."""
    return {("seed" if k == "contract" else k): v for k, v in record["stages"].items()}


def classification_of(record: Mapping[str, Any]) -> Any:
    """The classification the exam's author stated, as its record's seed stage saw it (``not stated`` when the
    author stated none, and in records from before it was recorded)."""
    seed = seed_stages(record).get("seed") or {}
    value = seed.get("classification", NOT_STATED)
    return value if isinstance(value, dict) else NOT_STATED


def skipped(stage: str, reason: str) -> dict[str, Any]:
    """A stage that did not run: not ok, the reason, and its seed flags all false."""
    return {"ok": False, "skipped": reason, **{k: (list(v) if isinstance(v, list) else v)
                                               for k, v in FLAGS.get(stage, {}).items()}}


def check_record(record: Any) -> list[str]:
    """Problems with a stored record; [] when its schema, digest and derived fields are consistent."""
    if isinstance(record, CertificationRecord):
        record = record.to_json()
    err = first_error(record, RECORD_SCHEMA_FILE)
    if err is not None:
        where = "/".join(str(p) for p in err.absolute_path) or "(root)"
        return [f"schema: invalid at {where}: {err.message[:200]}"]
    problems: list[str] = []
    if record["digest"] != record_digest(record):
        problems.append(f"digest: record hashes to {record_digest(record)}, it says {record['digest']}")
    stages = record["stages"]
    names, certifying = stages_of(record)
    if record["allOk"] != all(stages[s]["ok"] for s in names):
        problems.append("allOk does not match the stages")
    if record["certified"] != all(stages[s]["ok"] for s in certifying):
        problems.append("certified does not match its certifying stages")
    if record["schema"] == RECORD_SCHEMA:
        problems += _flag_problems(stages)
    grader = stages["grader"]
    if grader["ok"]:
        want = EXPECTED_IMPOSSIBLE if record["impossible"] else EXPECTED
        # Derived controls (mutants of the fix) stand on the mutation score instead of a distinguishing pair.
        strong = (grader.get("testsKillMutants", "mutantsMade" not in grader) is True
                  and (grader.get("distinguished") is True or "distinguishedBy" not in grader
                       or "controlsNotDistinguished" in (grader.get("relaxations") or ()))
                  if grader.get("controlsDerived") is True else grader.get("distinguished") is True)
        if grader.get("controls") != want or not strong:
            problems.append("grader stage ok but its controls are not the expected verdicts and distinguished "
                            "(or, derived, killing enough mutants)")
    if stages["attack"]["ok"] and stages["attack"].get("trivialExploits"):
        problems.append("attack stage ok with trivial exploits")
    if stages["publication"]["ok"] and stages["publication"].get("findings"):
        problems.append("publication stage ok with findings")
    if stages["promotion"]["ok"] and not stages["freeze"].get("imageDigest"):
        problems.append("promotion ok without an image digest")
    return problems


def _flag_problems(stages: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """The seed flags must agree with the facts they summarise: no stage is promotion-eligible unless ok."""
    problems = [f"{s}.promotionEligible without {s}.ok" for s in FLAGS
                if stages[s].get("promotionEligible") and not stages[s]["ok"]]
    grader, attack = stages["grader"], stages["attack"]
    if grader.get("controlsDistinguished") != bool(grader.get("distinguished", grader.get("controlsDistinguished"))):
        problems.append("grader.controlsDistinguished disagrees with grader.distinguished")
    if attack.get("passedForPromotion") and not (attack["ok"] and stages["freeze"].get("imageDigest")):
        problems.append("attack.passedForPromotion without an ok attack stage inside an image")
    if attack["ok"] and attack.get("goldStillPassesAfterSuite") is False:
        problems.append("attack stage ok although the gold no longer passes after the suite")
    return problems


def failures(record: Mapping[str, Any]) -> list[tuple[str, str]]:
    """(stage, fact) for every certifying stage that is not ok: the false facts, non-empty lists, or reason."""
    out: list[tuple[str, str]] = []
    stages = seed_stages(record)
    for stage in (("seed" if s == "contract" else s) for s in stages_of(record)[1]):
        st = stages[stage]
        if st.get("ok") or st.get("skipped"):
            continue
        facts = [k for k, v in st.items() if k != "ok" and v is False and k not in FLAGS.get(stage, {})]
        facts += [f"{k}={v}" for k, v in st.items() if k in ("trivialExploits", "findings", "problems") and v]
        if stage == "grader":
            facts += [f"{c}={v} (want {w})" for c, v in (st.get("controls") or {}).items()
                      if v != (w := (EXPECTED_IMPOSSIBLE if record.get("impossible") else EXPECTED)[c])]
        if st.get("reason"):
            facts.append(str(st["reason"]))
        out += [(stage, f) for f in facts] or [(stage, "not ok")]
    return out


def summarize(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The suite summary, a pure function of the sealed records (or of their published JSON: a private exam's
    is cut to its verdicts)."""
    stages = {s: {"ok": 0, "failed": 0} for s in STAGES}
    for rec in records.values():
        for s, st in seed_stages(rec).items():  # a first-shape record has no eval: counted in neither
            stages[s]["ok" if st["ok"] else "failed"] += 1
    return {"schema": SUMMARY_SCHEMA, "exams": len(records),
            "certified": sum(1 for r in records.values() if r["certified"]),
            "impossible": sum(1 for r in records.values() if r.get("impossible")),
            "stages": stages, "records": {k: records[k]["digest"] for k in sorted(records)}}
