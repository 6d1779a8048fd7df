"""``acceptIf``: the small language a ROM's ``policy.verification.regression`` states its acceptance rule in (pure).

A hand-written tokenizer and recursive-descent parser (never Python ``eval``): the expression is signed input
from a cartridge author, so nothing in it may do more than compare numbers. Grammar, loosest first::

    expr   := and ("or" and)*
    and    := not ("and" not)*
    not    := "not" not | cmp
    cmp    := sum (("<" | "<=" | ">" | ">=") sum)? | "true" | "false" | call | "(" expr ")"
    sum    := atom (("+" | "-") atom)*
    atom   := NUMBER | "-" atom | ref | "tolerance" | "(" sum ")"
    ref    := ["baseline" "."] ("heldIn" | "heldOut") "." ("R" | "mu" | "sigma")
    call   := "noninferior" "(" [("heldIn" | "heldOut") ","] NUMBER "," NUMBER ")"

``heldIn.R`` is the new version's R = mu - 3 sigma on the held-in suite, ``baseline.heldOut.mu`` the baseline's mu
on the held-out suite, ``tolerance`` the verifier's regression tolerance. ``noninferior(margin, alpha)`` is a
one-sided test on both suites (one suite when named first) that the new mu is not worse than the baseline's
by ``margin`` or more: ``(mu_new - mu_base + margin) / sqrt(sigma_new^2 + sigma_base^2) >= z(1 - alpha)``.
Types are checked when parsing: a comparison takes numbers, ``and``/``or``/``not`` take truth values, and the
whole expression must be a truth value. Any problem is one :class:`UsageError` line naming the column.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from statistics import NormalDist

from acx_oci.errors import UsageError

SUITES = ("heldIn", "heldOut")
FIELDS = ("R", "mu", "sigma")
MAX_LENGTH = 1000
MAX_DEPTH = 16  # parentheses nested deeper are refused (the parser recurses)
#: The rule when a ROM says ``acceptIf: no-regression`` (what ``cartridge init`` writes) or nothing: refuse when the
#: new version is worse with probability >= 0.9 on either suite, from both ratings' mu and sigma (issue 34; until
#: then :data:`FLAT_TOLERANCE`, which let a version fall 3 levels on both suites). docs/performance.md compares them.
NO_REGRESSION = "noninferior(0, 0.9)"
FLAT_TOLERANCE = "heldIn.R >= baseline.heldIn.R - tolerance and heldOut.R >= baseline.heldOut.R - tolerance"

_TOKEN = re.compile(r"\s*(?:(\d+(?:\.\d+)?)|([A-Za-z][A-Za-z0-9]*(?:\.[A-Za-z][A-Za-z0-9]*)*)|(<=|>=|[<>()+,\-]))")


@dataclass(frozen=True)
class SuiteRating:
    """A rating on one suite: mu and sigma (TrueSkill), so R = mu - 3 sigma."""

    mu: float
    sigma: float

    @property
    def r(self) -> float:
        """The conservative estimate the level is read from."""
        return self.mu - 3.0 * self.sigma


@dataclass(frozen=True)
class Env:
    """What an expression reads: new and baseline ratings per suite, and the verifier's tolerance."""

    new: dict[str, SuiteRating]
    base: dict[str, SuiteRating]
    tolerance: float


@dataclass(frozen=True)
class Outcome:
    """The verdict, and (when false) the suites whose comparisons failed it."""

    accepted: bool
    failed: tuple[str, ...] = ()


# --- the tree --------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Num:
    """A number literal."""

    value: float


@dataclass(frozen=True)
class Ref:
    """``[baseline.]suite.field``."""

    baseline: bool
    suite: str
    field: str


@dataclass(frozen=True)
class Tol:
    """``tolerance``."""


@dataclass(frozen=True)
class Arith:
    """``left op right`` with op ``+`` or ``-`` (unary minus is ``0 - x``)."""

    op: str
    left: NumExpr
    right: NumExpr


@dataclass(frozen=True)
class Cmp:
    """A comparison of two numbers."""

    op: str
    left: NumExpr
    right: NumExpr


@dataclass(frozen=True)
class Const:
    """``true`` or ``false``."""

    value: bool


@dataclass(frozen=True)
class NonInferior:
    """``noninferior([suite,] margin, alpha)``."""

    suites: tuple[str, ...]
    margin: float
    alpha: float


@dataclass(frozen=True)
class Logic:
    """``and`` / ``or`` over two truth values, or ``not`` over one (``right`` is None)."""

    op: str
    left: BoolExpr
    right: BoolExpr | None = None


