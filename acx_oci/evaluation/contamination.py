"""Contamination in the consumer's hands: did enough rated games use exams dated after the model's cutoff? (pure)

An exam the model may have seen in training measures memory, not skill. The verifier records in the
credential how many rated held-out games were on exams dated strictly after the training cutoff
(``acx:postCutoff``); a trust file (per benchmark) or a policy can require a share of them. The verifier's
own draw does not decide this: an undated exam never counts, and without a known cutoff no game does.
"""

from __future__ import annotations

from typing import Any

from acx_oci import reasons
from acx_oci.evaluation.checks import Check, bad, ok
from acx_oci.trust import PostCutoff

CHECK = "post_cutoff"


def shortfall(res: dict[str, Any], rule: PostCutoff) -> str | None:
    """Why the credential's result does not meet ``rule`` (one line), or None when it does."""
    pc = res.get("acx:postCutoff")
    if not isinstance(pc, dict):
        return "the credential does not count its post-cutoff games (no acx:postCutoff)"
    if pc.get("cutoff") is None:
        return "no training cutoff was known for the model, so no game is proven to be after it"
    qualifying, drawn = pc.get("qualifying"), pc.get("drawn")
    if not isinstance(qualifying, int) or not isinstance(drawn, int) or drawn <= 0:
        return "acx:postCutoff counts no rated games"
    if qualifying / drawn + 1e-12 < rule.min_share:
        return (f"{qualifying} of {drawn} rated games were on exams dated after the cutoff {pc['cutoff']} "
                f"({pc.get('source')}); at least {rule.min_share:.0%} are required")
    return None


def check(res: dict[str, Any], rule: PostCutoff | None) -> Check:
    """The trust file's ``postCutoff`` rule for this credential's benchmark, as one check."""
    if rule is None or not rule.required:
        return ok(CHECK, "the trust file requires no post-cutoff evidence for this benchmark")
    why = shortfall(res, rule)
    if why is not None:
        return bad(CHECK, reasons.CONTAMINATION_UNPROVEN, why)
    pc = res["acx:postCutoff"]
    return ok(CHECK, f"{pc['qualifying']} of {pc['drawn']} rated games on exams dated after {pc['cutoff']}")
