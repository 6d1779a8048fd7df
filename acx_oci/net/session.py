"""A ``requests.Session`` that never reads ``~/.netrc``, keeps no cookies, and reads the proxy environment once
per host.

With no ``auth``, requests looks for a netrc entry on every request and every redirect (three
file-system checks each: a fifth of the CPU of a 1,000-attestation resolve) and, when one names the
host, sends it as Basic auth. Our credentials come from the docker config alone (as with docker, ORAS
and cosign), so a netrc entry must not ride along. Proxies and CA bundles from the environment are
still honoured (``trust_env`` stays on), but looked up once per scheme and host of the session: requests
walks all of ``os.environ`` twice per request for them (another tenth of that resolve's CPU).

Cookies are neither kept nor sent: registry clients keep none (docker, ORAS, go-containerregistry use
Go's client without a jar), and requests' jar work — three jars built and merged per request, each
response parsed for Set-Cookie — was another tenth of the fetch CPU. Cookies a caller passes explicitly
with a request still go out.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import requests
from requests.auth import AuthBase
from requests.cookies import RequestsCookieJar
from requests.sessions import merge_hooks
from requests.structures import CaseInsensitiveDict

_ENV_HOSTS = 64  # (scheme, host) pairs whose environment settings a session remembers


class _NoAuth(AuthBase):
    """Leaves the request as it is; being set, it keeps requests from looking up netrc."""

    def __call__(self, r: requests.PreparedRequest) -> requests.PreparedRequest:
        return r


class _NoCookies(RequestsCookieJar):
    """A jar that stays empty: nothing a response sets is kept, so nothing is sent back."""

    def set_cookie(self, cookie: Any, *args: Any, **kwargs: Any) -> None:
        """Keep nothing."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        """Read no Set-Cookie."""

    def add_cookie_header(self, request: Any) -> None:
        """Send no Cookie."""

    def update(self, other: Any) -> None:  # type: ignore[override]
        """Merge nothing in."""

    def copy(self) -> _NoCookies:
        """The same empty jar (a redirect's copy of the request must not start keeping cookies)."""
        return self


class _Prepared(requests.PreparedRequest):
    """A prepared request that skips the cookie machinery when its jar is :class:`_NoCookies`."""

    def prepare_cookies(self, cookies: Any) -> None:
        """No Cookie header from an empty jar (requests would still build a mock request to ask it)."""
        if isinstance(cookies, _NoCookies):
            self._cookies = cookies
        else:
            super().prepare_cookies(cookies)


class PlainSession(requests.Session):
    """See the module docstring: no netrc on requests nor on redirects, no cookie jar."""

    def __init__(self) -> None:
        super().__init__()
        self.auth = _NoAuth()
        self.cookies = _NoCookies()
        self._env: dict[tuple[Any, ...], dict[str, Any]] = {}
        #: when not None, the ``verify`` of every request, whatever the request or the environment says
        #: (``--insecure`` must beat ``REQUESTS_CA_BUNDLE``, which requests would otherwise prefer)
        self.pinned_verify: bool | str | None = None

    def prepare_request(self, request: requests.Request) -> requests.PreparedRequest:
        """requests' preparation without its cookie jars and generic setting merges, for a request with no
        cookies or query parameters of its own (the others take requests' own path)."""
        if request.cookies or request.params or self.params or not isinstance(request.method, str):
            return super().prepare_request(request)
        merged: CaseInsensitiveDict[Any] = CaseInsensitiveDict(self.headers)
        merged.update(request.headers or {})
        # (as requests' merge: a None value, the request's or the session's own, removes the header)
        headers = CaseInsensitiveDict([(k, v) for k, v in merged.items() if v is not None])
        p = _Prepared()
        p.prepare(method=request.method.upper(), url=request.url, files=request.files, data=request.data,
                  json=request.json, headers=headers, params=None,
                  auth=request.auth if request.auth is not None else self.auth, cookies=self.cookies,
                  hooks=merge_hooks(request.hooks, self.hooks))  # type: ignore[no-untyped-call]
        return p

    def merge_environment_settings(self, url: str | bytes | None, proxies: Any, stream: Any, verify: Any,
                                   cert: Any) -> Any:
        """requests' merge, with what the environment adds remembered per (scheme, host, options), and
        :attr:`pinned_verify` over any ``verify`` the environment brought."""
        merged = self._merged(url, proxies, stream, verify, cert)
        if self.pinned_verify is not None:
            merged["verify"] = self.pinned_verify
        return merged

    def _merged(self, url: str | bytes | None, proxies: Any, stream: Any, verify: Any, cert: Any) -> Any:
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
