"""Why a reference fails its own tests, read from the grader's output in the record's words.

A real fix that cannot pass here is refused for a reason a person can act on (a test dependency the
environment lacks, a network the sandbox does not have, a test id that is not collected), never as an
unexplained failure: the corpus runs showed that "the reference fails" alone sends people hunting.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from acx_oci.sandbox import GradeResult

_NO_MODULE = re.compile(rb"No module named '([A-Za-z_][\w.]*)'")
_ERROR_LINE = re.compile(rb"^E?\s*((?:[A-Za-z_][\w.]*)?(?:Error|Exception)\b: .{0,160})", re.M)
_SKIP_REASON = re.compile(rb"^SKIPPED \[\d+\] [^\n]*?:\d+: ([^\n]{1,160})", re.M)
_NOT_COLLECTED = re.compile(rb"grader: test id not collected: (\S+)")
#: pytest's words for a fixture it cannot provide (a plugin's, when the grader loads none by entry point).
_NO_FIXTURE = re.compile(rb"(?:fixture '(\w+)' not found|recursive dependency involving fixture '(\w+)' detected)")
#: What a test that needs the network says in a sandbox that has none.
_NO_NETWORK = re.compile(rb"Temporary failure in name resolution|Name or service not known|Network is unreachable|"
                         rb"nodename nor servname|Failed to establish a new connection|getaddrinfo failed")


def short_ids(nodeids: frozenset[str]) -> list[str]:
    """Test ids as a record shows them: the test's own name, sorted (the path is the exam's)."""
    return sorted(n.rsplit("::", 1)[-1] for n in nodeids)


def why_reference_fails(gold: GradeResult, workspace: Iterable[str]) -> dict[str, Any]:
    """Why the reference fails its own tests, in the record's words: the failing tests, and what a test that
    cannot pass in this environment says — a module the environment lacks (a test dependency; the package's
    own modules are the submission's), or a network the sandbox does not have."""
    out = gold.stdout + b"\n" + gold.stderr
    paths = list(workspace)
    own = {p.split("/", 1)[0].removesuffix(".py") for p in paths}
    own |= {p.split("/", 2)[1] for p in paths if p.startswith("src/") and p.count("/") >= 2}
    named = {m.decode() for m in _NO_MODULE.findall(out)}
    # A module the repository's tree has (a test application beside the tests) is the tree's, not a dependency.
    # (python-semver's conftest imports ``coerce`` from docs/advanced/coerce.py, a folder it puts on sys.path)
    in_tree = sorted(m for m in named if any(
        p == (f := m.replace(".", "/")) + ".py" or p.startswith(f + "/") or p.endswith(f"/{f}.py") for p in paths))
    missing = sorted({m.split(".", 1)[0] for m in named if m not in in_tree} - own)
    facts: dict[str, Any] = {"referenceFailing": short_ids(gold.failing())[:20]}
    skipped = frozenset(t.nodeid for t in gold.tests if t.outcome == "skipped")
    why = [f"the reference fails {len(gold.failing())} of its {len(gold.tests)} graded tests"
           if gold.tests else f"the reference's grade reported no tests (pytest exit {gold.returncode})"]
    if skipped:  # a skip is no pass: attrs f53fc54's test is for Python 3.13+, and the environment has 3.11
        facts["referenceSkipped"] = short_ids(skipped)[:20]
        said = _SKIP_REASON.search(out)
        why.append(f"{len(skipped)} skipped here" + (f" ({said.group(1).decode('utf-8', 'replace').strip()})"
                                                      if said else ""))
    if gold.tamper:  # every test passed, yet the tamper checks voided the run: say so, not "fails 0 of N"
        facts["referenceVoid"] = [str(t)[:200] for t in gold.tamper[:5]]
        why.append(f"the grade was void: the tamper checks fired ({str(gold.tamper[0])[:200]})")
    elif gold.returncode != 0 and gold.tests and not gold.failing():
        why.append(f"pytest exited {gold.returncode} though no graded test failed")
    first = _ERROR_LINE.search(out)
    if first:
        facts["referenceFirstError"] = first.group(1).decode("utf-8", "replace").strip()
    lost = _NOT_COLLECTED.search(out)
    if lost:
        why.append(f"a graded test id is not collected: {lost.group(1).decode('utf-8', 'replace')}")
    fixtures = sorted({(a or b).decode() for a, b in _NO_FIXTURE.findall(out)})
    if fixtures:
        facts["referenceMissingFixtures"] = fixtures
        why.append(f"fixtures pytest could not provide: {', '.join(fixtures)} (a plugin's the environment "
                   "does not install?)")
    if missing:
        facts["referenceMissingModules"] = missing
        why.append(f"modules the environment lacks (test dependencies, not the repository's): {', '.join(missing)}")
    if in_tree:
        facts["referenceMissingTreeModules"] = in_tree
        why.append(f"modules of the repository's own tree the grader did not get: {', '.join(in_tree)}")
    if _NO_NETWORK.search(out):
        facts["referenceNeedsNetwork"] = True
        why.append("its tests reach for the network (the sandbox has none)")
    facts["reason"] = "; ".join(why)
    return facts