NumExpr = Num | Ref | Tol | Arith
BoolExpr = Cmp | Const | NonInferior | Logic


# --- parsing ---------------------------------------------------------------------------------------------

class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens: list[tuple[str, int]] = []
        pos = depth = 0
        while True:
            while pos < len(text) and text[pos].isspace():
                pos += 1
            if pos == len(text):
                break
            m = _TOKEN.match(text, pos)
            if m is None:
                raise self.error(pos + 1, f"unexpected character {text[pos]!r}")
            self.tokens.append((m.group(m.lastindex or 1), m.start(m.lastindex or 1) + 1))
            depth += {"(": 1, ")": -1}.get(self.tokens[-1][0], 0)
            if depth > MAX_DEPTH:
                raise self.error(self.tokens[-1][1], f"parentheses nested deeper than {MAX_DEPTH}")
            pos = m.end()
        self.i = 0

    def error(self, col: int, what: str) -> UsageError:
        return UsageError(f"acceptIf: column {col}: {what} in {self.text!r}")

    def peek(self) -> str | None:
        return self.tokens[self.i][0] if self.i < len(self.tokens) else None

    def col(self) -> int:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else len(self.text) + 1

    def take(self, want: str | None = None) -> str:
        tok = self.peek()
        if tok is None or (want is not None and tok != want):
            raise self.error(self.col(), f"expected {want or 'more'}, found {tok or 'the end'}")
        self.i += 1
        return tok

    def expr(self) -> BoolExpr:
        node = self.conj()
        while self.peek() == "or":
            self.take()
            node = Logic("or", node, self.conj())
        return node

    def conj(self) -> BoolExpr:
        node = self.neg()
        while self.peek() == "and":
            self.take()
            node = Logic("and", node, self.neg())
        return node

    def neg(self) -> BoolExpr:
        if self.peek() == "not":
            self.take()
            return Logic("not", self.neg())
        return self.cmp()

    def cmp(self) -> BoolExpr:
        tok = self.peek()
        if tok in ("true", "false"):
            self.take()
            return Const(tok == "true")
        if tok == "noninferior":
            return self.call()
        if tok == "(" and self._paren_is_bool():
            self.take("(")
            node = self.expr()
            self.take(")")
            return node
        left = self.sum()
        op = self.peek()
        if op not in ("<", "<=", ">", ">="):
            raise self.error(self.col(), f"expected a comparison (<, <=, >, >=), found {op or 'the end'}")
        self.take()
        return Cmp(op, left, self.sum())

    def _paren_is_bool(self) -> bool:
        """Whether the ``(`` here opens a truth value: a sum never holds a comparison or a logic word."""
        depth = 0
        for tok, _ in self.tokens[self.i:]:
            depth += tok == "("
            depth -= tok == ")"
            if depth == 0:
                return False
            if tok in ("<", "<=", ">", ">=", "and", "or", "not", "true", "false", "noninferior"):
                return True
        return False

    def call(self) -> NonInferior:
        self.take("noninferior")
        self.take("(")
        suites: tuple[str, ...] = SUITES
        if self.peek() in SUITES:
            suites = (self.take(),)
            self.take(",")
        margin_col, margin = self.col(), self.number()
        self.take(",")
        alpha_col, alpha = self.col(), self.number()
        self.take(")")
        if margin < 0:
            raise self.error(margin_col, "noninferior's margin must be >= 0")
        if not 0 < alpha < 1:  # above 0.5 it reads "refuse when worse with probability >= alpha" (the default)
            raise self.error(alpha_col, "noninferior's alpha must be between 0 and 1")
        return NonInferior(suites, margin, alpha)

    def number(self) -> float:
        col, tok = self.col(), self.peek()
        sign = -1.0 if tok == "-" else 1.0
        if tok == "-":
            self.take()
            tok = self.peek()
        if tok is None or not tok[0].isdigit():
            raise self.error(self.col() if tok else col, f"expected a number, found {tok or 'the end'}")
        self.take()
        return sign * float(tok)

    def sum(self) -> NumExpr:
        node = self.atom()
        while self.peek() in ("+", "-"):
            node = Arith(self.take(), node, self.atom())
        return node

    def atom(self) -> NumExpr:
        col, tok = self.col(), self.peek()
        if tok is None:
            raise self.error(col, "expected a number or a rating, found the end")
        if tok[0].isdigit():
            return Num(self.number())
        if tok == "-":
            self.take()
            return Arith("-", Num(0.0), self.atom())
        if tok == "(":
            self.take()
            node = self.sum()
            self.take(")")
            return node
        if tok == "tolerance":
            self.take()
            return Tol()
        self.take()
        parts = tok.split(".")
        baseline = parts[0] == "baseline"
        rest = parts[1:] if baseline else parts
        if len(rest) != 2 or rest[0] not in SUITES or rest[1] not in FIELDS:
            raise self.error(col, f"unknown name {tok!r} (a rating is [baseline.]heldIn|heldOut.R|mu|sigma)")
        return Ref(baseline, rest[0], rest[1])


