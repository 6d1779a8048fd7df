"""Policy files and their pure evaluation against a :class:`~acx_oci.model.resolution.Resolution`.

A policy says which repositories must meet which bar. It never looks at a
credential itself: :mod:`acx_oci.services.consumer.resolve` has already run every verification
rule (proof, self-issuance, bindings, gate, revocation — failing closed when a
status list is missing), so a policy only *selects* among credentials that
passed and explains the ones that did not. That keeps evaluation pure — the
same (policy, repository, resolution, now) always gives the same verdict —
so ``policy check`` and the gateway cannot disagree.

Example::

    apiVersion: acx.dev/policy/v1
    default: allow          # repositories no rule covers: allow or deny
    rules:
      - repositories: ["acx/*"]
        require:
          signedBy: trusted-publisher
          capabilities:
            - taskType: build-dag
              stack: [airflow]
              minTier: senior
              issuers: [did:web:verifier.example]
              maxCredentialAge: 30d
              benchmark: {id: acx-bench-dag-de, version: 2026.07.1}
              minVerifiers: 2     # two verifiers (distinct DIDs and keys); the level is the lower
              maxAttempts: {count: 3, window: 30d}   # resubmitting until lucky: too_many_attempts
              # (scope: publisher counts every cartridge id of the ROM's signing key, as its verifiers signed)
              postCutoff: {required: true, minShare: 0.8}  # contamination: games on exams after the cutoff
          anyOf:
            - capabilities: [{taskType: review, minLevel: 10}]
            - capabilities: [{taskType: debug, minLevel: 10}]

Every rule whose repository glob matches applies (they are ANDed): an
organization's bars add up, so a broad rule cannot be escaped by adding a
narrower one. Within a ``require`` block every key must hold (an implicit
``allOf``); ``capabilities`` lists are ANDed too. An empty ``allOf`` or
``anyOf`` is refused at load time: an empty ``allOf`` is vacuously true, and
a policy that allows everything by accident is the worst failure a gate can
have. Combinators follow sigstore-python's ``verify/policy.py``: small
classes, each with one ``evaluate``.
"""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acx_oci import reasons
from acx_oci.errors import UsageError
from acx_oci.evaluation import contamination
from acx_oci.evaluation.combine import AllOf, AnyOf
from acx_oci.evaluation.require_text import parse_max_attempts
from acx_oci.evaluation.requirements import (
    API_VERSION,
    TRUSTED_PUBLISHER,
    CapabilityRequirement,
    Considered,
    Requirement,
    RequirementResult,
    SignedBy,
    Verdict,
)
from acx_oci.files import load_yaml_or_json_file
from acx_oci.jsonio import validate
from acx_oci.model import AcceptedCredential, Resolution, check_task_type, level_result, to_purl
from acx_oci.timeutil import parse_duration
from acx_oci.trust import PostCutoff, post_cutoff_from
from acx_oci.urls import without_fragment

# --------------------------------------------------------------------------- policy


@dataclass(frozen=True)
class Rule:
    """A named rule: the requirements that every repository matching one of its glob patterns must meet."""
    name: str
    repositories: tuple[str, ...]
    requirements: tuple[Requirement, ...]

    def covers(self, repository: str) -> bool:
        """Whether one of the rule's patterns matches the repository (case-sensitive fnmatch)."""
        return any(fnmatch.fnmatchcase(repository, pattern) for pattern in self.repositories)


ALLOW, DENY = "allow", "deny"


@dataclass(frozen=True)
class Policy:
    """A parsed policy file: its rules, plus the default for repositories that no rule covers."""
    rules: tuple[Rule, ...]
    source: str = "policy"
    document: dict[str, Any] = field(default_factory=dict, repr=False)
    default: str = ALLOW  # what a repository no rule covers gets (``default:`` in the file)
    default_explicit: bool = False

    def rules_for(self, repository: str) -> list[Rule]:
        """The rules covering the repository (outer slashes ignored); empty means the default applies."""
        return [r for r in self.rules if r.covers(repository.strip("/"))]

    def covers(self, repository: str) -> bool:
        """Whether the policy decides for this repository: a rule covers it, or uncovered ones are denied."""
        return bool(self.rules_for(repository)) or self.default == DENY

    def describe_default(self) -> str:
        """One line for ``policy check`` and the gateway's startup: never leave the default implicit to a reader."""
        how = "set in the policy" if self.default_explicit else "implicit: write `default: allow` or `default: deny`"
        return f"repositories no rule covers: {self.default} ({how})"


def _check_combinators(node: Any, where: str) -> None:
    """Name an empty allOf/anyOf precisely (the schema's best match can point elsewhere)."""
    if isinstance(node, dict):
        for key in ("allOf", "anyOf"):
            if key in node and isinstance(node[key], list) and not node[key]:
                what = "would allow everything" if key == "allOf" else "can never be met"
                raise UsageError(f"{where}/{key}: is empty; an empty {key} {what}")
        for key, value in node.items():
            _check_combinators(value, f"{where}/{key}")
    elif isinstance(node, list):
        for i, item in enumerate(node):
            _check_combinators(item, f"{where}/{i}")


