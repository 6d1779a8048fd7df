"""A transparency log, pure: RFC 6962 Merkle trees and the C2SP formats (signed-note, tlog-checkpoint,
tlog-cosignature, tlog-tiles), with no network and no files; fetching is a function the caller injects. This face is
what other wings use:

* Merkle: ``leaf_hash``, :class:`MemoryTree`, ``inclusion_proof`` / ``verify_inclusion``, ``consistency_proof`` /
  ``verify_consistency``
* notes and checkpoints: ``parse`` (a signed note), :class:`Verifier` (``verifier_from_vkey``,
  ``ed25519_verifier``), ``with_signatures``; :class:`Checkpoint`, ``sign_checkpoint``, ``open_checkpoint``;
  witnesses as :class:`Cosigner`, ``verify_cosigned`` -> :class:`Cosigned`
* tiles: :class:`Tile`, ``tiles_for_size``, ``tile_data``, ``verify_tiles``, ``prove_inclusion`` (from tiles a
  :class:`TileReader` fetches), entry bundles
* the log proof carried with a credential: ``parse_proof`` -> :class:`LogProof`, ``check_proof``
* the witness protocol's bodies: ``encode_add_checkpoint``, ``parse_cosignatures``, ``parse_conflict``

Example::

    from acx_oci.tlog import MemoryTree, inclusion_proof, leaf_hash, verify_inclusion

    entries = [b"a", b"b", b"c"]
    tree = MemoryTree([leaf_hash(e) for e in entries])
    proof = inclusion_proof(1, tree.size, tree.hash_at)
    verify_inclusion(1, tree.size, leaf_hash(b"b"), proof, tree.root())  # raises when it does not hold
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.tlog.checkpoint import (
        Checkpoint,
        Cosigned,
        Cosigner,
        cosigner_from_vkey,
        open_checkpoint,
        open_cosignatures,
        parse_checkpoint_text,
        sign_checkpoint,
        sigsum_origin,
        verify_cosigned,
    )
    from acx_oci.tlog.merkle import (
        HASH_SIZE,
        MemoryTree,
        consistency_proof,
        inclusion_proof,
        leaf_hash,
        verify_consistency,
        verify_inclusion,
    )
    from acx_oci.tlog.note import (
        MAX_NOTE,
        Signature,
        Verifier,
        b64,
        ed25519_verifier,
        parse,
        raw_public,
        verifier_from_vkey,
        with_signatures,
    )
    from acx_oci.tlog.proof import MAX_PROOF_DOC, MEDIA_TYPE, LogProof, check_proof, parse_proof
    from acx_oci.tlog.tiles import (
        MAX_ENTRY,
        TILE_WIDTH,
        Tile,
        TileReader,
        bundles_for_size,
        entry_bundle,
        parse_entry_bundle,
        parse_tile_path,
        prove_inclusion,
        split_hashes,
        tile_data,
        tiles_added,
        tiles_for_size,
        verify_tiles,
    )
    from acx_oci.tlog.witness import MAX_ANSWER, encode_add_checkpoint, parse_conflict, parse_cosignatures
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "checkpoint": ("Checkpoint", "Cosigned", "Cosigner", "cosigner_from_vkey", "open_checkpoint",
            "open_cosignatures", "parse_checkpoint_text", "sign_checkpoint", "sigsum_origin", "verify_cosigned"),
        "merkle": ("HASH_SIZE", "MemoryTree", "consistency_proof", "inclusion_proof", "leaf_hash", "verify_consistency",
            "verify_inclusion"),
        "note": ("MAX_NOTE", "Signature", "Verifier", "b64", "ed25519_verifier", "parse", "raw_public",
            "verifier_from_vkey", "with_signatures"),
        "proof": ("LogProof", "MAX_PROOF_DOC", "MEDIA_TYPE", "check_proof", "parse_proof"),
        "tiles": ("MAX_ENTRY", "TILE_WIDTH", "Tile", "TileReader", "bundles_for_size", "entry_bundle",
            "parse_entry_bundle", "parse_tile_path", "prove_inclusion", "split_hashes", "tile_data", "tiles_added",
            "tiles_for_size", "verify_tiles"),
        "witness": ("MAX_ANSWER", "encode_add_checkpoint", "parse_conflict", "parse_cosignatures"),
    })

__all__ = ["HASH_SIZE", "MAX_ANSWER", "MAX_ENTRY", "MAX_NOTE", "MAX_PROOF_DOC", "MEDIA_TYPE", "TILE_WIDTH",
           "Checkpoint", "Cosigned", "Cosigner", "LogProof", "MemoryTree", "Signature", "Tile", "TileReader",
           "Verifier", "b64", "bundles_for_size", "check_proof", "consistency_proof", "cosigner_from_vkey",
           "ed25519_verifier", "encode_add_checkpoint", "entry_bundle", "inclusion_proof", "leaf_hash",
           "open_checkpoint", "open_cosignatures", "parse", "parse_checkpoint_text", "parse_conflict",
           "parse_cosignatures", "parse_entry_bundle", "parse_proof", "parse_tile_path", "prove_inclusion",
           "raw_public", "sign_checkpoint", "sigsum_origin", "split_hashes", "tile_data", "tiles_added",
           "tiles_for_size", "verifier_from_vkey", "verify_consistency", "verify_cosigned", "verify_inclusion",
           "verify_tiles", "with_signatures"]
