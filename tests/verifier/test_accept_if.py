"""The ``acceptIf`` language: parsing, evaluation, blame per suite, and malformed input as one line (pure)."""

from __future__ import annotations

import pytest

from acx_oci.errors import UsageError
from acx_oci.rating import accept_if as ai

SAME = ai.SuiteRating(30.0, 1.0)  # R 27


def env(new_in: ai.SuiteRating = SAME, new_out: ai.SuiteRating = SAME, base_in: ai.SuiteRating = SAME,
        base_out: ai.SuiteRating = SAME, tolerance: float = 3.0) -> ai.Env:
    return ai.Env({"heldIn": new_in, "heldOut": new_out}, {"heldIn": base_in, "heldOut": base_out}, tolerance)


def run(text: str, e: ai.Env) -> ai.Outcome:
    return ai.evaluate(ai.parse(text), e)


SEED = "heldIn.R >= baseline.heldIn.R and heldOut.R >= baseline.heldOut.R"


def test_the_seed_example() -> None:
    assert run(SEED, env()) == ai.Outcome(True)
    assert run(SEED, env(new_in=ai.SuiteRating(29.0, 1.0))) == ai.Outcome(False, ("heldIn",))
    assert run(SEED, env(new_out=ai.SuiteRating(29.0, 1.0))) == ai.Outcome(False, ("heldOut",))
    both = env(new_in=ai.SuiteRating(29.0, 1.0), new_out=ai.SuiteRating(29.0, 1.0))
    assert run(SEED, both) == ai.Outcome(False, ("heldIn", "heldOut"))


def test_the_flat_tolerance_rule() -> None:
    down2 = ai.SuiteRating(28.0, 1.0)
    assert run(ai.FLAT_TOLERANCE, env(new_in=down2, tolerance=3.0)).accepted
    assert run(ai.FLAT_TOLERANCE, env(new_in=down2, tolerance=1.0)) == ai.Outcome(False, ("heldIn",))


def test_no_regression_refuses_when_worse_with_probability_at_least_0_9() -> None:
    """Issue 34: P(new mu < base mu) = Phi((mu_b - mu_n) / sqrt(sigma_n^2 + sigma_b^2)); refused at >= 0.9."""
    assert ai.parse("no-regression") == ai.parse(ai.NO_REGRESSION)
    se = 2 ** 0.5  # both sigmas 1.0
    z90 = 1.2815515655446004
    barely = ai.SuiteRating(30.0 - (z90 - 0.01) * se, 1.0)  # worse with probability just under 0.9: accepted
    clearly = ai.SuiteRating(30.0 - (z90 + 0.01) * se, 1.0)  # just over 0.9: refused
    assert run("no-regression", env(new_in=barely, tolerance=99.0)).accepted
    assert run("no-regression", env(new_out=clearly, tolerance=99.0)) == ai.Outcome(False, ("heldOut",))
    # the flat rule accepted a fall of 3 levels of R on both suites; the default does not
    fell3 = ai.SuiteRating(27.0, 1.0)
    assert run(ai.FLAT_TOLERANCE, env(new_in=fell3, new_out=fell3, tolerance=3.0)).accepted
    assert not run("no-regression", env(new_in=fell3, new_out=fell3, tolerance=3.0)).accepted


def test_fields_arithmetic_and_logic() -> None:
    e = env(new_in=ai.SuiteRating(31.0, 2.0), base_in=ai.SuiteRating(30.0, 1.0))  # new R 25, base R 27
    assert run("heldIn.mu > baseline.heldIn.mu", e).accepted
    assert not run("heldIn.R > baseline.heldIn.R", e).accepted
    assert run("heldIn.R + 2 >= baseline.heldIn.R", e).accepted
    assert run("heldIn.sigma - 1 <= baseline.heldIn.sigma and -1 < 0", e).accepted
    assert run("(heldIn.R - 1) < 25 or false", e).accepted
    assert run("not (heldIn.R >= baseline.heldIn.R)", e).accepted
    assert run("((heldOut.R >= 27))", e).accepted
    assert run("true", e).accepted and not run("false", e).accepted
    # An "or" is false only when both sides are: both are blamed; a "not" blames what it negated.
    assert run("heldIn.R > 99 or heldOut.R > 99", e) == ai.Outcome(False, ("heldIn", "heldOut"))
    assert run("not heldOut.R >= 0", e) == ai.Outcome(False, ("heldOut",))
    # Only the false side of a failed "and" is blamed.
    assert run("heldIn.R > 0 and heldOut.R > 99", e) == ai.Outcome(False, ("heldOut",))
    assert run("(heldIn.R > 99 or heldOut.R > 0) and heldIn.R > 99", e) == ai.Outcome(False, ("heldIn",))


