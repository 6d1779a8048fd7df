"""How often regression acceptance is wrong, for the default rule and a few others.

Setup: the demo suite (160 DAG tasks, 96 held out, 64 public), a fresh split and fresh ROM digests per trial
(so draws and outcomes are independent), the real engine (draw order, TrueSkill, default parameters) and the
reference solver as the simulated agent. Per trial the baseline (competence 33) plays the held-out slice (its
credential's rating) and the public slice (held-in); the new version plays both too. Its competence is 33 (an
equally good agent) or 31 (two levels worse). Each rule is then judged by ``services.verifier.regression.judge`` exactly
as ``attest --baseline`` does.

Prints, per rule: how often the equally good agent is refused (false ``regression``) and how often the worse one
is accepted (a missed regression). The default (``no-regression``) and the default before issue 34 are marked.

Run: python benchmarks/regression_sim.py [--trials 300] [--base 33] [--worse 2]
     python benchmarks/regression_sim.py --trials 300 --drops 1,2,3,5   (the operating table, issue 44.1)
"""

from __future__ import annotations

import argparse
import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from acx_oci.model import benchmark as bmodel
from acx_oci.rating import accept_if as ai
from acx_oci.rating import engine
from acx_oci.services.verifier import regression as regr
from acx_oci.solvers import ReferenceSolver

# The first is the default (no-regression: noninferior(0, 0.9) since issue 34); the second the default before it.
RULES = [("no-regression", regr.DEFAULT_TOLERANCE), (ai.FLAT_TOLERANCE, regr.DEFAULT_TOLERANCE),
         (ai.FLAT_TOLERANCE, 1.0), (ai.FLAT_TOLERANCE, 2.0), (ai.FLAT_TOLERANCE, 4.0),
         ("heldIn.R >= baseline.heldIn.R and heldOut.R >= baseline.heldOut.R", 0.0),
         ("noninferior(2, 0.05)", 0.0), ("noninferior(4, 0.05)", 0.0), ("noninferior(4, 0.2)", 0.0),
         ("noninferior(0, 0.8)", 0.0), ("noninferior(0, 0.93)", 0.0), ("noninferior(0, 0.95)", 0.0),
         ("noninferior(1, 0.8)", 0.0), ("noninferior(1, 0.7)", 0.0), ("noninferior(2, 0.3)", 0.0)]


def _digest(*parts: object) -> str:
    return "sha256:" + hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()


def _rating(rom: str, tasks: list[dict[str, object]], key: bytes, competence: float) -> ai.SuiteRating:
    result = engine.run(rom_digest=rom, benchmark_digest=_digest("bench"), held_out=tasks, commitment_key=key,
                        solver=ReferenceSolver(competence), params=engine.Params())
    return ai.SuiteRating(result.rating.mu, result.rating.sigma)


def trial(t: int, bench: bmodel.Benchmark, base_c: float, new_c: float) -> tuple[dict[str, ai.SuiteRating],
                                                                                 dict[str, ai.SuiteRating]]:
    """One attest --baseline, simulated: (new ratings, baseline ratings) per suite."""
    seal = hashlib.sha256(f"sim-seal/{t}".encode()).digest()
    public, held = bmodel.split(bench, seal)
    key = bmodel.commitment_key(seal)
    base_rom, new_rom = _digest("base", t), _digest("new", t, new_c)
    base = {"heldOut": _rating(base_rom, held, key, base_c), "heldIn": _rating(base_rom, public, key, base_c)}
    new = {"heldOut": _rating(new_rom, held, key, new_c), "heldIn": _rating(new_rom, public, key, new_c)}
    return new, base


def operating_table(trials: int, base: float, drops: list[float]) -> None:
    """Issue 44.1's table: per rule, how often an equal version is refused and a version ``d`` levels worse is
    accepted, for each ``d`` in ``drops`` (the same trials for every rule)."""
    bench = bmodel.from_document(bmodel.demo_document())
    runs = {d: [trial(t, bench, base, base - d) for t in range(trials)] for d in [0.0, *drops]}
    labels = {"heldIn": "held-in", "heldOut": "held-out"}
    print(f"{trials} trials; baseline competence {base:g}; drops in levels {', '.join(f'{d:g}' for d in drops)}")
    print(f"| rule | tolerance | equal refused | {' | '.join(f'{d:g} worse accepted' for d in drops)} |")
    for text, tol in RULES:
        spec = regr.Spec(None, None, text, ai.parse(text))
        refused = sum(bool(regr.judge(spec, n, b, tol, labels)) for n, b in runs[0.0]) / trials
        accepted = [sum(not regr.judge(spec, n, b, tol, labels) for n, b in runs[d]) / trials for d in drops]
        name = "flat" if text == ai.FLAT_TOLERANCE else text
        print(f"| `{name}` | {tol:g} | {refused:.1%} | {' | '.join(f'{a:.1%}' for a in accepted)} |", flush=True)


def main() -> None:
    """Simulate and print the error rates."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=300)
    ap.add_argument("--base", type=float, default=33.0)
    ap.add_argument("--worse", type=float, default=2.0, help="levels the worse agent is below the baseline")
    ap.add_argument("--drops", default=None, metavar="D,D,...",
                    help="the operating table instead: acceptance of versions D levels worse, e.g. 1,2,3,5")
    args = ap.parse_args()
    if args.drops:
        operating_table(args.trials, args.base, [float(d) for d in args.drops.split(",")])
        return
    bench = bmodel.from_document(bmodel.demo_document())
    same = [trial(t, bench, args.base, args.base) for t in range(args.trials)]
    worse = [trial(t, bench, args.base, args.base - args.worse) for t in range(args.trials)]
    labels = {"heldIn": "held-in", "heldOut": "held-out"}
    print(f"{args.trials} trials; baseline competence {args.base:g}; worse agent {args.worse:g} levels below")
    print(f"{'rule':<72} {'tolerance':>9} {'equal refused':>14} {'worse accepted':>15}")
    for text, tol in RULES:
        spec = regr.Spec(None, None, text, ai.parse(text))
        refused = sum(bool(regr.judge(spec, n, b, tol, labels)) for n, b in same) / args.trials
        accepted = sum(not regr.judge(spec, n, b, tol, labels) for n, b in worse) / args.trials
        mark = "  <- default" if (text, tol) == RULES[0] else "  <- default before issue 34" if text == \
            ai.FLAT_TOLERANCE and tol == regr.DEFAULT_TOLERANCE else ""
        print(f"{text:<72} {tol:>9g} {refused:>13.1%} {accepted:>14.1%}{mark}")


if __name__ == "__main__":
    main()
