"""Capability records (``acx.capability/1``): the *claims* a cartridge makes.

A record says what an agent claims to do (taskType on a stack, in a domain).
It is never proof: ``verified: true`` needs evidence references to be built at
all, and readers never trust the stored boolean — verified proficiency comes
only from resolving an attestation.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Any

from acx_oci.crypto import canonical, sha256_digest
from acx_oci.errors import UsageError
from acx_oci.jsonio import validate
from acx_oci.model.purl import canonical_purl, grammar_form
from acx_oci.model.rating import TIER_FLOOR, TIER_NAMES

SCHEMA_VERSION = "acx.capability/1"

TASK_TYPES = frozenset(
    {
        "build-dag", "write-migration", "design-api", "implement-feature", "refactor", "debug",
        "review", "test-authoring", "optimize-performance", "harden-security", "write-docs",
        "deploy", "incident-response", "data-modeling", "schema-design", "prompt-engineering",
        "dependency-upgrade",
    }
)

_TOKEN_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")
_NAMESPACED_RE = re.compile(r"^[a-z0-9]+(?:[.-][a-z0-9]+)*(?:\.[a-z0-9]+(?:-[a-z0-9]+)*)*:[a-z0-9]+(-[a-z0-9]+)*$")
_DOMAIN_RE = re.compile(r"^[a-z0-9]+(-[a-z0-9]+)*$")

# Free-form tech tokens (lower-cased) -> canonical purl.
PURL_ALIASES: dict[str, str] = {
    "airflow": "pkg:pypi/apache-airflow",
    "apache-airflow": "pkg:pypi/apache-airflow",
    "dbt": "pkg:pypi/dbt-core",
    "dbt-core": "pkg:pypi/dbt-core",
    "snowflake": "pkg:generic/snowflake",
    "bigquery": "pkg:generic/bigquery",
    "redshift": "pkg:generic/redshift",
    "databricks": "pkg:generic/databricks",
    "postgres": "pkg:generic/postgresql",
    "postgresql": "pkg:generic/postgresql",
    "mysql": "pkg:generic/mysql",
    "kafka": "pkg:generic/kafka",
    "redis": "pkg:generic/redis",
    "kubernetes": "pkg:generic/kubernetes",
    "k8s": "pkg:generic/kubernetes",
    "terraform": "pkg:generic/terraform",
    "aws": "pkg:generic/aws",
    "gcp": "pkg:generic/gcp",
    "azure": "pkg:generic/azure",
    "spark": "pkg:pypi/pyspark",
    "pyspark": "pkg:pypi/pyspark",
    "pandas": "pkg:pypi/pandas",
    "numpy": "pkg:pypi/numpy",
    "dagster": "pkg:pypi/dagster",
    "prefect": "pkg:pypi/prefect",
    "django": "pkg:pypi/django",
    "flask": "pkg:pypi/flask",
    "fastapi": "pkg:pypi/fastapi",
    "pytest": "pkg:pypi/pytest",
    "sqlalchemy": "pkg:pypi/sqlalchemy",
    "react": "pkg:npm/react",
    "typescript": "pkg:npm/typescript",
    "express": "pkg:npm/express",
    "rails": "pkg:gem/rails",
    "tokio": "pkg:cargo/tokio",
    # where the fallback still collides ("c++" and "c#" are both pkg:generic/c-): named, as the reference design asks
    "c++": "pkg:generic/cpp",
    "cpp": "pkg:generic/cpp",
    "c#": "pkg:generic/csharp",
    "csharp": "pkg:generic/csharp",
    "f#": "pkg:generic/fsharp",
    "fsharp": "pkg:generic/fsharp",
}


def to_purl(token: str) -> str:
    """Normalize a stack token: a purl is validated and written in our form (:mod:`.purl`); else the alias
    table (``_`` read as ``-``: ``apache_airflow`` is ``apache-airflow``; ``c++``, ``c#``, ``f#`` named), else
    the reference design's ``pkg:generic/`` fallback as it writes it."""
    t = str(token).strip().lower()
    if not t:
        raise UsageError("stack token: expected a package name or purl, found an empty string")
    if t.startswith("pkg:"):
        return canonical_purl(token)
    alias = PURL_ALIASES.get(t) or PURL_ALIASES.get(t.replace("_", "-"))
    if alias:
        return alias
    if not re.search(r"[a-z0-9]", t):
        raise UsageError(f"stack token {token!r}: expected a package name or purl, found no letter or digit")
    # the reference design's fallback exactly: 'pkg:generic/' + t.replace(/[^a-z0-9._-]+/g, '-') (ours stripped
    # the dashes, so "c++" and "c" were one capability id; docs/concepts.md has the migration note)
    return "pkg:generic/" + re.sub(r"[^a-z0-9._-]+", "-", t)


def check_task_type(task_type: str) -> str:
    """The reference design's vocabulary or a reverse-DNS namespaced token (contains ``:``)."""
    if task_type in TASK_TYPES:
        return task_type
    if ":" in task_type:
        if _NAMESPACED_RE.match(task_type):
            return task_type
        raise UsageError(
            f"taskType {task_type!r}: expected a reverse-DNS namespaced token like dev.acx.x:generate-terraform"
        )
    close = difflib.get_close_matches(task_type, sorted(TASK_TYPES), n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else \
        " (use a reverse-DNS-prefixed token like dev.example:my-task for private types)"
    raise UsageError(f"taskType {task_type!r}: expected one of the {len(TASK_TYPES)} task types of the reference "
                     f"vocabulary{hint}")


def capability_id(task_type: str, stack: list[str], domain: str | None) -> str:
    """Deterministic id from (taskType, sorted stack, domain)."""
    body = canonical({"taskType": task_type, "stack": sorted(stack), "domain": domain or ""})
    return "acx-cap:" + sha256_digest(body)


@dataclass(frozen=True)
class CapabilityRecord:
    """One capability claim; its ``id`` derives from (taskType, sorted stack, domain), so equal claims share it."""

    task_type: str
    stack: tuple[str, ...]
    domain: str | None = None
    score: float | None = None
    verified: bool = False
    evidence_refs: tuple[str, ...] = field(default_factory=tuple)

    @property
    def id(self) -> str:
        """The ``acx-cap:`` id of (taskType, stack, domain): what credentials and benchmarks name the claim by."""
        return capability_id(self.task_type, list(self.stack), self.domain)

    def display(self, with_domain: bool = False) -> str:
        """``build-dag[pkg:generic/snowflake+...]`` (the discovery-card form; a ``+`` inside a purl is ``%2B``)."""
        out = f"{self.task_type}[{'+'.join(grammar_form(s) for s in self.stack)}]"
        if with_domain and self.domain:
            out += f"@{self.domain}"
        return out

    def to_json(self) -> dict[str, Any]:
        """The ``acx.capability/1`` record as stored in a cartridge, proficiency included."""
        out: dict[str, Any] = {
            "schemaVersion": SCHEMA_VERSION,
            "id": self.id,
            "taskType": self.task_type,
            "stack": list(self.stack),
            "proficiency": {
                "score": self.score,
                "verified": self.verified,
                "evidenceRefs": list(self.evidence_refs),
            },
        }
        if self.domain:
            out["domain"] = self.domain
        return out


def make_record(
    task_type: str,
    stack: list[str],
    domain: str | None = None,
    *,
    score: float | None = None,
    verified: bool = False,
    evidence_refs: list[str] | None = None,
) -> CapabilityRecord:
    """Build a normalized record; refuses ``verified: true`` without evidence."""
    check_task_type(task_type)
    if domain is not None and not _DOMAIN_RE.match(domain):
        raise UsageError(f"domain {domain!r}: expected lowercase words joined by '-'")
    refs = tuple(evidence_refs or ())
    if verified and not refs:
        raise UsageError("capability: verified: true requires evidenceRefs (verified is earned, never declared)")
    purls = tuple(sorted({to_purl(s) for s in stack}))
    rec = CapabilityRecord(task_type, purls, domain, score, verified, refs)
    validate(rec.to_json(), "capability.schema.json", f"capability {rec.display()}")
    return rec


def record_from_json(obj: Any, what: str = "capability record", *, stored: bool = False) -> CapabilityRecord:
    """Read a record; re-normalize and check that its id is the deterministic one. ``stored`` (a ROM's, as
    written by ``cartridge push``): its ``schemaVersion`` is required too (a hand-written cartridge.yaml may omit
    it: the push writes it)."""
    validate(obj, "capability.schema.json", what)
    if stored and obj.get("schemaVersion") != SCHEMA_VERSION:
        raise UsageError(f"{what}: expected schemaVersion {SCHEMA_VERSION!r}, found "
                         f"{str(obj.get('schemaVersion'))[:60] if 'schemaVersion' in obj else 'none'}")
    prof = obj.get("proficiency") or {}
    rec = make_record(
        obj["taskType"],
        list(obj["stack"]),
        obj.get("domain"),
        score=prof.get("score"),
        verified=bool(prof.get("verified", False)),
        evidence_refs=list(prof.get("evidenceRefs") or []),
    )
    if obj.get("id") not in (None, rec.id):
        raise UsageError(f"{what}: id {obj.get('id')} is not the id of its (taskType, stack, domain), {rec.id}")
    return rec


_CAP_RE = re.compile(r"^(?P<tt>[^\[\]@]+)(?:\[(?P<stack>[^\[\]]*)\])?(?:@(?P<domain>[^\[\]@]+))?$")


def parse_capability(text: str) -> CapabilityRecord:
    """Parse the CLI display form ``TASKTYPE[TOKEN+TOKEN...]@DOMAIN`` (stack and domain optional).

    ``+`` only separates tokens; a purl that holds one (a deb version ``1+deb9u1``) writes it ``%2B``.
    """
    m = _CAP_RE.match(text.strip())
    if not m:
        raise UsageError(f"capability {text!r}: expected TASKTYPE[TOKEN+TOKEN...]@DOMAIN")
    stack_text = m.group("stack")
    tokens = [t for t in (stack_text.split("+") if stack_text else []) if t.strip()]
    if stack_text is not None and not tokens:
        raise UsageError(f"capability {text!r}: empty stack '[]' (leave the brackets out for no stack)")
    return make_record(m.group("tt").strip(), tokens, m.group("domain"))


@dataclass(frozen=True)
class LevelFloor:
    """``TASKTYPE>=TIER`` (or ``>=LEVEL``) as given to ``--require``."""

    task_type: str
    min_tier: str | None
    min_level: int | None
    model: str | None = None  # ``...@model=ID``: only a level earned with that model counts


def parse_requirement(text: str) -> LevelFloor:
    """``TASKTYPE>=TIER`` or ``TASKTYPE>=LEVEL``, optionally ``@model=MODEL-ID``."""
    text, at, model = text.partition("@model=")
    if at and not model.strip():
        raise UsageError(f"requirement {text}@model=: expected a model id after @model=")
    req = _parse_floor(text)
    return LevelFloor(req.task_type, req.min_tier, req.min_level, model.strip() or None)


def _parse_floor(text: str) -> LevelFloor:
    tt, sep, rhs = text.partition(">=")
    if not sep or not tt.strip() or not rhs.strip():
        raise UsageError(f"requirement {text!r}: expected TASKTYPE>=TIER (e.g. build-dag>=senior) or TASKTYPE>=LEVEL")
    tt, rhs = tt.strip(), rhs.strip()
    check_task_type(tt)
    if rhs.isdigit():
        return LevelFloor(tt, None, int(rhs))
    if rhs not in TIER_FLOOR:
        raise UsageError(f"requirement {text!r}: expected a tier ({', '.join(TIER_NAMES)}) or a level, found {rhs!r}")
    return LevelFloor(tt, rhs, None)
