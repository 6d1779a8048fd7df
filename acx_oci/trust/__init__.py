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
