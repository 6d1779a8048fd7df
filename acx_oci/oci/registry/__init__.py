"""OCI registry client: ``RegistryStore`` plus its auth, transport and referrer helpers.

``auth`` docker config and 401 challenges; ``transport`` the HTTP session,
timeouts, retries and error mapping; ``client`` the store (manifests, blobs,
tags); ``referrers`` the Referrers API and tag-schema fallback.
"""

from acx_oci.oci.registry.auth import Credentials, load_credentials, parse_challenge
from acx_oci.oci.registry.client import RegistryStore
from acx_oci.oci.registry.transport import is_loopback
from acx_oci.oci.store import ReferrerListing

__all__ = ["Credentials", "ReferrerListing", "RegistryStore", "is_loopback", "load_credentials", "parse_challenge"]
