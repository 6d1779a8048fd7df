"""Exam certification (DESIGN.md, issue 11): the record, its seal and the pure checks behind each stage.

An exam is certified when every stage but promotion (seed — the contract —, gold, grader, attack, eval,
canary, publication, freeze) is ok; promotion is recorded, never gating. Records carry the seed's stage names
and flags (``promotionEligible``, ``isolated``, ``controlsDistinguished``, ``trivialExploits``,
``passedForPromotion``, ``goldStillPassesAfterSuite``, ``allOk``); a record of the first shape
(``acx.exam-certification/1``: ``contract``, no ``eval``) is still read and checked, see :func:`stages_of`.
The services side (:mod:`acx_oci.services.exams`) runs the sandboxed grades and hands the facts to the functions here.

Stable interface (for ``benchmark push`` gating, the certification referrer and ``attest``):

* :func:`record_digest` ``(record) -> "sha256:..."`` - sha256 over the JCS of the record without ``digest``;
* :func:`check_record` ``(record) -> list[str]`` - problems (schema, digest, allOk/certified consistency,
  control verdicts); empty means the record is sound (not that the exam is certified: read ``certified``);
* :func:`freeze_hash` ``(contract=..., tree_hash=..., inputs=...) -> "sha256:..."`` - the freeze over every
  certifying input (see :func:`acx_oci.services.exams.suite_freeze_hashes` for how a suite's are computed);
* :func:`failures` ``(record) -> list[(stage, fact)]`` and :func:`summarize` ``(records) -> dict``.
"""

from __future__ import annotations

import difflib
import io
import re
import tokenize
from collections.abc import Iterable, Mapping
from typing import Any

from acx_oci.crypto.digest import sha256_digest
from acx_oci.crypto.jcs import canonical
from acx_oci.jsonio import first_error

RECORD_SCHEMA = "acx.exam-certification/2"
RECORD_SCHEMA_V1 = "acx.exam-certification/1"
SUMMARY_SCHEMA = "acx.exam-certification-summary/1"
RECORD_SCHEMA_FILE = "exam-certification.schema.json"
CONTRACT_SCHEMA_FILE = "exam.schema.json"
#: An exam whose author stated no classification (``exam import`` without ``--classification``) says so: never a
#: default the author did not choose. The certification record and the credential carry it.
NOT_STATED = "not stated"
FAMILIES_SCHEMA_FILE = "exam-families.schema.json"
#: The certification procedure; part of every freeze hash, so changing the procedure re-certifies (/3: honeypots
#: despite classes pytest never collects; a tree that stops the runner loading its package fails).
CERTIFIER = "acx-oci-exam-certify/3"
EXAM_FILE = "exam.yaml"
ENV_FILE = "env.json"  # the exam's environment spec, beside exam.yaml (read by the wing and by artifacts)
SOURCE_FILE = "source.json"  # where an imported exam came from
FAMILIES_FILE = "families.yaml"

STAGES = ("seed", "gold", "grader", "attack", "eval", "canary", "publication", "freeze", "promotion")
CERTIFYING = STAGES[:-1]
#: The first record shape's stages (read, never written): ``contract`` is the seed stage, there is no eval.
STAGES_V1 = ("contract", "gold", "grader", "attack", "canary", "publication", "freeze", "promotion")
#: Each stage's seed flags and the value a stage that never ran carries (so a skipped stage still validates).
FLAGS: dict[str, dict[str, Any]] = {
    "gold": {"promotionEligible": False, "isolated": False},
    "grader": {"promotionEligible": False, "isolated": False, "controlsDistinguished": False},
    "attack": {"promotionEligible": False, "trivialExploits": [], "passedForPromotion": False,
               "goldStillPassesAfterSuite": False},
    "eval": {"promotionEligible": False},
}
CONTROLS = ("untouched", "gold", "incomplete", "lookalike", "plantedHook", "plantedReward",
            "goldAfterTamperAttempts")
EXPECTED = {"untouched": "F", "gold": "P", "incomplete": "F", "lookalike": "F", "plantedHook": "F",
            "plantedReward": "F", "goldAfterTamperAttempts": "P"}
#: An impossible exam's reference must fail too (it fails one of the contradicting tests).
EXPECTED_IMPOSSIBLE = dict.fromkeys(CONTROLS, "F")
NO_IMAGE = {"ok": False, "reason": "no environment image"}

WINDOW = 32
#: The share of a new run's windows a file must hold to leak it (a copied body holds them all).
LEAK_SHARE = 0.5
#: A new line sharing this much of its tokens with an old line of its hunk edits that line in place.
EDITED_IN_PLACE = 0.6
CANARY_RE = re.compile(r"acx-canary-[0-9a-f]{24}")

