"""A ``requests.Session`` that never reads ``~/.netrc``.

With no ``auth``, requests looks for a netrc entry on every request and every redirect (three
file-system checks each: a fifth of the CPU of a 1,000-attestation resolve) and, when one names the
host, sends it as Basic auth. Our credentials come from the docker config alone (as with docker, ORAS
and cosign), so a netrc entry must not ride along. Proxies and CA bundles from the environment are
still honoured (``trust_env`` stays on).
"""

from __future__ import annotations

import requests
from requests.auth import AuthBase


class _NoAuth(AuthBase):
    """Leaves the request as it is; being set, it keeps requests from looking up netrc."""

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        return r


class PlainSession(requests.Session):
    """See the module docstring: no netrc on requests nor on redirects."""

    def __init__(self) -> None:
        super().__init__()
        self.auth = _NoAuth()

    def rebuild_auth(self, prepared_request: requests.PreparedRequest, response: requests.Response) -> None:
        """Strip ``Authorization`` on a redirect to another host, as requests does, but add no netrc entry."""
        url = prepared_request.url
        if "Authorization" in prepared_request.headers and url and response.request.url and \
                self.should_strip_auth(response.request.url, url):  # type: ignore[no-untyped-call]
            del prepared_request.headers["Authorization"]
