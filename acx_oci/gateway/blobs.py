"""Which blobs a covered repository may serve: the blob ledger.

A blob has no artifact type and no subject, so policy cannot be evaluated on a
blob; it is evaluated on the manifests that reference it. The ledger records,
per repository, the fact "manifest M references blob B" for every manifest the
gateway has served (or been asked for) in a repository a policy rule covers:
config and layer digests of image manifests, nothing for indexes (their
children are manifests, fetched — and judged — through the gateway).

Those facts are content-addressed and never go stale; only verdicts change. A
blob ``GET``/``HEAD`` in a covered repository is therefore decided at request
time from the (cached, revalidated) verdicts of its cartridge manifests:

1. the empty config ``{}`` is always served (it carries nothing);
2. referenced by a cartridge whose verdict is *allow* now → served;
3. referenced only by denied cartridges → ``403 DENIED``;
4. referenced by non-cartridge manifests only (attestations, status lists,
   benchmarks) → served;
5. not referenced by any manifest the ledger knows: ``GET`` and ``HEAD`` alike →
   the gateway walks the repository's tags once (bounded; see
   :meth:`Upstream.manifest_blobs`) and decides again by rules 2-4 (so a ``HEAD``
   cannot tell what a ``GET`` refuses); still unknown → ``GET`` is ``403 DENIED``
   (fetch the manifest through the gateway first — every OCI client does), while
   ``HEAD`` passes: every push is in that state between uploading a blob and
   putting its manifest, and pushers check with ``HEAD`` (a 403 there fails them).
   A manifest pushed through the gateway is recorded like one served.

Cost: one entry (~200 bytes) per (repository, blob, manifest), bounded
(``max_entries``, least recently used out; an evicted fact is re-learnt by the
next manifest GET or by the walk); a blob decision is a dictionary lookup plus a
verdict-cache hit per referencing cartridge.

Eviction takes blobs no cartridge references first: the facts that *deny* are
cartridge facts, and non-cartridge manifests are cheap to make (a registry
accepts foreign-layer descriptors without the blobs), so a flood of them must
not make the gateway forget a denied cartridge and then serve its ROM layer
through a wrapper manifest. Descriptors with ``urls`` (foreign layers, served
from elsewhere) are not recorded at all (see ``upstream.manifest_refs``).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

_MAX_ENTRIES = 200_000
_MAX_REFERRING = 16  # manifests remembered per blob (a shared base layer need not list every image)


class BlobLedger:
    """(repository, blob digest) → {manifest digest: is a cartridge}; bounded LRU, thread-safe."""

    def __init__(self, max_entries: int = _MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        # blobs some cartridge references, and the rest: the rest is evicted first (module docstring)
        self._carts: OrderedDict[tuple[str, str], dict[str, bool]] = OrderedDict()
        self._plain: OrderedDict[tuple[str, str], dict[str, bool]] = OrderedDict()
        self._walked: dict[str, float] = {}
        self._lock = threading.Lock()

    def record(self, repository: str, manifest_digest: str, blobs: tuple[str, ...], cartridge: bool) -> None:
        """Learn which blobs ``manifest_digest`` names: at most 16 manifests remembered per blob, and a cartridge
        displaces a non-cartridge (cartridges decide)."""
        with self._lock:
            for blob in blobs:
                key = (repository, blob)
                refs = self._carts.pop(key, None) or self._plain.pop(key, None) or {}
                if manifest_digest in refs or len(refs) < _MAX_REFERRING:
                    refs[manifest_digest] = cartridge
                elif cartridge:  # a cartridge displaces a non-cartridge: cartridges decide
                    for other, is_cart in list(refs.items()):
                        if not is_cart:
                            del refs[other]
                            refs[manifest_digest] = True
                            break
                (self._carts if any(refs.values()) else self._plain)[key] = refs
            while len(self) > self.max_entries:
                (self._plain or self._carts).popitem(last=False)

    def referring(self, repository: str, blob: str) -> dict[str, bool]:
        """The manifests known to reference ``blob`` in ``repository`` (a copy)."""
        with self._lock:
            refs = self._carts.get((repository, blob)) or self._plain.get((repository, blob))
            return dict(refs) if refs else {}

    def may_walk(self, repository: str, now: float, interval: float) -> bool:
        """At most one tag walk per repository per ``interval`` seconds (unknown digests cannot force more)."""
        with self._lock:
            last = self._walked.get(repository)
            if last is not None and now - last < interval:
                return False
            self._walked[repository] = now
            if len(self._walked) > 10_000:
                self._walked.pop(next(iter(self._walked)))
            return True

    def __len__(self) -> int:
        return len(self._carts) + len(self._plain)
