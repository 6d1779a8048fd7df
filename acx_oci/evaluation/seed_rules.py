"""The seeds' rules as a consumer's defaults, each relaxed by one line of the trust file (issue 34) (pure).

A trust file that says nothing still refuses a level earned on exams that were never certified
(``exams_uncertified``) and a model-calling agent's level without post-cutoff evidence
(``contamination_unproven``). ``uncertifiedExams: allow`` and ``postCutoff: {required: false}``
relax them, and the check that passes because of a relaxation says so (resolve prints it). A simulated level
(reference solver, accepted through ``solvers``) keeps the old rules: its suite is not in exam form. A consumer
may also require that a regression check against the previous version ran (``regression: required``).
"""

from __future__ import annotations

from typing import Any

from acx_oci import reasons
from acx_oci.evaluation import contamination
from acx_oci.evaluation.checks import Check, bad, ok
from acx_oci.model import grading
from acx_oci.trust import AcceptedBenchmark, PostCutoff, Trust

#: The default contamination rule for a model-calling agent: every rated held-out game on a post-cutoff exam.
DEFAULT_POST_CUTOFF = PostCutoff(required=True, min_share=1.0)
RELAXED = "relaxed by the trust file"
RELAXED_CODE = "relaxed"


def relaxed(name: str, message: str) -> Check:
    """A check that passed only because the trust file relaxed a default (code ``relaxed``: resolve shows it)."""
    return Check(name, True, RELAXED_CODE, message)


def simulated(res: dict[str, Any]) -> bool:
    """Whether the level was earned by the reference solver (no ``acx:solver`` is one too)."""
    return str(res.get("acx:solver", "reference")) == "reference"


def exams(res: dict[str, Any], trust: Trust) -> Check:
    """Exams certified, unless the level is simulated or the trust file says ``uncertifiedExams: allow``."""
    state = res.get("acx:examCertification")
    if state == "certified" and res.get("acx:examCertificationDigest"):
        return ok("exam_certification", f"exams certified by {res.get('acx:examCertifier')}")
    if simulated(res):
        return ok("exam_certification", f"a simulated level: its suite is not in exam form ({state or 'unknown'})")
    if trust.uncertified_exams:
        return relaxed("exam_certification", f"exams not certified ({state or 'unknown'}); accepted: {RELAXED} "
                                        "(uncertifiedExams: allow)")
    return bad("exam_certification", reasons.EXAMS_UNCERTIFIED,
               f"the level was earned on exams that were never certified ({state or 'unknown'}); "
               "add 'uncertifiedExams: allow' to the trust file to accept such levels")


def post_cutoff(res: dict[str, Any], trust: Trust, accepted: AcceptedBenchmark) -> list[Check]:
    """The benchmark's ``postCutoff``, else the top-level one, else the default for a model-calling ROM run."""
    rule = accepted.post_cutoff or trust.post_cutoff
    calls_model = res.get("acx:model") is not None and not simulated(res)
    if rule is None:
        return [contamination.check(res, DEFAULT_POST_CUTOFF)] if calls_model else []
    result = contamination.check(res, rule)
    if calls_model and not rule.required and contamination.shortfall(res, DEFAULT_POST_CUTOFF) is not None:
        return [relaxed(contamination.CHECK, f"no post-cutoff evidence; accepted: {RELAXED} (postCutoff: "
                                        "{required: false})")]
    return [result]


def classification(res: dict[str, Any], trust: Trust | None) -> list[Check]:
    """``classification: {required: true}``: every exam's classification was stated by its author (the
    certification says so, and the credential carries it as ``acx:examClassification: stated``)."""
    if trust is None or not trust.classification_required:
        return []
    state = res.get("acx:examClassification")
    if state != "stated":
        return [bad("classification", reasons.CLASSIFICATION_UNSTATED,
                    "the trust file requires stated exam classifications (classification: {required: true}); "
                    f"this level's exams say {state or 'nothing'!r}")]
    return [ok("classification", "every exam's classification was stated by its author")]


def relaxations(res: dict[str, Any], trust: Trust | None) -> list[Check]:
    """``examRelaxations: {refuse: [...]}``: no exam of a certified level was certified under one of those
    relaxations (the credential names them: ``acx:examRelaxations``; one that says nothing is refused too)."""
    if trust is None or not trust.refused_relaxations or res.get("acx:examCertification") != "certified":
        return []
    used = res.get("acx:examRelaxations")
    refuse = ", ".join(trust.refused_relaxations)
    if not isinstance(used, list):
        return [bad("exam_relaxations", reasons.EXAM_RELAXATION_REFUSED,
                    f"the trust file refuses exams certified under {refuse}; this credential does not say which "
                    "relaxations its exams were certified under (issued before credentials named them)")]
    hit = sorted(set(map(str, used)) & set(trust.refused_relaxations))
    if hit:
        return [bad("exam_relaxations", reasons.EXAM_RELAXATION_REFUSED,
                    f"the level's exams were certified under {', '.join(hit)}, which the trust file refuses "
                    "(examRelaxations: {refuse: [...]})")]
    return [ok("exam_relaxations", f"no exam certified under a refused relaxation ({refuse})")]


