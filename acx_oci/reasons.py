"""Every reason code acx-oci reports, each spelt once, with its one-line meaning and its exit code.

Reports, JSON output, gateway denials and ledger rows carry these codes; users and policies match
on them, so a code is data with one home: every other module imports the name, never writes the
string. ``docs/reasons.md`` is generated from :data:`REASONS` (``python -m acx_oci.reasons``) and a
test keeps the two equal. An exception class carries its code here too (``errors.py`` sets
``code = reasons.X``), so a check and an exception that mean the same thing share one spelling.

``exit_code`` is the process exit code when the reason ends a command (1 verification or policy,
2 usage or bad input, 3 registry or network); ``None`` for reasons that never end one by
themselves (a sandboxed agent's refused model request, a copy's classification of a referrer).
"""

from __future__ import annotations

from dataclasses import dataclass

#: Kinds of reasons, in the order the generated table lists them.
KINDS = {
    "error": "an exception's code: the command stops with this exit code",
    "check": "a verification check: the credential (or list) does not count",
    "requirement": "a `--require` or policy rule that is not met",
    "attest": "why `attest` did not issue (or did not start)",
    "gateway": "why the gateway refused a request (its `acx-gateway-denied` header and JSON detail)",
    "egress": "why the model proxy refused an agent's request (HTTP answer inside the sandbox)",
    "copy": "how `copy` classified a referrer",
}


@dataclass(frozen=True)
class Reason:
    """One code: what it means and what a command that stops on it exits with."""

    code: str
    kind: str
    exit_code: int | None
    meaning: str


REASONS: dict[str, Reason] = {}


def _r(code: str, kind: str, exit_code: int | None, meaning: str) -> str:
    """Register a code once and return it: the constant *is* the code string, so JSON stays plain."""
    if code in REASONS or kind not in KINDS:
        raise ValueError(f"reason {code!r} defined twice or of unknown kind {kind!r}")
    REASONS[code] = Reason(code, kind, exit_code, meaning)
    return code


# -- exceptions (errors.py) ------------------------------------------------------------------------
ERROR = _r("error", "error", 2, "an unclassified acx-oci error")
BAD_INPUT = _r("bad_input", "error", 2, "malformed input, a wrong argument or an unsupported media type")
SCHEMA_INVALID = _r("schema_invalid", "check", 2,
                    "a document does not match its JSON Schema, is not I-JSON, or has the wrong shape")
STATUS_INVALID = _r("status_invalid", "check", 2,
                    "a status list (or entry) is malformed, unsigned by its issuer, or a decompression bomb")
REQUEST_REFUSED = _r("request_refused", "error", 2, "a request the gateway's router will not forward")
SANDBOX_INVALID = _r("sandbox_invalid", "error", 2, "the sandbox cannot be built as specified")
CONTAINMENT_UNPROVEN = _r("containment_unproven", "error", 2,
                          "the sandbox's containment was not proven on this run: nothing is graded or signed")
TREE_REFUSED = _r("tree_refused", "error", 2, "a tree too large, too deep, or with a name that is not UTF-8")
PATH_OUTSIDE = _r("path_outside", "error", 2, "a name or link in a tree from outside leads out of it")
NOT_FOUND = _r("not_found", "error", 2, "the reference names no manifest, blob or tag")
VERIFICATION_FAILED = _r("verification_failed", "error", 1, "a signature, binding or policy did not hold")
DIGEST_MISMATCH = _r("digest_mismatch", "error", 1, "bytes do not match the digest that names them")
TAMPERED = _r("tampered", "error", 1, "the ROM was edited after it was signed")
WORKER_ANSWER_REFUSED = _r("worker_answer_refused", "error", 1,
                           "a Dask worker answered with something that is not plain, well-formed data")
STATUS_REPLACE_REFUSED = _r("status_replace_refused", "error", 1,
                            "a copy would replace a status list with one that is not the same issuer's")
IMAGE_UNSAFE = _r("image_unsafe", "error", 1, "an environment image cannot be unpacked safely")
POLICY_UNREADABLE = _r("policy_unreadable", "error", 1, "the policy cannot be evaluated for this request: denied")
GATEWAY_DENIED = _r("gateway_denied", "error", 1, "an acx-oci gateway refused the pull or push on policy grounds")
DID_UNRESOLVABLE = _r("did_unresolvable", "error", 1, "a DID or verification method gives no usable key")
METHOD_NOT_AUTHORIZED = _r("method_not_authorized", "error", 1,
                           "the verification method is not under the DID's assertionMethod")
