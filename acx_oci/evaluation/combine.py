"""The combinators: requirements made of requirements (``allOf``, ``anyOf``), each merging its children's
reason codes once, in order."""

from __future__ import annotations

from datetime import datetime

from acx_oci.errors import UsageError
from acx_oci.evaluation.requirements import Requirement, RequirementResult
from acx_oci.model import Resolution


class AllOf(Requirement):
    """Every child holds. Refuses to exist empty: an empty AND is vacuously true."""

    def __init__(self, children: list[Requirement]) -> None:
        if not children:
            raise UsageError("policy: allOf is empty; an empty allOf would allow everything")
        self.children = children

    def describe(self) -> str:
        """The children's descriptions joined with ``;``."""
        return "all of: " + "; ".join(c.describe() for c in self.children)

    def evaluate(self, resolution: Resolution, now: datetime) -> RequirementResult:
        """Met when every child is met; otherwise it reports each unmet child and merges their codes."""
        results = tuple(c.evaluate(resolution, now) for c in self.children)
        unmet = [r for r in results if not r.met]
        if not unmet:
            return RequirementResult(self.describe(), True, (f"all {len(results)} hold",), (), (), results)
        return RequirementResult(self.describe(), False,
                                 tuple(f"not met: {r.description}" for r in unmet),
                                 tuple(dict.fromkeys(code for r in unmet for code in r.codes)), (), results)


class AnyOf(Requirement):
    """At least one child holds."""

    def __init__(self, children: list[Requirement]) -> None:
        if not children:
            raise UsageError("policy: anyOf is empty; an empty anyOf can never be met")
        self.children = children

    def describe(self) -> str:
        """The children's descriptions joined with ``|``."""
        return "any of: " + " | ".join(c.describe() for c in self.children)

    def evaluate(self, resolution: Resolution, now: datetime) -> RequirementResult:
        """Met by the first child that holds; otherwise it reports every child and merges their codes."""
        results = tuple(c.evaluate(resolution, now) for c in self.children)
        hit = next((r for r in results if r.met), None)
        if hit is not None:
            return RequirementResult(self.describe(), True, (f"met: {hit.description}",), (), (), results)
        return RequirementResult(self.describe(), False,
                                 tuple(f"not met: {r.description}" for r in results),
                                 tuple(dict.fromkeys(code for r in results for code in r.codes)), (), results)