class PostCutoffCapability(CapabilityRequirement):
    """A capability requirement that also wants ``postCutoff``: a share of the deciding credential's rated games
    on exams dated after the model's cutoff (:mod:`acx_oci.evaluation.contamination`); else contamination_unproven."""

    def __init__(self, rule: PostCutoff, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.post_cutoff = rule

    def describe(self) -> str:
        """The capability's description plus the post-cutoff share it wants."""
        return f"{super().describe()}, {self.post_cutoff.min_share:.0%} of games post-cutoff"

    def _shortfalls(self, acc: AcceptedCredential, now: datetime, level: bool = True) -> list[tuple[str, str]]:
        out = super()._shortfalls(acc, now, level)
        why = contamination.shortfall(level_result(acc.credential) or {}, self.post_cutoff)
        return [*out, (reasons.CONTAMINATION_UNPROVEN, why)] if why else out


def _capability(raw: dict[str, Any], where: str) -> CapabilityRequirement:
    try:
        task_type = check_task_type(str(raw["taskType"]))
        stack = tuple(to_purl(t) for t in raw.get("stack") or [])
        age_raw = raw.get("maxCredentialAge")
        age = parse_duration(age_raw, f"{where} maxCredentialAge")
    except UsageError as exc:
        raise UsageError(f"{where}: {exc}") from None
    bench = raw.get("benchmark") or {}
    issuers = raw.get("issuers")
    limit = raw.get("maxAttempts")
    bound = parse_max_attempts(limit["count"], limit["window"], where, limit.get("scope", "cartridge")) \
        if isinstance(limit, dict) else None
    kwargs: dict[str, Any] = dict(
        task_type=task_type,
        stack=stack,
        domain=raw.get("domain"),
        min_tier=raw.get("minTier"),
        min_level=raw.get("minLevel"),
        issuers=tuple(without_fragment(str(i)) for i in issuers) if issuers else None,
        max_age_seconds=age,
        max_age_text=str(age_raw) if age_raw is not None else None,
        benchmark_id=bench.get("id"),
        benchmark_version=bench.get("version"),
        model=raw.get("model"),
        min_verifiers=raw.get("minVerifiers"),
        max_attempts=bound,
    )
    rule = post_cutoff_from(raw.get("postCutoff"))
    if rule is not None and rule.required:
        return PostCutoffCapability(rule, **kwargs)
    return CapabilityRequirement(**kwargs)


def _parts(node: dict[str, Any], where: str) -> list[Requirement]:
    """A ``require`` block's keys, each its own requirement (an implicit allOf)."""
    parts: list[Requirement] = []
    signed = node.get("signedBy")
    if signed == TRUSTED_PUBLISHER:
        parts.append(SignedBy())
    elif isinstance(signed, list):
        parts.append(SignedBy(tuple(without_fragment(str(d)) for d in signed)))
    for i, cap in enumerate(node.get("capabilities") or []):
        parts.append(_capability(cap, f"{where}/capabilities/{i}"))
    if "allOf" in node:
        parts.append(AllOf([_node(n, f"{where}/allOf/{i}") for i, n in enumerate(node["allOf"])]))
    if "anyOf" in node:
        parts.append(AnyOf([_node(n, f"{where}/anyOf/{i}") for i, n in enumerate(node["anyOf"])]))
    return parts


def _node(node: dict[str, Any], where: str) -> Requirement:
    parts = _parts(node, where)
    return parts[0] if len(parts) == 1 else AllOf(parts)


def policy_from_dict(data: Any, source: str = "policy") -> Policy:
    """Validate (schema, then combinator sanity) and build a :class:`Policy`."""
    if isinstance(data, dict):
        _check_combinators(data.get("rules"), f"{source}: rules")
    validate(data, "policy.schema.json", source)
    rules = []
    for i, raw in enumerate(data["rules"]):
        name = str(raw.get("name") or f"rules[{i}]")
        rules.append(Rule(name, tuple(raw["repositories"]), tuple(_parts(raw["require"], f"{source}: rules/{i}"))))
    default = data.get("default")
    return Policy(tuple(rules), source, data, default or ALLOW, default is not None)


def load_policy(path: str | Path) -> Policy:
    """Load a YAML/JSON policy file; every problem is a one-line UsageError."""
    data = load_yaml_or_json_file(path, "policy file")
    return policy_from_dict(data, f"policy file ({path})")


def evaluate(policy: Policy, repository: str, resolution: Resolution, now: datetime) -> Verdict:
    """Pure: which requirements of the rules covering ``repository`` the resolution meets."""
    if now.tzinfo is None:
        now = now.replace(tzinfo=UTC)
    repo = repository.strip("/")
    rules = policy.rules_for(repo)
    notes = list(resolution.notes)
    if not rules:
        allowed = policy.default == ALLOW
        note = f"no rule covers repository {repo}; {'allowed' if allowed else 'denied'} by the policy's default " \
               f"(default: {policy.default})"
        return Verdict(allowed, repo, resolution.manifest_digest, (), (), (note, *notes), resolution.partial,
                       resolution.replayed)
    results = tuple(req.evaluate(resolution, now) for rule in rules for req in rule.requirements)
    return Verdict(all(r.met for r in results), repo, resolution.manifest_digest,
                   tuple(r.name for r in rules), results, tuple(notes), resolution.partial, resolution.replayed)


__all__ = [
    "API_VERSION", "AllOf", "AnyOf", "CapabilityRequirement", "Considered", "Policy", "Requirement",
    "RequirementResult", "Rule", "SignedBy", "Verdict", "evaluate", "load_policy", "policy_from_dict",
]