FETCH_FAILED = _r("fetch_failed", "error", 3, "the registry (or the network to it) failed or refused")
PUBLISH_FAILED = _r("publish_failed", "error", 3,
                    "the registry failed while a signed result was pushed; `attest --publish` retries it")
DEADLINE_EXCEEDED = _r("deadline_exceeded", "error", 3, "the operation's wall-clock deadline passed")
BYTE_BOUND = _r("byte_bound", "error", 3, "the resolution read its byte bound; the answer is partial")
NOTE_INVALID = _r("note_invalid", "error", 2, "bytes that are not a C2SP signed note, checkpoint or verifier key")
LOG_INVALID = _r("log_invalid", "check", 1, "a transparency log's proof, tile or signature does not hold")
NOT_LOGGED = _r("not_logged", "check", 1, "the entry's inclusion proof does not lead to a trusted checkpoint")
LOG_INCONSISTENT = _r("log_inconsistent", "check", 1,
                      "two tree heads of one log that no consistency proof joins: a fork, a shrink or a rewind")
NOTE_UNVERIFIED = _r("note_unverified", "check", 1,
                     "a note no trusted key signed, or fewer witness cosignatures than the quorum")
WITNESS_REFUSED = _r("witness_refused", "error", 1, "a tlog-witness refused the checkpoint")

# -- verification checks (vc verify, resolve, the gateway) -----------------------------------------
PROOF_INVALID = _r("proof_invalid", "check", 1, "a Data Integrity proof is malformed or does not verify")
PROOF_MISSING = _r("proof_missing", "check", 1, "the document carries no proof")
ISSUER_KEY_MISMATCH = _r("issuer_key_mismatch", "check", 1, "the proof is by a key the issuer does not control")
ISSUER_UNTRUSTED = _r("issuer_untrusted", "check", 1, "the issuer is not a verifier in the trust file")
SELF_ISSUED = _r("self_issued", "check", 1, "the credential is issued by the cartridge's own publisher")
SIGMA_GATE = _r("sigma_gate", "check", 1, "the rating's sigma is not below the gate")
GAMES_GATE = _r("games_gate", "check", 1, "fewer rated games than the gate wants")
LEVEL_INCONSISTENT = _r("level_inconsistent", "check", 1, "the level does not follow from the signed rating")
ROM_MISMATCH = _r("rom_mismatch", "check", 1, "the credential is bound to other ROM bytes")
MANIFEST_MISMATCH = _r("manifest_mismatch", "check", 1, "the credential is bound to another cartridge manifest")
SOLVER_NOT_ACCEPTED = _r("solver_not_accepted", "check", 1, "the level was earned by a solver the trust file refuses")
MODEL_NOT_ACCEPTED = _r("model_not_accepted", "check", 1, "the agent called a model the trust file does not accept")
HELD_OUT_EXPOSED = _r("held_out_exposed", "check", 1,
                      "held-out tasks went to a model whose provider may keep or train on them")
BENCHMARK_NOT_ACCEPTED = _r("benchmark_not_accepted", "check", 1, "the trust file does not accept this benchmark")
HELD_OUT_MISMATCH = _r("held_out_mismatch", "check", 1, "the held-out slice is not the one the trust file names")
EXAM_UNCERTIFIED = _r("exam_uncertified", "check", 1, "the benchmark's exams are not certified as required")
EXAMS_UNCERTIFIED = _r("exams_uncertified", "check", 1,
                       "the level was earned on exams never certified (uncertifiedExams: allow accepts it)")
CLASSIFICATION_UNSTATED = _r("classification_unstated", "check", 1,
                             "the trust file requires stated exam classifications (classification: {required: "
                             "true}); the level's exams were not all classified by their author")
EXAMS_UNPROMOTED = _r("exams_unpromoted", "check", 1,
                      "the level's exams were not graded in their pinned images (promotion): imported exams must "
                      "be by default (promotion: {required: false} accepts it), every exam under {required: true}")
EXAM_RELAXATION_REFUSED = _r("exam_relaxation_refused", "check", 1,
                             "the level's exams were certified under a relaxation the trust file refuses "
                             "(examRelaxations: {refuse: [...]}), or its credential does not say which")
TAMPER_CHECKS_UNPROVEN = _r("tamper_checks_unproven", "check", 1,
                            "the level does not show the tamper checks its in-process grades need (or was issued "
                            "before they existed); 'tamperChecks: optional' in the trust file accepts it")
REGRESSION_UNCHECKED = _r("regression_unchecked", "check", 1,
                          "the trust file requires a regression check against the previous version; none ran")
CONTAMINATION_UNPROVEN = _r("contamination_unproven", "check", 1,
                            "too few rated games were on exams dated after the model's training cutoff")