#: Default publication patterns: (name, regex, scope). scope "model" = only the model-facing tree.
DEFAULT_PATTERNS: tuple[tuple[str, str, str], ...] = (
    ("private-key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY-----", "all"),
    ("aws-access-key", r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b", "all"),
    ("github-token", r"\bgh[pousr]_[A-Za-z0-9]{36,}\b", "all"),
    ("slack-token", r"\bxox[abprs]-[A-Za-z0-9-]{10,}", "all"),
    ("bearer-token", r"(?i)\bauthorization:\s*bearer\s+[A-Za-z0-9._~+/-]{16,}", "all"),
    ("secret-assignment",
     r"(?i)\b(?:api[_-]?key|secret|passw(?:or)?d|access[_-]?token)\s*[:=]\s*['\"][^'\"\s]{8,}['\"]", "all"),
    ("internal-hostname", r"(?i)\b[a-z0-9-]+(?:\.[a-z0-9-]+)*\.(?:internal|corp|intranet|lan)\b", "all"),
    ("canary-marker", CANARY_RE.pattern, "model"),
)


# --- the record -------------------------------------------------------------------------------------------


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


def build_record(exam: str, version: str | None, stages: Mapping[str, Mapping[str, Any]], *,
                 impossible: bool) -> dict[str, Any]:
    """The sealed record: ``allOk`` = every stage ok (promotion too), ``certified`` = all but promotion ok."""
    rec: dict[str, Any] = {"schema": RECORD_SCHEMA, "exam": exam, "version": version, "impossible": impossible,
                           "certifier": CERTIFIER, "stages": {s: dict(stages[s]) for s in STAGES}}
    rec["allOk"] = all(bool(stages[s].get("ok")) for s in STAGES)
    rec["certified"] = all(bool(stages[s].get("ok")) for s in CERTIFYING)
    rec["digest"] = record_digest(rec)
    return rec


def check_record(record: Any) -> list[str]:
    """Problems with a stored record; [] when its schema, digest and derived fields are consistent."""
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


def freeze_hash(*, contract: Mapping[str, Any], tree_hash: str, inputs: Mapping[str, str]) -> str:
    """sha256(JCS({certifier, contract, treeHash, inputs})): ``inputs`` names the digest of every other
    certifying input (grader, grader common, reference, controls, prompt, pattern list)."""
    return sha256_digest(canonical({"certifier": CERTIFIER, "contract": dict(contract), "treeHash": tree_hash,
                                    "inputs": dict(inputs)}))


# --- contract ---------------------------------------------------------------------------------------------


def contract_facts(doc: Any, families: Any) -> dict[str, Any]:
    """Stage 1: the contract validates against its schema and its family is registered and active."""
    facts: dict[str, Any] = {"schemaValid": False, "familyRegistered": False, "familyActive": False}
    problems: list[str] = []
    err = first_error(doc, CONTRACT_SCHEMA_FILE)
    if err is None:
        facts["schemaValid"] = True
    else:
        where = "/".join(str(p) for p in err.absolute_path) or "(root)"
        problems.append(f"exam.yaml invalid at {where}: {err.message[:200]}")
    ferr = first_error(families, FAMILIES_SCHEMA_FILE)
    if ferr is not None:
        problems.append(f"family registry invalid: {ferr.message[:200]}")
    elif isinstance(doc, dict):
        status = families["families"].get(doc.get("family"))
        facts["familyRegistered"] = status is not None
        facts["familyActive"] = status == "active"
        facts["familyStatus"] = status
    facts["classification"] = doc["classification"] if facts["schemaValid"] and isinstance(doc, dict) else NOT_STATED
    facts["classificationStated"] = isinstance(facts["classification"], dict)  # stated up front, never later
    facts["ok"] = facts["schemaValid"] and facts["familyActive"] and facts["classificationStated"] and not problems
    if problems:
        facts["problems"] = problems
    return facts


# --- what the reference adds that the base did not have, and where it turns up ------------------------

_TOKEN = re.compile(r"\w+|[^\w\s]")


def tokens(text: str) -> list[str]:
    """Words and single punctuation marks: whitespace, indentation and line breaks carry no content."""
    return _TOKEN.findall(text)


def normalized(text: str) -> str:
    """The text as its tokens joined by one space, so a leak cannot hide behind re-indentation."""
    return " ".join(tokens(text))


def new_content(before: str, after: str) -> list[str]:
    """What ``after`` adds to ``before`` that ``before`` did not already say, as normalized runs.

    Per changed line hunk, each new line either edits an old line of the hunk in place (they share most
    tokens: only its inserted words are new, not the prefix it shares) or is wholly new; consecutive wholly
    new lines make one run (a new function body, a new constant). A line ``before`` already holds (code moved
    within the file) is context, as is a run ``before`` already holds.
    """
    a, b = before.splitlines(keepends=True), after.splitlines(keepends=True)
    have, have_lines = normalized(before), {normalized(line) for line in a}
    out: list[str] = []
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes():
        if tag not in ("insert", "replace"):
            continue
        old = [tokens(line) for line in a[i1:i2]]
        run: list[str] = []
        for line in b[j1:j2]:
            new = tokens(line)
            edited = max(old, key=lambda o: difflib.SequenceMatcher(None, o, new, autojunk=False).ratio(),
                         default=None)
            if not new or " ".join(new) in have_lines or (
                    edited is not None and difflib.SequenceMatcher(None, edited, new, autojunk=False).ratio()
                    >= EDITED_IN_PLACE):
                out.append(" ".join(run))
                run = []
                if new and edited is not None and " ".join(new) not in have_lines:
                    out += _inserted(edited, new)
            else:
                run += new
        out.append(" ".join(run))
    return [r for r in out if r and r not in have]


def _inserted(old: list[str], new: list[str]) -> list[str]:
    """The token runs ``new`` inserts into ``old`` (a line edited in place)."""
    return [" ".join(new[m1:m2]) for t, _k1, _k2, m1, m2 in
            difflib.SequenceMatcher(None, old, new, autojunk=False).get_opcodes() if t in ("insert", "replace")]


def code_only(path: str, text: str) -> str:
    """A Python file without its comments and docstrings (each blanked, lines kept), else ``text`` unchanged:
    prose a fix adds (a docstring's doctest example, a comment) is no solution, and a test may well say it."""
    if not path.endswith(".py"):
        return text
    lines = text.splitlines(keepends=True)
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError):
        return text
    prose: list[tuple[tuple[int, int], tuple[int, int]]] = []
    prev = tokenize.NEWLINE
    for tok in toks:
        if tok.type == tokenize.COMMENT or (tok.type == tokenize.STRING and prev in (
                tokenize.NEWLINE, tokenize.NL, tokenize.INDENT, tokenize.DEDENT)):
            prose.append((tok.start, tok.end))
        if tok.type not in (tokenize.COMMENT, tokenize.NL):
            prev = tok.type
    for (r1, c1), (r2, c2) in reversed(prose):  # a statement that is only a string: a docstring
        if r1 == r2:
            lines[r1 - 1] = lines[r1 - 1][:c1] + lines[r1 - 1][c2:]
        else:
            lines[r1 - 1] = lines[r1 - 1][:c1] + "\n"
            lines[r1:r2 - 1] = ["\n"] * (r2 - r1 - 1)
            lines[r2 - 1] = lines[r2 - 1][c2:]
    return "".join(lines)


