"""Host uids for sandboxes: a root verifier runs each grade, game and containment proof under a uid of its own.

``RLIMIT_NPROC`` counts processes per host uid: sandboxes that all dropped to ``nobody`` shared one process
budget, and a busy one made another's fork/exec fail with EAGAIN (``setpriv: failed to execute
/usr/bin/bwrap: Resource temporarily unavailable``, issue 37). With a uid per scope the budget is per run.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
from collections.abc import Iterator
from dataclasses import replace

from acx_oci.sandbox.bwrap import NOBODY, SandboxSpec, drops_privilege

#: A root verifier runs each sandbox scope (a grade, a game, a containment proof) under a host uid of its own,
#: drawn from systemd's unassigned range 0x70000000-0x7FFFFFFF: ``RLIMIT_NPROC`` counts processes per host uid,
#: so sandboxes sharing one (``nobody``) shared one process budget and a busy one made the others' fork/exec fail
#: with EAGAIN. Distinct within this process; another process draws from a random offset, and a collision costs
#: only a shared budget (the sandboxes share no namespace, bind or /tmp).
UID_POOL_BASE = 0x70000000
UID_POOL_SIZE = 1 << 24
_pool_lock = threading.Lock()
_leased: set[int] = set()
_next = [secrets.randbelow(UID_POOL_SIZE)]


def _lease() -> int:
    with _pool_lock:
        while True:
            uid = UID_POOL_BASE + _next[0] % UID_POOL_SIZE
            _next[0] += 1
            if uid not in _leased:
                _leased.add(uid)
                return uid


@contextlib.contextmanager
def own_uid(spec: SandboxSpec, *, binds_given_after: bool = False) -> Iterator[SandboxSpec]:
    """``spec`` with a host uid (and gid) of its own for the ``with`` block, when the verifier is root and the
    spec keeps the default (:data:`NOBODY`). Used as it is: a spec that names its uid (nested scopes, such as
    a game's grade, keep the outer one's), a spec whose rw binds were already given to its uid (unless the
    caller says it gives them after, ``binds_given_after``), or an unprivileged verifier's (its sandboxes run
    as itself: their budget is its uid's, see the module docstring)."""
    if not drops_privilege() or spec.host_uid != NOBODY or (spec.rw_binds and not binds_given_after):
        yield spec
        return
    uid = _lease()
    try:
        yield replace(spec, host_uid=uid, host_gid=uid)
    finally:
        with _pool_lock:
            _leased.discard(uid)