def parse(text: str) -> BoolExpr:
    """Parse an ``acceptIf`` expression (``no-regression``: :data:`NO_REGRESSION`); a bad one is one UsageError line."""
    if not isinstance(text, str) or not text.strip():
        raise UsageError("acceptIf: the expression is empty")
    if len(text) > MAX_LENGTH:
        raise UsageError(f"acceptIf: the expression is longer than {MAX_LENGTH} characters")
    p = _Parser(NO_REGRESSION if text.strip() == "no-regression" else text)
    node = p.expr()
    if p.peek() is not None:
        raise p.error(p.col(), f"unexpected {p.peek()!r} after a complete expression")
    return node


# --- evaluation ------------------------------------------------------------------------------------------

def _num(node: NumExpr, env: Env) -> float:
    if isinstance(node, Num):
        return node.value
    if isinstance(node, Tol):
        return env.tolerance
    if isinstance(node, Ref):
        rating = (env.base if node.baseline else env.new).get(node.suite)
        if rating is None:
            raise UsageError(f"acceptIf: no {'baseline ' if node.baseline else ''}rating on {node.suite}")
        return rating.r if node.field == "R" else rating.mu if node.field == "mu" else rating.sigma
    left, right = _num(node.left, env), _num(node.right, env)
    return left + right if node.op == "+" else left - right


def _suites(node: NumExpr | BoolExpr) -> set[str]:
    if isinstance(node, Ref):
        return {node.suite}
    if isinstance(node, NonInferior):
        return set(node.suites)
    if isinstance(node, Arith | Cmp):
        return _suites(node.left) | _suites(node.right)
    if isinstance(node, Logic):
        return _suites(node.left) | (_suites(node.right) if node.right is not None else set())
    return set()


def worse_probability(new: SuiteRating, base: SuiteRating) -> float:
    """P(new mu < baseline mu) from both ratings' mu and sigma: the probability the default rule compares to 0.9."""
    se = math.hypot(new.sigma, base.sigma)
    if se == 0:
        return 1.0 if new.mu < base.mu else 0.0
    return NormalDist().cdf((base.mu - new.mu) / se)


def noninferior(new: SuiteRating, base: SuiteRating, margin: float, alpha: float) -> bool:
    """One-sided test, at level ``alpha``, that the new mu is not ``margin`` or more below the baseline's."""
    se = math.hypot(new.sigma, base.sigma)
    if se == 0:
        return new.mu - base.mu > -margin
    return (new.mu - base.mu + margin) / se >= NormalDist().inv_cdf(1 - alpha)


def _eval(node: BoolExpr, env: Env) -> tuple[bool, set[str]]:
    """The truth value and, when false, the suites to blame for it."""
    if isinstance(node, Const):
        return node.value, set()
    if isinstance(node, Cmp):
        a, b = _num(node.left, env), _num(node.right, env)
        value = {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[node.op]
        return value, set() if value else _suites(node)
    if isinstance(node, NonInferior):
        failed = set()
        for suite in node.suites:
            new, base = env.new.get(suite), env.base.get(suite)
            if new is None or base is None:
                raise UsageError(f"acceptIf: no ratings on {suite} for noninferior")
            if not noninferior(new, base, node.margin, node.alpha):
                failed.add(suite)
        return not failed, failed
    left, lblame = _eval(node.left, env)
    if node.op == "not":
        return not left, set() if not left else _suites(node.left)
    assert node.right is not None
    right, rblame = _eval(node.right, env)
    if node.op == "and":
        return left and right, lblame | rblame
    return left or right, set() if left or right else lblame | rblame


def evaluate(node: BoolExpr, env: Env) -> Outcome:
    """Accept or not; when not, the suites (held-in first) whose comparisons made it false."""
    value, blame = _eval(node, env)
    return Outcome(value, () if value else tuple(s for s in SUITES if s in blame))