def windows(runs: Iterable[str], size: int = WINDOW) -> dict[bytes, int]:
    """Every ``size``-byte window of every normalized new run, mapped to its run's index; runs shorter than
    ``size`` contribute nothing (a shared idiom or a lone new word is no solution)."""
    out: dict[bytes, int] = {}
    for n, run in enumerate(runs):
        raw = run.encode("utf-8")
        for i in range(len(raw) - size + 1):
            out.setdefault(raw[i:i + size], n)
    return out


def _hits(wins: Mapping[bytes, int], text: str, size: int) -> dict[int, set[bytes]]:
    raw = normalized(text).encode("utf-8")
    hits: dict[int, set[bytes]] = {}
    for i in range(len(raw) - size + 1):
        w = raw[i:i + size]
        if w in wins:
            hits.setdefault(wins[w], set()).add(w)
    return hits


def _totals(wins: Mapping[bytes, int]) -> dict[int, int]:
    total: dict[int, int] = {}
    for n in wins.values():
        total[n] = total.get(n, 0) + 1
    return total


def held(wins: Mapping[bytes, int], files: Mapping[str, str], size: int = WINDOW) -> set[int]:
    """The runs (indices) some file already holds: text the base has is context, not a leak."""
    total, out = _totals(wins), set[int]()
    for text in files.values():
        out.update(n for n, h in _hits(wins, text, size).items() if len(h) >= LEAK_SHARE * total[n])
    return out