def test_noninferior_uses_both_sigmas() -> None:
    base = ai.SuiteRating(30.0, 1.0)
    # A 1.0 drop with sigmas 1 and 1: z = (-1 + 2) / sqrt(2) = 0.71 < 1.645 at alpha 0.05, >= 0.52 at 0.3.
    drop = ai.SuiteRating(29.0, 1.0)
    assert not ai.noninferior(drop, base, 2.0, 0.05) and ai.noninferior(drop, base, 2.0, 0.3)
    # The same drop measured more precisely passes at 0.05: z = 1 / hypot(0.4, 0.4) = 1.77.
    assert ai.noninferior(ai.SuiteRating(29.0, 0.4), ai.SuiteRating(30.0, 0.4), 2.0, 0.05)
    assert run("noninferior(2, 0.1)", env(new_out=drop)) == ai.Outcome(False, ("heldOut",))
    assert run("noninferior(heldIn, 2, 0.1)", env(new_out=drop)).accepted  # held-in only (z 1.41 >= 1.28)
    assert run("noninferior(2, 0.3) and heldIn.R >= baseline.heldIn.R - tolerance", env(new_out=drop)).accepted


@pytest.mark.parametrize(("text", "column", "what"), [
    ("", None, "empty"),
    ("heldIn.R >=", 12, "expected a number or a rating"),
    ("heldIn.R", 9, "expected a comparison"),
    ("heldIn.R >= baseline.heldIn", 13, "unknown name"),
    ("heldIn.Q >= 1", 1, "unknown name"),
    ("heldOut.R >= 1 and", 19, "expected a number or a rating"),
    ("heldIn.R >= 1 heldOut.R >= 1", 15, "after a complete expression"),
    ("heldIn.R >= 1; import os", 14, "unexpected character ';'"),
    ("__import__('os').system('x')", 1, "unexpected character '_'"),
    ("heldIn.R == 1", 10, "unexpected character '='"),
    ("noninferior(2)", 14, "expected ,"),
    ("noninferior(-1, 0.05)", 13, "margin must be >= 0"),
    ("noninferior(1, 1.5)", 16, "alpha must be between 0 and 1"),
    ("noninferior(bogus, 1, 0.05)", 13, "expected a number"),
    ("(heldIn.R >= 1", 15, "expected )"),
    ("heldIn.R >= 1 and 3", 20, "expected a comparison"),
])
def test_malformed_input_is_one_line(text: str, column: int | None, what: str) -> None:
    with pytest.raises(UsageError) as info:
        ai.parse(text)
    message = str(info.value)
    assert message.startswith("acceptIf: ") and "\n" not in message and what in message, message
    if column is not None:
        assert f"column {column}:" in message, message


def test_a_very_long_expression_is_refused() -> None:
    with pytest.raises(UsageError, match="longer than"):
        ai.parse(" and ".join(["true"] * 300))


def test_deep_nesting_is_refused_not_a_recursion_error() -> None:
    with pytest.raises(UsageError, match="nested deeper than 16"):
        ai.parse("(" * 400 + "true" + ")" * 400)
    assert ai.parse("(" * 16 + "true" + ")" * 16) == ai.Const(True)
    assert not ai.evaluate(ai.parse(" ".join(["not"] * 201) + " true"), ai.Env({}, {}, 0.0)).accepted
