"""A ``requests.Session`` that never reads ``~/.netrc`` and reads the proxy environment once per host.

With no ``auth``, requests looks for a netrc entry on every request and every redirect (three
file-system checks each: a fifth of the CPU of a 1,000-attestation resolve) and, when one names the
host, sends it as Basic auth. Our credentials come from the docker config alone (as with docker, ORAS
and cosign), so a netrc entry must not ride along. Proxies and CA bundles from the environment are
still honoured (``trust_env`` stays on), but looked up once per scheme and host of the session: requests
walks all of ``os.environ`` twice per request for them (another tenth of that resolve's CPU).
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import requests
from requests.auth import AuthBase

_ENV_HOSTS = 64  # (scheme, host) pairs whose environment settings a session remembers


class _NoAuth(AuthBase):
    """Leaves the request as it is; being set, it keeps requests from looking up netrc."""

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        return r


class PlainSession(requests.Session):
    """See the module docstring: no netrc on requests nor on redirects."""

    def __init__(self) -> None:
        super().__init__()
        self.auth = _NoAuth()
        self._env: dict[tuple[Any, ...], dict[str, Any]] = {}

    def merge_environment_settings(self, url: str | bytes | None, proxies: Any, stream: Any, verify: Any,
                                   cert: Any) -> Any:
        """requests' merge, with what the environment adds remembered per (scheme, host, options)."""
        if proxies or not isinstance(url, str):
            return dict(super().merge_environment_settings(url, proxies, stream, verify, cert))
        parts = urlsplit(url)
        key = (parts.scheme, parts.netloc, stream, verify, cert)
        hit = self._env.get(key)
        if hit is None:
            hit = dict(super().merge_environment_settings(url, {}, stream, verify, cert))
            if len(self._env) < _ENV_HOSTS:
                self._env[key] = hit
        return {**hit, "proxies": dict(hit["proxies"])}

    def rebuild_auth(self, prepared_request: requests.PreparedRequest, response: requests.Response) -> None:
        """Strip ``Authorization`` on a redirect to another host, as requests does, but add no netrc entry."""
        url = prepared_request.url
        if "Authorization" in prepared_request.headers and url and response.request.url and \
                self.should_strip_auth(response.request.url, url):  # type: ignore[no-untyped-call]
            del prepared_request.headers["Authorization"]
