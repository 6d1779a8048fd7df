"""Choose a store from reference syntax."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from urllib.parse import urljoin

from acx_oci.errors import AcxError, UsageError
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


def check_pushable(ref: Reference | str, options: StoreOptions | None = None) -> None:
    """Fail now, not after minutes of building, when ``ref`` cannot take a push.

    A registry is asked to open a blob upload session (reachable, and our credentials may push), which is then
    cancelled, as go-containerregistry's ``CheckPushPermission`` does; a layout's directory must be one, or
    creatable. Nothing is written to either."""
    reference = parse_reference(ref) if isinstance(ref, str) else ref
    if reference.kind == "oci":
        _check_layout_path(Path(reference.path))
        return
    from acx_oci.oci.registry import RegistryStore

    with RegistryStore(reference, options or StoreOptions()) as store:
        t = store.transport
        resp = t.request("POST", f"{store.base}blobs/uploads/", headers={"Content-Length": "0"})
        resp.close()
        if resp.status_code != 202:
            raise t.fail(resp, f"start a blob upload (checking that {reference} takes a push)")
        location = resp.headers.get("Location")
        if location:
            # cancel the session (the distribution spec's DELETE); a registry that cannot just lets it expire
            with contextlib.suppress(AcxError):
                t.request("DELETE", urljoin(resp.url, location), retry=False).close()


def _check_layout_path(root: Path) -> None:
    """The layout's directory exists as one, or its nearest existing parent is a directory we may write."""
    if root.exists():
        if not root.is_dir():
            raise UsageError(f"{root}: expected an OCI layout directory, found a file")
        if not os.access(root, os.W_OK | os.X_OK):
            raise UsageError(f"{root}: the layout directory is not writable")
        return
    parent = root.absolute().parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir() or not os.access(parent, os.W_OK | os.X_OK):
        raise UsageError(f"{root}: cannot create the layout ({parent} is not a writable directory)")