CAPABILITY_MISMATCH = _r("capability_mismatch", "check", 1,
                         "the credential is for a capability the benchmark or the cartridge does not name")
NOT_YET_VALID = _r("not_yet_valid", "check", 1, "validFrom is in the future or missing")
EXPIRED = _r("expired", "check", 1, "validUntil has passed")
EVIDENCE_MISMATCH = _r("evidence_mismatch", "check", 1, "the game records do not match what the credential lists")
EVIDENCE_SIGNATURE = _r("evidence_signature", "check", 1, "a game record's DSSE signature does not verify")
EVIDENCE_MISSING = _r("evidence_missing", "check", 1, "the game records the credential lists are not in the registry")
EVIDENCE_TOO_LARGE = _r("evidence_too_large", "check", 1, "the attestation's game records exceed the byte bound")
REVOKED = _r("revoked", "check", 1, "the credential's revocation bit is set")
SUSPENDED = _r("suspended", "check", 1, "the credential's suspension bit is set")
STATUS_UNKNOWN = _r("status_unknown", "check", 1,
                    "revocation status cannot be known (fails closed unless the user opts out)")
STATUS_STALE = _r("status_stale", "check", 1, "the status list is older than its freshness bound")
STATUS_ROLLBACK = _r("status_rollback", "check", 1, "a status list older than one this consumer has seen")
NOT_AN_ATTESTATION = _r("not_an_attestation", "check", 1, "a referrer listed as an attestation is not one")
SUBJECT_MISMATCH = _r("subject_mismatch", "check", 1, "the attestation's subject is another manifest")
SUBJECT_MISSING = _r("subject_missing", "check", 1, "the attestation names no subject manifest")
SUBJECT_NOT_CARTRIDGE = _r("subject_not_cartridge", "check", 1, "the attestation's subject is not a cartridge")
MANIFEST_INVALID = _r("manifest_invalid", "check", 1, "an attestation or status-list manifest is malformed")
CREDENTIAL_MISSING = _r("credential_missing", "check", 1, "the credential blob is not in the repository")
REPLAY_DIVERGENT = _r("replay_divergent", "check", 1, "a replayed game does not reproduce its recorded outcome")
RECORDING_ALTERED = _r("recording_altered", "check", 1, "a model recording does not match its signed digest")
REPLAY_MISMATCH = _r("replay_mismatch", "check", 1, "a replay's inputs are not the run's")

# -- requirements and policy ---------------------------------------------------------------------
CAPABILITY_NOT_CLAIMED = _r("capability_not_claimed", "requirement", 1, "the cartridge does not claim the capability")
NO_ATTESTATION = _r("no_attestation", "requirement", 1, "no attestation of the capability verifies")
TIER_BELOW = _r("tier_below", "requirement", 1, "the verified tier is below the one required")
LEVEL_BELOW = _r("level_below", "requirement", 1, "the verified level is below the one required")
ISSUER_NOT_ALLOWED = _r("issuer_not_allowed", "requirement", 1, "the verifier is not one the requirement allows")
CREDENTIAL_TOO_OLD = _r("credential_too_old", "requirement", 1, "the deciding credential is older than allowed")
BENCHMARK_MISMATCH = _r("benchmark_mismatch", "requirement", 1, "the level was earned on another benchmark")
RESOLUTION_PARTIAL = _r("resolution_partial", "requirement", 1, "the resolution hit a bound, so it cannot decide")
ROM_UNSIGNED = _r("rom_unsigned", "requirement", 1, "the ROM carries no publisher signature")
ROM_TAMPERED = _r("rom_tampered", "requirement", 1, "the ROM signature does not cover these bytes")
PUBLISHER_UNTRUSTED = _r("publisher_untrusted", "requirement", 1, "the ROM's publisher is not trusted")
PUBLISHER_NOT_ALLOWED = _r("publisher_not_allowed", "requirement", 1, "the publisher is not one the policy allows")
CLAIM_NOT_VERIFIED = _r("claim_not_verified", "requirement", 1, "the claim is not verified")
MODEL_MISMATCH = _r("model_mismatch", "requirement", 1, "the level was earned with another model")

# -- attest ---------------------------------------------------------------------------------------
EXAMINER_UNRELIABLE = _r("examiner_unreliable", "attest", 1, "too many games were unrated: the run is withheld")
CHEATING_DETECTED = _r("cheating_detected", "attest", 1, "the agent touched the grader or the hidden tests")
GRADER_TAMPERING = _r("grader_tampering", "attest", 1,
                      "a submission forged its grade from inside the test process (the tamper checks fired): the "
                      "game is the agent's fail and the run is withheld from issuance, its attempt counted")
