"""OCI, both sides of the wire: references, manifests and indexes, the stores (an image layout on disk or a
registry over HTTP(S), one :class:`Store` protocol), the Referrers API and its tag-schema fallback, and the copy
engine. This face is what other wings use:

* ``parse_reference(text)`` -> :class:`Reference` (``HOST[:PORT]/REPO[:TAG|@DIGEST]`` or ``oci:PATH[...]``)
* ``open_store(ref, options=None)`` -> :class:`Store` (:class:`StoreOptions`: TLS, credentials, limits);
  :class:`RegistryStore` is the registry one; ``check_pushable``
* documents: :class:`Descriptor`, :class:`Manifest`, ``build_manifest``, ``parse_manifest``, ``build_index``,
  ``parse_index``, ``dump``, and the media and artifact types (``MEDIA_*``, ``ARTIFACT_*``, ``EMPTY_*``)
* referrers: ``referrer_tag``, ``fallback_tag``, ``repair_referrers``, ``referrers_api``, ``api_support``,
  ``classify_referrers``, :class:`ReferrerListing`
* copying: ``plan_tree`` / ``read_referrer`` -> :class:`CopyPlan`, ``copy_blobs``, ``push_manifests``

Example::

    from acx_oci.oci import (ARTIFACT_CARTRIDGE, EMPTY_DESCRIPTOR, MEDIA_MANIFEST, build_manifest, open_store,
                             parse_manifest)

    store = open_store("oci:./layout")
    raw = build_manifest(ARTIFACT_CARTRIDGE, [EMPTY_DESCRIPTOR])
    assert parse_manifest(raw).artifact_type == ARTIFACT_CARTRIDGE
    store.push_manifest(raw, MEDIA_MANIFEST, tag="v1")
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from acx_oci.faces import lazy_face

if TYPE_CHECKING:
    from acx_oci.oci.classify import CONFIG_MEDIA_TYPES, classify_referrers
    from acx_oci.oci.model import (
        ANNOTATION_CREATED,
        ANNOTATION_TITLE,
        ARTIFACT_ATTEMPT_RECORD,
        ARTIFACT_ATTESTATION,
        ARTIFACT_BENCHMARK,
        ARTIFACT_CARTRIDGE,
        ARTIFACT_STATUS_LIST,
        EMPTY_DESCRIPTOR,
        EMPTY_DIGEST,
        EMPTY_JSON,
        MANIFEST_ACCEPT,
        MAX_MANIFEST_BYTES,
        MEDIA_ATTEMPT_RECORD,
        MEDIA_DOCKER_LIST,
        MEDIA_DOCKER_MANIFEST,
        MEDIA_DSSE,
        MEDIA_EMPTY,
        MEDIA_INDEX,
        MEDIA_MANIFEST,
        MEDIA_VC,
        Descriptor,
        Manifest,
        build_index,
        build_manifest,
        check_manifest_size,
        dump,
        parse_index,
        parse_manifest,
    )
    from acx_oci.oci.open import check_pushable, open_store
    from acx_oci.oci.ref import Reference, parse_reference
    from acx_oci.oci.referrers import (
        REFERRER_TAG_PREFIX,
        descriptor_for_referrer,
        fallback_tag,
        next_link,
        parse_own_tag,
        referrer_tag,
        repair_changes,
        repair_referrers,
        subject_digest_of,
    )
    from acx_oci.oci.registry import RegistryStore, parse_challenge
    from acx_oci.oci.registry.referrers import api_support, referrers_api
    from acx_oci.oci.store import ReferrerListing, Store, StoreOptions
    from acx_oci.oci.transfer import (
        CopyPlan,
        PlannedManifest,
        Progress,
        copy_blobs,
        plan_tree,
        push_manifests,
        read_referrer,
    )
else:
    __getattr__, __dir__ = lazy_face(__name__, {
        "classify": ("CONFIG_MEDIA_TYPES", "classify_referrers"),
        "model": ("ANNOTATION_CREATED", "ANNOTATION_TITLE", "ARTIFACT_ATTEMPT_RECORD", "ARTIFACT_ATTESTATION",
            "ARTIFACT_BENCHMARK", "ARTIFACT_CARTRIDGE", "ARTIFACT_STATUS_LIST", "Descriptor", "EMPTY_DESCRIPTOR",
            "EMPTY_DIGEST", "EMPTY_JSON", "MANIFEST_ACCEPT", "MAX_MANIFEST_BYTES", "MEDIA_ATTEMPT_RECORD",
            "MEDIA_DOCKER_LIST", "MEDIA_DOCKER_MANIFEST", "MEDIA_DSSE", "MEDIA_EMPTY", "MEDIA_INDEX", "MEDIA_MANIFEST",
            "MEDIA_VC", "Manifest", "build_index", "build_manifest", "check_manifest_size", "dump", "parse_index",
            "parse_manifest"),
        "open": ("check_pushable", "open_store"),
        "ref": ("Reference", "parse_reference"),
        "referrers": ("REFERRER_TAG_PREFIX", "descriptor_for_referrer", "fallback_tag", "next_link", "parse_own_tag",
            "referrer_tag", "repair_changes", "repair_referrers", "subject_digest_of"),
        "registry": ("RegistryStore", "parse_challenge"),
        "registry.referrers": ("api_support", "referrers_api"),
        "store": ("ReferrerListing", "Store", "StoreOptions"),
        "transfer": ("CopyPlan", "PlannedManifest", "Progress", "copy_blobs", "plan_tree", "push_manifests",
            "read_referrer"),
    })

__all__ = ["ANNOTATION_CREATED", "ANNOTATION_TITLE", "ARTIFACT_ATTEMPT_RECORD", "ARTIFACT_ATTESTATION",
           "ARTIFACT_BENCHMARK", "ARTIFACT_CARTRIDGE", "ARTIFACT_STATUS_LIST", "CONFIG_MEDIA_TYPES", "EMPTY_DESCRIPTOR",
           "EMPTY_DIGEST", "EMPTY_JSON", "MANIFEST_ACCEPT", "MAX_MANIFEST_BYTES", "MEDIA_ATTEMPT_RECORD",
           "MEDIA_DOCKER_LIST", "MEDIA_DOCKER_MANIFEST", "MEDIA_DSSE", "MEDIA_EMPTY", "MEDIA_INDEX", "MEDIA_MANIFEST",
           "MEDIA_VC", "REFERRER_TAG_PREFIX", "CopyPlan", "Descriptor", "Manifest", "PlannedManifest", "Progress",
           "Reference", "ReferrerListing", "RegistryStore", "Store", "StoreOptions", "api_support", "build_index",
           "build_manifest", "check_manifest_size", "check_pushable", "classify_referrers", "copy_blobs",
           "descriptor_for_referrer", "dump", "fallback_tag", "next_link", "open_store", "parse_challenge",
           "parse_index", "parse_manifest", "parse_own_tag", "parse_reference", "plan_tree", "push_manifests",
           "read_referrer", "referrer_tag", "referrers_api", "repair_changes", "repair_referrers", "subject_digest_of"]
