"""Choose a store from reference syntax."""

from __future__ import annotations

from acx_oci.oci.ref import Reference, parse_reference
from acx_oci.oci.store import Store, StoreOptions


def open_store(ref: Reference | str, options: StoreOptions | None = None) -> Store:
    """``oci:PATH`` opens an image layout; anything else a registry repository."""
    reference = parse_reference(ref) if isinstance(ref, str) else ref
    if reference.kind == "oci":
        from acx_oci.oci.layout import LayoutStore

        return LayoutStore(reference)
    from acx_oci.oci.registry import RegistryStore

    return RegistryStore(reference, options or StoreOptions())