def leaks(wins: Mapping[bytes, int], files: Mapping[str, str], size: int = WINDOW) -> list[dict[str, Any]]:
    """One finding per file holding most (:data:`LEAK_SHARE`) of the windows of some new run: the new function
    body or constant itself, not a phrase it shares with code the base already has. ``{file, rule, bytes}``."""
    found: list[dict[str, Any]] = []
    if not wins:
        return found
    total = _totals(wins)
    for path, text in sorted(files.items()):
        hits = _hits(wins, text, size)
        leaked = sorted((n for n, h in hits.items() if len(h) >= LEAK_SHARE * total[n]), key=lambda n: -len(hits[n]))
        if leaked:
            first = min(hits[leaked[0]])
            found.append({"file": path, "rule": "reference-new-content", "windows": len(hits[leaked[0]]),
                          "of": total[leaked[0]], "bytes": first.decode("utf-8", "replace")})
    return found


def find_canaries(text: str) -> list[str]:
    """The distinct canary markers in ``text``, sorted: each hidden test carries one; in a model-facing file one is a
    leak."""
    return sorted(set(CANARY_RE.findall(text)))


def scan_patterns(files: Mapping[str, str], patterns: Iterable[tuple[str, str, str]], *,
                  model_facing: bool) -> list[dict[str, Any]]:
    """Findings ``{file, rule, offset}`` of the patterns in scope (``model`` ones only on the model-facing tree)."""
    compiled = [(name, re.compile(rx)) for name, rx, scope in patterns if scope == "all" or model_facing]
    found = []
    for path, text in sorted(files.items()):
        for name, rx in compiled:
            m = rx.search(text)
            if m:
                found.append({"file": path, "rule": name, "offset": m.start()})
    return found


# --- reports from records only ---------------------------------------------------------------------------


def summarize(records: Mapping[str, Mapping[str, Any]]) -> dict[str, Any]:
    """The suite summary, a pure function of the sealed records."""
    stages = {s: {"ok": 0, "failed": 0} for s in STAGES}
    for rec in records.values():
        for s, st in seed_stages(rec).items():  # a first-shape record has no eval: counted in neither
            stages[s]["ok" if st["ok"] else "failed"] += 1
    return {"schema": SUMMARY_SCHEMA, "exams": len(records),
            "certified": sum(1 for r in records.values() if r["certified"]),
            "impossible": sum(1 for r in records.values() if r.get("impossible")),
            "stages": stages, "records": {k: records[k]["digest"] for k in sorted(records)}}


MIN_ROLLOUTS_FOR_RATES = 10
COUNTED = ("certified-pass", "model-fail")


def rollout_cells(rollouts: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Per (exam, agent): raw outcome counts; a ``passRate`` only with >= 10 counted rollouts (certified
    pass / model fail; lane errors, withheld and invalid never enter it)."""
    cells: dict[tuple[str, str], dict[str, int]] = {}
    for r in rollouts:
        key = (str(r["exam"]), str(r["agent"]))
        counts = cells.setdefault(key, {})
        counts[str(r["outcome"])] = counts.get(str(r["outcome"]), 0) + 1
    out = []
    for (exam, agent), counts in sorted(cells.items()):
        counted = sum(counts.get(o, 0) for o in COUNTED)
        cell: dict[str, Any] = {"exam": exam, "agent": agent, "rollouts": sum(counts.values()), "counts": counts}
        if counted >= MIN_ROLLOUTS_FOR_RATES:
            cell["passRate"] = counts.get("certified-pass", 0) / counted
        else:
            cell["rates"] = f"withheld: {counted} counted rollouts < {MIN_ROLLOUTS_FOR_RATES}"
        out.append(cell)
    return out


def ranking(cells: Iterable[Mapping[str, Any]]) -> tuple[list[dict[str, Any]] | None, str | None]:
    """Agents ordered by pooled pass rate, only when every cell of every agent has a rate (>= 10 counted
    rollouts); otherwise (None, why): a ranking over raw counts would rank noise."""
    cells = list(cells)
    thin = [c for c in cells if "passRate" not in c]
    if not cells or thin:
        return None, f"withheld: {len(thin)} of {len(cells)} cell(s) have fewer than {MIN_ROLLOUTS_FOR_RATES} " \
                     "counted rollouts"
    pooled: dict[str, list[int]] = {}
    for c in cells:
        tally = pooled.setdefault(str(c["agent"]), [0, 0])
        tally[0] += int(c["counts"].get("certified-pass", 0))
        tally[1] += sum(int(c["counts"].get(o, 0)) for o in COUNTED)
    ranked: list[dict[str, Any]] = [{"agent": a, "passRate": p / n, "counted": n} for a, (p, n) in pooled.items()]
    ranked.sort(key=lambda r: (-float(r["passRate"]), str(r["agent"])))
    return ranked, None

