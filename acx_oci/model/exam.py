"""Exam certification (DESIGN.md, issue 11): the record, its seal and the pure checks behind each stage.

An exam is certified when every stage but promotion (seed — the contract —, gold, grader, attack, eval,
canary, publication, freeze) is ok; promotion is recorded, never gating. Records carry the seed's stage names
and flags (``promotionEligible``, ``isolated``, ``controlsDistinguished``, ``trivialExploits``,
``passedForPromotion``, ``goldStillPassesAfterSuite``, ``allOk``); a record of the first shape
(``acx.exam-certification/1``: ``contract``, no ``eval``) is still read and checked, see :func:`stages_of`.
The services side (:mod:`acx_oci.services.exams`) runs the sandboxed grades and hands the facts to the functions here.

The record itself is a type, :class:`acx_oci.model.exam_record.CertificationRecord` (sealed by the stages,
loaded and checked once where it is read). Here: its constants, :func:`freeze_hash` ``(contract=...,
tree_hash=..., inputs=...) -> "sha256:..."`` (the freeze over every certifying input; see
:func:`acx_oci.services.exams.suite_freeze_hashes` for how a suite's are computed), the contract's facts and the
publication scan.
"""

from __future__ import annotations

import difflib
import io
import re
import tokenize
from collections.abc import Iterable, Mapping
from typing import Any

from acx_oci.crypto import canonical, sha256_digest
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


# --- the freeze (the record itself: acx_oci.model.exam_record) -------------------------------------------


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