def promotion(res: dict[str, Any], trust: Trust | None) -> list[Check]:
    """Promotion (the reference design's stages 7-8): by default every imported exam behind a certified level was
    graded in its pinned image; ``promotion: {required: true}`` asks it of every exam, ``{required: false}``
    of none. A credential from before it said (no ``acx:examPromotion``) is refused only under ``true``."""
    if simulated(res) or res.get("acx:examCertification") != "certified":
        return []
    rule = trust.promotion_required if trust is not None else None
    claim = res.get("acx:examPromotion")
    if not isinstance(claim, dict):
        if rule:
            return [bad("promotion", reasons.EXAMS_UNPROMOTED, "the trust file requires promoted exams "
                        "(promotion: {required: true}); this credential does not say (issued before it did)")]
        return []
    exams, promoted = int(claim.get("exams") or 0), int(claim.get("promoted") or 0)
    unpromoted_imports = int(claim.get("importedUnpromoted") or 0)
    if rule and promoted < exams:
        return [bad("promotion", reasons.EXAMS_UNPROMOTED, f"{exams - promoted} of the level's {exams} exams were "
                    "not graded in a pinned image; the trust file requires every one (promotion: {required: true})")]
    if unpromoted_imports and rule is None:
        return [bad("promotion", reasons.EXAMS_UNPROMOTED,
                    f"{unpromoted_imports} of the level's imported exams were not graded in their pinned images "
                    "(certified with the host's Python); add 'promotion: {required: false}' to the trust file to "
                    "accept such levels")]
    if unpromoted_imports:
        return [relaxed("promotion", f"{unpromoted_imports} imported exam(s) not promoted; accepted: {RELAXED} "
                                     "(promotion: {required: false})")]
    return [ok("promotion", f"{promoted} of {exams} exams promoted (graded in a pinned image)")]


def regression(res: dict[str, Any], trust: Trust | None) -> list[Check]:
    """No regression between versions (issue 44.1). By default a level says how its verifier settled the previous
    version (``acx:previousVersion``), and one that had a previous version carries the comparison
    (``acx:baseline``); ``regression: required`` asks the comparison of every level, ``regression: optional``
    accepts a level that says nothing (issued before the verifier looked for the previous version)."""
    if trust is None:
        return []
    base = res.get("acx:baseline")
    digest = base.get("credentialDigest") if isinstance(base, dict) else None
    compared = bool(digest)
    said = res.get("acx:previousVersion")
    if trust.regression_required and not compared:
        return [bad("regression", reasons.REGRESSION_UNCHECKED,
                    "the trust file requires a regression check against the previous version (regression: "
                    "required); this credential carries none (no acx:baseline)")]
    if compared:
        return [ok("regression", f"checked against the previous version's credential {digest}")]
    if said in ("none", "own-level", "replay"):
        why = {"none": "the verifier had no level of an earlier version",
               "own-level": "this ROM's own level was attested again", "replay": "a replay of another run"}[said]
        return [ok("regression", f"no previous version to compare with: {why}")]
    if said in ("named", "ledger"):
        return [bad("regression", reasons.REGRESSION_UNCHECKED,
                    f"the credential says its previous version was {said} but carries no comparison (acx:baseline)")]
    if trust.regression_optional:
        return [relaxed("regression", f"no word on the previous version; accepted: {RELAXED} (regression: optional)")]
    return [bad("regression", reasons.REGRESSION_UNCHECKED,
                "the credential does not say whether its verifier compared this version with the previous one "
                "(issued before that check was the default); add 'regression: optional' to the trust file to "
                "accept such levels")]


def tamper_checks(res: dict[str, Any], trust: Trust) -> list[Check]:
    """How the exams were graded (``acx:grading``): by default a non-simulated level must say it, and every
    in-process grade must have run the tamper checks; ``tamperChecks: optional`` relaxes that (levels issued
    before issue 46). A relaxation an exam was certified under (``runnerImportsPackageUnderTest``) is the
    certification's, refused with ``examRelaxations: {refuse: [...]}`` (:func:`relaxations`)."""
    if simulated(res):
        return []
    how = res.get("acx:grading")
    missing = ["acx:grading"] if not isinstance(how, dict) else grading.missing_checks(how)
    out: list[Check] = []
    if not missing and isinstance(how, dict):
        out.append(ok("tamper_checks", f"graded {', '.join(how.get('modes') or ())} with tamper checks "
                                       f"{', '.join(how.get('tamperChecks') or ()) or 'none needed'}"))
    elif trust.tamper_checks_optional:
        out.append(relaxed("tamper_checks", f"no proof of tamper checks ({missing[0]} missing); accepted: "
                                            f"{RELAXED} (tamperChecks: optional)"))
    else:
        why = ("the credential does not say how its exams were graded (issued before tamper checks)"
               if missing == ["acx:grading"] else f"in-process grades without the tamper checks {missing}")
        out.append(bad("tamper_checks", reasons.TAMPER_CHECKS_UNPROVEN,
                       f"{why}; add 'tamperChecks: optional' to the trust file to accept such levels"))
    return out
