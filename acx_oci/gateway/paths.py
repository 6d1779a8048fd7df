"""The gateway's request router: one parse of the *raw* request path, checked once, forwarded as matched.

Why raw: the ASGI server hands the app a percent-decoded ``path``, and the
upstream (or any proxy in between) may normalise dot segments or decode
``%2F`` again. If the gateway decided on one spelling and forwarded another,
``/v2/x/../acx/weak/manifests/1`` would be judged as repository ``x/..acx/weak``
(or not covered at all) and served as ``acx/weak``. So the gateway accepts only
paths that *have* one reading:

* ASCII letters, digits and ``. _ - : = + ~ /`` only — no ``%`` at all (no name,
  tag, digest or upload id needs percent-encoding, so ``%2e``/``%2F``/``%252e``
  can only be an attempt to be read two ways), no backslash, no ``;``;
* no empty, ``.`` or ``..`` segment (a trailing ``/`` only where the API has one);
* the repository name matches the OCI distribution-spec grammar
  ``[a-z0-9]+((\\.|_|__|-+)[a-z0-9]+)*(/[a-z0-9]+((\\.|_|__|-+)[a-z0-9]+)*)*``
  (at most 255 characters), a tag ``[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}``, a
  digest ``sha256:<64 hex>`` or ``sha512:<128 hex>`` (lower case);
* the query's ``digest``, ``mount`` and ``from`` (each at most once) are a
  digest, a digest and a repository name; a ``mount`` without its ``from`` is
  dropped (the POST goes on as a plain upload: nothing is mounted unjudged).

Everything else is answered ``400`` (``NAME_INVALID``, ``DIGEST_INVALID``,
``TAG_INVALID``), or ``404`` (not a distribution API path; ``MANIFEST_UNKNOWN``
for a GET/HEAD/DELETE of a malformed tag, which no manifest can have) before
anything is forwarded; what is forwarded is the validated raw path byte for byte.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

from acx_oci.errors import RequestRefused

NAME_RE = re.compile(r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*)*")
TAG_RE = re.compile(r"[a-zA-Z0-9_][a-zA-Z0-9._-]{0,127}")
DIGEST_RE = re.compile(r"sha256:[a-f0-9]{64}|sha512:[a-f0-9]{128}")
_SAFE_PATH_RE = re.compile(r"[A-Za-z0-9._\-:=+~/]*")
_UPLOAD_ID_RE = re.compile(r"[A-Za-z0-9._\-=+~]{1,256}")
MAX_NAME = 255
MAX_PATH = 2048
MAX_QUERY = 8192


def refused(status: int, code: str, message: str) -> RequestRefused:
    """The refusal to raise: (HTTP status, OCI error code, one-line message)."""
    return RequestRefused(message, status, code)


@dataclass(frozen=True)
class ApiPath:
    """One distribution-API request, as matched (``raw`` is what is forwarded)."""

    raw: str          # the validated raw path, forwarded as is
    kind: str         # base | catalog | tags | manifests | blobs | uploads | upload | referrers
    name: str = ""    # repository
    ref: str = ""     # tag or digest (manifests), digest (blobs, referrers), session id (upload)
    query: str = ""   # the raw query string, forwarded as is
    digest: str | None = None   # ?digest= (upload PUT / monolithic POST)
    mount: str | None = None    # ?mount=
    mount_from: str | None = None  # ?from=


def target(api: ApiPath) -> str:
    """What is forwarded: the raw path and query exactly as the router matched them."""
    return api.raw + (f"?{api.query}" if api.query else "")


def is_digest(value: str) -> bool:
    """``sha256:<64 hex>`` or ``sha512:<128 hex>`` (lower case): the only digests the gateway passes on."""
    return DIGEST_RE.fullmatch(value) is not None


def check_name(name: str) -> str:
    """``name`` if it matches the OCI name grammar (at most 255 characters); else a 400 ``NAME_INVALID``."""
    if len(name) > MAX_NAME or NAME_RE.fullmatch(name) is None:
        raise refused(400, "NAME_INVALID", f"repository name {name[:80]!r} does not match the OCI name grammar "
                                               "(lower-case components separated by '/', at most 255 characters)")
    return name


def check_digest_value(value: str, what: str) -> str:
    """``value`` if it is a digest; else a 400 ``DIGEST_INVALID`` naming ``what`` part of the request it was."""
    if not is_digest(value):
        raise refused(400, "DIGEST_INVALID", f"{what}: expected sha256:<64 hex> or sha512:<128 hex>, "
                                                 f"found {value[:80]!r}")
    return value


def _check_reference(ref: str, method: str) -> str:
    if ":" in ref:
        return check_digest_value(ref, "manifest reference")
    if TAG_RE.fullmatch(ref) is None:
        shown = f"tag {ref[:80]!r} does not match [a-zA-Z0-9_][a-zA-Z0-9._-]{{0,127}}"
        if method in ("GET", "HEAD", "DELETE"):
            # no manifest can have such a tag: the spec's answer is "unknown" (still never forwarded)
            raise refused(404, "MANIFEST_UNKNOWN", f"{shown}, so no manifest has it")
        raise refused(400, "TAG_INVALID", shown)
    return ref


def _decode(raw: bytes, what: str, limit: int) -> str:
    if len(raw) > limit:
        raise refused(414, "NAME_INVALID", f"request {what} longer than {limit} bytes")
    try:
        return raw.decode("ascii")
    except UnicodeDecodeError:
        raise refused(400, "NAME_INVALID", f"request {what} is not ASCII") from None


def raw_path_of(scope: Any) -> bytes:
    """The path as the client sent it (servers without ``raw_path`` give the decoded one: still checked)."""
    raw = scope.get("raw_path")
    if isinstance(raw, bytes | bytearray):
        return bytes(raw).split(b"?", 1)[0]
    return str(scope.get("path", "")).encode("utf-8", "surrogateescape")


def _query(raw_query: bytes) -> tuple[str, dict[str, str], list[tuple[str, str]]]:
    query = _decode(raw_query, "query", MAX_QUERY)
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=False, errors="strict")
    except (UnicodeDecodeError, ValueError):
        raise refused(400, "DIGEST_INVALID", "query parameters are not valid UTF-8") from None
    picked: dict[str, str] = {}
    for key, value in pairs:
        if key in ("digest", "mount", "from"):
            if key in picked:
                raise refused(400, "DIGEST_INVALID", f"query parameter {key!r} given more than once")
            picked[key] = value
    return query, picked, pairs


def parse_request(raw_path: bytes, raw_query: bytes = b"", method: str = "GET") -> ApiPath:
    """Match one distribution-API request or raise :class:`~acx_oci.errors.RequestRefused` (module docstring)."""
    path = _decode(raw_path, "path", MAX_PATH)
    if _SAFE_PATH_RE.fullmatch(path) is None:
        bad = next(c for c in path if _SAFE_PATH_RE.fullmatch(c) is None)
        raise refused(400, "NAME_INVALID", f"request path contains {bad!r}: percent-encoding and other "
                                               "characters outside names, tags and digests are refused")
    if path in ("/v2", "/v2/"):
        return ApiPath(path, "base", query=_query(raw_query)[0])
    if not path.startswith("/v2/"):
        raise refused(404, "NAME_UNKNOWN", "not a distribution API path")
    rest = path[len("/v2/"):]
    trailing = rest.endswith("/")
    segments = (rest[:-1] if trailing else rest).split("/")
    if any(s in ("", ".", "..") for s in segments):
        raise refused(400, "NAME_INVALID", "request path has an empty, '.' or '..' segment")
    query, params, pairs = _query(raw_query)
    if segments == ["_catalog"] and not trailing:
        return ApiPath(path, "catalog", query=query)
    api = _match(segments, trailing)
    if api is None:
        raise refused(404, "NAME_UNKNOWN", "not a distribution API path")
    kind, name_parts, ref = api
    name = check_name("/".join(name_parts))
    if kind == "manifests":
        _check_reference(ref, method)
    elif kind in ("blobs", "referrers"):
        check_digest_value(ref, f"{kind[:-1]} digest")
    elif kind == "upload" and _UPLOAD_ID_RE.fullmatch(ref) is None:
        raise refused(400, "BLOB_UPLOAD_INVALID", "upload session id has characters outside [A-Za-z0-9._-=+~]")
    digest, mount, mount_from = params.get("digest"), params.get("mount"), params.get("from")
    if digest is not None:
        check_digest_value(digest, "digest= parameter")
    if mount is not None:
        check_digest_value(mount, "mount= parameter")
    if mount_from is not None:
        check_name(mount_from)
    if mount is not None and mount_from is None:
        # the OCI spec lets a registry mount a from-less blob out of *any* repository, covered ones included, and
        # only a mount that names its source can be judged; a registry may also answer any mount with a plain
        # upload session, so this one is forwarded as that: the POST without its mount= (re-encoded from the
        # parsed pairs, so no spelling of the key survives)
        query, mount = urlencode([(k, v) for k, v in pairs if k != "mount"]), None
    return ApiPath(path, kind, name, ref, query, digest, mount, mount_from)


def _match(segments: list[str], trailing: bool) -> tuple[str, list[str], str] | None:
    """(kind, name segments, last segment) for the API's fixed suffixes; None for anything else."""
    n = len(segments)
    if trailing:
        if n >= 3 and segments[-2:] == ["blobs", "uploads"]:
            return "uploads", segments[:-2], ""
        return None
    if n >= 3 and segments[-2:] == ["tags", "list"]:
        return "tags", segments[:-2], ""
    if n >= 3 and segments[-2:] == ["blobs", "uploads"]:
        return "uploads", segments[:-2], ""
    if n >= 4 and segments[-3:-1] == ["blobs", "uploads"]:
        return "upload", segments[:-3], segments[-1]
    if n >= 3 and segments[-2] in ("manifests", "blobs", "referrers"):
        return segments[-2], segments[:-2], segments[-1]
    return None


def manifest_body_digests(doc: Any) -> list[str]:
    """Every descriptor digest a manifest or index body names (config, layers, manifests, subject), as found."""
    if not isinstance(doc, dict):
        return []
    found: list[Any] = []
    for key in ("config", "subject"):
        d = doc.get(key)
        if isinstance(d, dict) and "digest" in d:
            found.append(d["digest"])
    for key in ("layers", "manifests", "blobs"):
        items = doc.get(key)
        if isinstance(items, list):
            found.extend(d["digest"] for d in items if isinstance(d, dict) and "digest" in d)
    return [d if isinstance(d, str) else repr(d) for d in found]
