"""Whom a consumer trusts, read from files: the trust file (:class:`Trust`: verifiers as :class:`Party`, accepted
benchmarks, pinned transparency logs as :class:`LogTrust`, the post-cutoff rule), key files
(``load_identity``, ``write_identity``) and DID resolution (``assertion_keys``, ``check_did``, ``controller_of``).
This face is what other wings use:

* ``load_trust(path) -> Trust`` - the trust file, checked as it is read (``looser_than_floor`` names the
  settings below the floor ``DEFAULT_SIGMA_MAX`` / ``DEFAULT_MIN_GAMES`` that it accepts)
* ``load_identity(path, did=None) -> Identity`` and ``write_identity(prefix, identity) -> (key, pub)``
* ``assertion_keys(did_or_method, trust=None, fetch=None) -> [(method, public)]`` - a DID's assertion keys,
  from the trust file's documents or a fetch the caller injects

Example::

    from acx_oci.trust import assertion_keys, load_identity, load_trust

    trust = load_trust("trust.yaml")
    me = load_identity("me.key")
    assert assertion_keys(me.did, trust)  # a did:key needs no document
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.trust.did import assertion_keys, check_did, controller_of
    from acx_oci.trust.keyfiles import load_identity, write_identity
    from acx_oci.trust.trustfile import (
        DEFAULT_MIN_GAMES,
        DEFAULT_SIGMA_MAX,
        DEFAULT_SOLVERS,
        AcceptedBenchmark,
        LogTrust,
        Party,
        PostCutoff,
        Trust,
        load_trust,
        looser_than_floor,
        post_cutoff_from,
    )
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "did": ("assertion_keys", "check_did", "controller_of"),
        "keyfiles": ("load_identity", "write_identity"),
        "trustfile": ("AcceptedBenchmark", "DEFAULT_MIN_GAMES", "DEFAULT_SIGMA_MAX", "DEFAULT_SOLVERS", "LogTrust",
            "Party", "PostCutoff", "Trust", "load_trust", "looser_than_floor", "post_cutoff_from"),
    })

__all__ = ["DEFAULT_MIN_GAMES", "DEFAULT_SIGMA_MAX", "DEFAULT_SOLVERS", "AcceptedBenchmark", "LogTrust", "Party",
           "PostCutoff", "Trust", "assertion_keys", "check_did", "controller_of", "load_identity", "load_trust",
           "looser_than_floor", "post_cutoff_from", "write_identity"]