BELOW_FLOOR = _r("below_floor", "attest", 1,
                 "the run's gate (--sigma-max, --min-games) is looser than the floor (sigma < 1.5 over >= 30 games): "
                 "a look; the games are played and shown, no credential, no attempt counted, nothing pushed")
MODEL_UNAVAILABLE = _r("model_unavailable", "attest", 3, "the model provider could not be reached for this run")
COOLDOWN = _r("cooldown", "attest", 2, "the ROM (or the cartridge's claim) was attempted within the cooldown: "
              "not played; the refusal says when the next attempt is allowed")
SUPERSEDED = _r("superseded", "check", 1, "a newer credential of the same issuer, ROM, benchmark and capability "
                "verifies: the older one no longer decides (the verifier also revokes it)")
TOO_MANY_ATTEMPTS = _r("too_many_attempts", "requirement", 1,
                       "more attempts in the window than the requirement or policy's maxAttempts allows")
QUORUM_UNMET = _r("quorum_unmet", "requirement", 1,
                  "fewer distinct trusted verifiers (DIDs and keys) than minVerifiers attest the capability")

# -- gateway --------------------------------------------------------------------------------------
BLOB_DENIED = _r("blob_denied", "gateway", 1, "the blob belongs to a cartridge the policy denies")
BLOB_UNREFERENCED = _r("blob_unreferenced", "gateway", 1, "no manifest the gateway has judged references the blob")
STATUS_DELETE = _r("status_delete", "gateway", 1, "status lists are superseded by a newer list, never deleted")
BODY_TIMEOUT = _r("body_timeout", "gateway", None, "a request body did not arrive within its deadline")

# -- model egress (answers inside the sandbox) ---------------------------------------------------
ABSOLUTE_URI_REFUSED = _r("absolute_uri_refused", "egress", None, "only origin-form request targets are forwarded")
BODY_REFUSED = _r("body_refused", "egress", None, "the request body is not one JSON object the API accepts")
CONNECT_REFUSED = _r("connect_refused", "egress", None, "CONNECT is not allowed: the proxy forwards one API")
HEADERS_REFUSED = _r("headers_refused", "egress", None, "too many or too large request headers")
HOST_REFUSED = _r("host_refused", "egress", None, "the Host header does not name the sandbox's model endpoint")
MODEL_REFUSED = _r("model_refused", "egress", None, "the request names a model other than the run's")
PATH_REFUSED = _r("path_refused", "egress", None, "only the API's one path is forwarded")
REQUEST_BUDGET = _r("request_budget", "egress", None, "this game's request budget is spent")
TOKEN_BUDGET = _r("token_budget", "egress", None, "this game's token budget is spent")
TRANSCRIPT_BUDGET = _r("transcript_budget", "egress", None, "this game's model transcript is full")
TOOL_REFUSED = _r("tool_refused", "egress", None, "a provider-side tool would reach the network for the agent")
FIELD_REFUSED = _r("field_refused", "egress", None, "a request field or content part the proxy does not forward (a URL "
                   "or stored state the provider would reach, or a field not on the API's allow-list)")
UPGRADE_REFUSED = _r("upgrade_refused", "egress", None, "protocol upgrades are not allowed")
UPSTREAM_FAILED = _r("upstream_failed", "egress", None, "the model provider failed; the game is a lane error")
PROBE_UPSTREAM = _r("probe_upstream", "egress", None, "the containment probe's request, answered by the proxy itself")

# -- copy -----------------------------------------------------------------------------------------
NOT_DECIDING = _r("not_deciding", "copy", None, "it verified, but no verified claim rests on it")
NOT_JUDGED = _r("not_judged", "copy", None, "resolve never judged it (not a level attestation of the cartridge)")
PROJECTION_NOT_STANDING = _r("projection_not_standing", "copy", None, "a cosign projection of a level that does "
                                 "not stand at copy time (revoked, superseded, expired, or not verified under --trust)")


def markdown() -> str:
    """The reason table for ``docs/reasons.md``: generated, so the docs cannot drift from the code."""
    lines = ["# Reason codes", "",
             "Generated from `acx_oci/reasons.py` (`python -m acx_oci.reasons > docs/reasons.md`); a test keeps",
             "them equal. The exit code applies when the reason ends a command (– : it never does by itself).", ""]
    for kind, about in KINDS.items():
        lines += [f"## {kind}: {about}", "", "| code | exit | meaning |", "| --- | --- | --- |"]
        lines += [f"| `{r.code}` | {'–' if r.exit_code is None else r.exit_code} | {r.meaning} |"
                  for r in REASONS.values() if r.kind == kind]
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    print(markdown(), end="")
