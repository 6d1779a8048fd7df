"""Registry auth: docker ``config.json`` (``auths``, ``credHelpers``, ``credsStore``) and 401 challenges.

Basic challenges are answered from docker config; Bearer challenges with a
token from the challenge's realm, cached per store by (registry, scope).
"""

from __future__ import annotations

import base64
import os
import re
import subprocess
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from pathlib import Path

import requests

from acx_oci.errors import RegistryError, UsageError
from acx_oci.jsonio import loads

TOKEN_CACHE_MAX = 64
DEFAULT_TOKEN_SECONDS = 60  # the docker token spec's default when ``expires_in`` is absent
TOKEN_EXPIRY_MARGIN = 5.0
TOKEN_BODY_CAP = 1024 * 1024  # a JWT is a few KiB; some services add a refresh token

_TOKEN_RE = re.compile(r"[\x21-\x7e]{1,65536}")  # a bearer token: visible ASCII (a JWT, RFC 6750 b64token)
_CHALLENGE_PARAM = re.compile(r'(\w+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


def docker_config_path() -> Path:
    """``$DOCKER_CONFIG/config.json``, else ``~/.docker/config.json``: where docker and oras keep logins."""
    env = os.environ.get("DOCKER_CONFIG")
    base = Path(env) if env else Path.home() / ".docker"
    return base / "config.json"


def _config_keys(host: str) -> list[str]:
    """The spellings docker ``config.json`` uses for a registry host."""
    names = [host]
    if "localhost" in host:
        names.append(host.replace("localhost", "127.0.0.1"))
    elif "127.0.0.1" in host:
        names.append(host.replace("127.0.0.1", "localhost"))
    if host in ("docker.io", "registry-1.docker.io", "index.docker.io"):
        names = ["https://index.docker.io/v1/", "index.docker.io", "docker.io", "registry-1.docker.io"]
    out: list[str] = []
    for n in names:
        out += [n, f"https://{n}", f"http://{n}", f"https://{n}/v1/", f"https://{n}/v2/"]
    return out


@dataclass(frozen=True)
class Credentials:
    """Basic credentials, or an identity (refresh) token from a credential helper."""

    username: str = ""
    password: str = ""
    identity_token: str = ""

    def basic(self) -> str:
        """The ``Authorization: Basic`` value for these credentials."""
        return base64.b64encode(f"{self.username}:{self.password}".encode()).decode("ascii")


def _run_helper(helper: str, server: str) -> Credentials | None:
    binary = f"docker-credential-{helper}"
    try:
        proc = subprocess.run(
            [binary, "get"], input=server.encode(), capture_output=True, timeout=15, check=False
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise RegistryError(f"credential helper {binary} failed: {exc.__class__.__name__}") from None
    if proc.returncode != 0:
        return None  # helpers exit non-zero for "credentials not found"
    try:
        doc = loads(proc.stdout, "credential helper output", ijson=False)
        user, secret = str(doc.get("Username", "")), str(doc.get("Secret", ""))
    except (ValueError, AttributeError):
        raise RegistryError(f"credential helper {binary} printed something other than JSON") from None
    if user == "<token>":
        return Credentials(identity_token=secret)
    return Credentials(user, secret)


def load_credentials(host: str) -> Credentials | None:
    """Credentials for ``host`` from docker ``config.json`` (``auths``, ``credHelpers``, ``credsStore``)."""
    path = docker_config_path()
    try:
        cfg = loads(path.read_bytes(), "docker config", ijson=False)
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise UsageError(f"{path}: cannot read docker config ({exc.__class__.__name__})") from None
    if not isinstance(cfg, dict):
        raise UsageError(f"{path}: expected a JSON object")
    keys = _config_keys(host)
    helpers = cfg.get("credHelpers") or {}
    if isinstance(helpers, dict):
        for k in keys:
            if isinstance(helpers.get(k), str):
                return _run_helper(helpers[k], k)
    auths = cfg.get("auths") or {}
    if isinstance(auths, dict):
        for k in keys:
            entry = auths.get(k)
            if not isinstance(entry, dict):
                continue
            if isinstance(entry.get("identitytoken"), str) and entry["identitytoken"]:
                return Credentials(identity_token=entry["identitytoken"])
            if isinstance(entry.get("auth"), str) and entry["auth"]:
                try:
                    user, _, pw = base64.b64decode(entry["auth"]).decode("utf-8").partition(":")
                except (ValueError, UnicodeDecodeError):
                    raise UsageError(f"{path}: auths[{k!r}].auth is not base64 of user:password") from None
                return Credentials(user, pw)
            if isinstance(entry.get("username"), str) and isinstance(entry.get("password"), str):
                return Credentials(entry["username"], entry["password"])
    store = cfg.get("credsStore")
    if isinstance(store, str) and store:
        return _run_helper(store, keys[0] if host not in ("docker.io",) else "https://index.docker.io/v1/")
    return None


def parse_challenge(header: str) -> tuple[str, dict[str, str]]:
    """Split ``WWW-Authenticate`` into (scheme, params)."""
    scheme, _, rest = header.strip().partition(" ")
    params = {m.group(1).lower(): (m.group(2) if m.group(2) is not None else m.group(3)) for m in
              _CHALLENGE_PARAM.finditer(rest)}
    return scheme.lower(), params


class RegistryAuth:
    """The ``Authorization`` header one store sends, and the answer to its 401 challenges.

    ``host`` is the registry as spoken to (for messages and the token cache);
    ``config_host`` the name looked up in docker config (as the user wrote it).
    """

    def __init__(self, host: str, config_host: str) -> None:
        self.host = host
        self.config_host = config_host
        self.header: str | None = None
        self._lock = threading.Lock()
        self._credentials: Credentials | None = None
        self._loaded = False
        # Per store, not process-wide: a token is bound to the credentials that fetched it.
        # (registry, scope) -> (Authorization header, monotonic expiry); LRU-bounded.
        self._tokens: OrderedDict[tuple[str, str], tuple[str, float]] = OrderedDict()

    def credentials(self) -> Credentials | None:
        """The docker-config credentials for ``config_host``, looked up on first use (a helper may be slow) and kept."""
        if not self._loaded:
            self._credentials = load_credentials(self.config_host)
            self._loaded = True
        return self._credentials

    @property
    def has_credentials(self) -> bool:
        """Whether credentials were found; False until ``credentials()`` has looked (a 401 hint reads this)."""
        return self._credentials is not None

    def answer(self, challenge: str, sent: str | None, session: requests.Session,
               timeout: tuple[float, float]) -> None:
        """Answer a 401 challenge: Basic from docker config, or a Bearer token from the realm.

        ``sent`` is the header the refused request carried: a cached token
        equal to it is not offered again.
        """
        scheme, params = parse_challenge(challenge)
        with self._lock:
            creds = self.credentials()
            if scheme == "basic":
                if creds is None or not creds.username:
                    raise RegistryError(
                        f"registry {self.host}: authentication required; no credentials for it in "
                        f"{docker_config_path()} (docker login {self.config_host})"
                    )
                self.header = "Basic " + creds.basic()
                return
            if scheme != "bearer" or not params.get("realm"):
                raise RegistryError(f"registry {self.host}: unsupported authentication challenge {scheme!r}")
            key = (self.host, params.get("scope", ""))
            hit = self._tokens.get(key)
            if hit is not None and hit[0] != sent and hit[1] > time.monotonic():
                self._tokens.move_to_end(key)
                self.header = hit[0]
                return
            token, seconds = self._fetch_token(params, creds, session, timeout)
            self.header = "Bearer " + token
            self._tokens[key] = (self.header, time.monotonic() + max(0.0, seconds - TOKEN_EXPIRY_MARGIN))
            self._tokens.move_to_end(key)
            while len(self._tokens) > TOKEN_CACHE_MAX:
                self._tokens.popitem(last=False)

    def _read_token(self, resp: requests.Response) -> bytes:
        """The token response, at most :data:`TOKEN_BODY_CAP` bytes (decoded): the realm is the registry's to
        name, and a body read whole (``resp.json()``) is as long as whoever answers there likes."""
        buf = bytearray()
        for chunk in resp.iter_content(65536):
            buf += chunk
            if len(buf) > TOKEN_BODY_CAP:
                raise RegistryError(f"registry {self.host}: token response exceeds the {TOKEN_BODY_CAP}-byte limit")
        return bytes(buf)

    def _fetch_token(self, params: dict[str, str], creds: Credentials | None, session: requests.Session,
                     timeout: tuple[float, float]) -> tuple[str, float]:
        realm = params["realm"]
        query = {k: params[k] for k in ("service", "scope") if params.get(k)}
        try:
            if creds is not None and creds.identity_token:
                form = dict(query, grant_type="refresh_token", refresh_token=creds.identity_token,
                            client_id="acx-oci")
                resp = session.post(realm, data=form, timeout=timeout, stream=True)
            else:
                headers = {"Authorization": "Basic " + creds.basic()} if creds and creds.username else {}
                resp = session.get(realm, params=query, headers=headers, timeout=timeout, stream=True)
            try:
                if resp.status_code != 200:
                    raise RegistryError(f"registry {self.host}: token service answered HTTP {resp.status_code}"
                                        + ("" if creds else " (no credentials configured)"))
                body = self._read_token(resp)
            finally:
                resp.close()
        except requests.exceptions.RequestException as exc:
            raise RegistryError(f"registry {self.host}: token service {realm} failed ({exc.__class__.__name__})") \
                from None
        try:
            doc = loads(body, "token response", ijson=False)
            token = doc.get("token") or doc.get("access_token")
            expires = doc.get("expires_in")
        except (ValueError, AttributeError, RecursionError):
            token, expires = None, None
        if not isinstance(token, str) or not token:
            raise RegistryError(f"registry {self.host}: token service sent no token")
        if not _TOKEN_RE.fullmatch(token):  # it goes into a header: a '€' there died in http.client (latin-1)
            raise RegistryError(f"registry {self.host}: token service sent a token that is not visible ASCII")
        seconds = float(expires) if isinstance(expires, int | float) and expires > 0 else DEFAULT_TOKEN_SECONDS
        return token, seconds
